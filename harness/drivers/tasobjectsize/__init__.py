"""The TAS object-size driver: how big a topology assignment gets in etcd, and what an implementation does
with a Workload whose admission etcd refuses.

- `phases`: ObjectSizePhase (`kind: tas-object-size`): pod set sizes, bounds. The cluster (one-CPU nodes in
  blocks of racks, their name style, bulk-loaded, etcd's request limit) and the queues (a Topology, its TAS
  flavor, one ClusterQueue holding every node's CPU) are the scenario's own sections.
- `asking`: the Workload it creates and what its status says (pure).
- `counting`: kube-apiserver's answers to workloads/status writes by code, from /metrics (pure).
- `modelling`: the assignment's size in each encoding, the model beside the measurement (pure).
- `measuring`: the run function (create, wait, read etcd and the API, watch, delete).
- `tabulating`: its tables (pure); `summarising`: summary metrics and ours / Kueue's; `reporting`: the section.
"""

from harness.drivers import contract
from harness.drivers.tasobjectsize import measuring, phases, summarising, tabulating


def _report(tables: contract.Tables, context: contract.ReportContext) -> contract.ReportSection | None:
    # imported here: matplotlib takes about a second to import, and only the report draws
    from harness.drivers.tasobjectsize import reporting

    return reporting.section(tables)


DRIVER = contract.DriverSpec(name="tasobjectsize", phases=phases.PHASES, run_phase=measuring.run,
                             tables=tabulating.TABLES, summary_metrics=summarising.metrics, report_section=_report)
