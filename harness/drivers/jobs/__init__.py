"""The jobs driver: batch/v1 Jobs through the scheduler under test onto KWOK nodes, with the real
job controller, kube-scheduler and kwok pod stages doing what they do in a real cluster.

- `phases`: JobsPhase (`kind: jobs`), which needs a cluster with `jobs: true`.
- `plans`: the arrival schedule (kueue-baseline's, per ClusterQueue and class) and each Job (pure).
- `recording`: watch events -> per-Job and per-pod first times (pure).
- `generating`: what harness.load.creating creates (Jobs) and watches (Jobs, pods, Workloads).
- `figures`: pods per second, Job and pod latencies, concurrency (pure); `tabulating`: tables;
  `summarising`: summary metrics; `resources`: API load per resource and CPU per process from the
  run's measurements; `reporting`: the report section.
"""

from harness.drivers import contract
from harness.drivers.jobs import phases, plans, running, summarising, tabulating
from harness.load import arrivals


def _report(tables: contract.Tables, context: contract.ReportContext) -> contract.ReportSection | None:
    # imported here: matplotlib takes about a second to import, and only the report draws
    from harness.drivers.jobs import reporting

    return reporting.section(tables)


DRIVER = contract.DriverSpec(name="jobs", phases=phases.PHASES, run_phase=running.run,
                             tables=(tabulating.FIGURES_TABLE, tabulating.RATES_TABLE, tabulating.JOBS_TABLE,
                                     tabulating.PODS_TABLE),
                             summary_metrics=summarising.metrics, report_section=_report,
                             mix_fields=(arrivals.ArrivalFields, plans.JobMixFields))
