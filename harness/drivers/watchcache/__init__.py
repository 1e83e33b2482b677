"""The watch-cache driver: populate a cluster, list it in one mode per phase, tabulate per mode x arm.

- `phases`: PopulatePhase, ListPhase.
- `populating`: N namespaces x M ConfigMaps of S bytes, posted concurrently.
- `listing`: the run function (populate, or one Locust run of ModeListers per list phase).
- `tabulating`: one row per (case, list phase) with latency, where lists were served, apiserver RSS (pure).
- `reporting`: the report section (table, figure, watchcache.csv / .json next to report.html).
"""

from harness.drivers import contract
from harness.load import results
from harness.drivers.watchcache import listing, phases


def _report(tables: contract.Tables, context: contract.ReportContext) -> contract.ReportSection | None:
    # imported here: matplotlib takes about a second to import, and only the report draws
    from harness.drivers.watchcache import reporting

    return reporting.section(tables, context.out_dir)


DRIVER = contract.DriverSpec(name="watchcache", phases=phases.PHASES, run_phase=listing.run,
                             tables=(listing.POPULATE_TABLE, listing.LIST_PHASES_TABLE, *results.TABLES),
                             report_section=_report)
