"""The workload-loading driver: N pending Workloads by POSTs or by bulk loading into etcd, and what each costs.

- `phases`: LoadWorkloadsPhase (`kind: load-workloads`): how (posts, bulk), how many, into which LocalQueue.
- `loading`: the run function (harness.kube.posting or harness.workloads.bulkloading, then the scheduler's gauge).
- `tabulating`: its tables and summary metrics (pure); `reporting`: the report section.
"""

from harness.drivers import contract
from harness.drivers.workloadloading import loading, phases, reporting, tabulating

DRIVER = contract.DriverSpec(name="workloadloading", phases=phases.PHASES, run_phase=loading.run,
                             tables=tabulating.TABLES, summary_metrics=tabulating.metrics,
                             report_section=lambda tables, context: reporting.section(tables))
