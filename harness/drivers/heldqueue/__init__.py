"""The held-queue driver: the scheduler on a real kube-apiserver holding N pending Workloads in a
ClusterQueue of zero quota, ours beside real Kueue (a sweep over the scheduler), then the quota raised.

- `phases`: HeldQueuePhase (`kind: held-queue`).
- `filling`: the Workloads, straight into etcd or POSTed, and their size in etcd.
- `reading`: readers of a visibility page through kube-apiserver, with churn beside them (aiohttp).
- `running`: the run function: fill, every Workload processed (bounded), idle, read arms, admissions.
- `figures`: latencies, counters, milestones, goals (pure); `tabulating`: the tables (pure);
  `summarising`: summary metrics and ours / Kueue's (pure); `reporting`: the report section.
"""

from harness.drivers import contract
from harness.drivers.heldqueue import phases, running, summarising, tabulating


def _report(tables: contract.Tables, context: contract.ReportContext) -> contract.ReportSection | None:
    # imported here: matplotlib takes about a second to import, and only the report draws
    from harness.drivers.heldqueue import reporting

    return reporting.section(tables)


DRIVER = contract.DriverSpec(name="held-queue", phases=phases.PHASES, run_phase=running.run,
                             tables=tabulating.TABLES, summary_metrics=summarising.metrics, report_section=_report)
