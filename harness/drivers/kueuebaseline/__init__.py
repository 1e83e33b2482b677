"""The kueue-baseline driver: Kueue's own scheduler performance test (test/performance/scheduler,
`baseline` config) on our cluster, against the scheduler under test.

- `phases`: KueueBaselinePhase (`kind: kueue-baseline`).
- `plans`: the labels on its Workloads (the creation schedule is harness.load.arrivals, shared with jobs).
- `figures`: wall time, ClusterQueue usage and time to admission per class, defined as Kueue's
  runner/recorder and checker define them, next to Kueue's published numbers (pure).
- `generating`: what harness.load.creating creates (bare Workloads) and watches; marks each Finished
  once its runtime has elapsed after admission (the I/O edge).
- `declaring`: what each Workload really runs and what it declares (mix fields `declared_runtime_factor`,
  `runtime_distribution`, `runtime_sigma`);
- `reading`: the expected admission times read while the phase runs (`estimates_every_seconds`);
  `etascoring`: those scored against the real admissions (pure); `etareporting`: their report part;
- `running`: the run function; `tabulating`: figures as tables; `summarising`: summary metrics;
  `reporting`: the report section.
"""

from harness.drivers import contract
from harness.drivers.kueuebaseline import declaring, phases, running, summarising, tabulating
from harness.load import arrivals


def _report(tables: contract.Tables, context: contract.ReportContext) -> contract.ReportSection | None:
    # imported here: matplotlib takes about a second to import, and only the report draws
    from harness.drivers.kueuebaseline import reporting

    return reporting.section(tables, context.cpus)


DRIVER = contract.DriverSpec(name="kueue-baseline", phases=phases.PHASES, run_phase=running.run,
                             tables=(tabulating.FIGURES_TABLE, tabulating.CLASSES_TABLE, tabulating.WORKLOADS_TABLE,
                                     tabulating.EVICTIONS_TABLE, tabulating.ESTIMATES_TABLE,
                                     tabulating.ADMISSIONS_TABLE, tabulating.ESTIMATE_READS_TABLE),
                             summary_metrics=summarising.metrics, report_section=_report,
                             mix_fields=(arrivals.ArrivalFields, declaring.RuntimeFields))
