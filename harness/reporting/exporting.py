"""Machine-readable exports of a run (pure): perfdash PerfData JSON and JUnit XML of SLO checks.

PerfData is what kubernetes/perf-tests' perfdash reads: {version, dataItems: [{data: {Perc50: ..},
unit, labels}]}, all items with the same labels sharing buckets and unit.
"""

from __future__ import annotations

from collections.abc import Iterable
from xml.etree import ElementTree as ET

import orjson
import pandas as pd

from harness.drivers import contract
from harness.metrics import slo as slo_rules

PERFDATA_VERSION = "v1"


def perfdata(tables: dict[str, pd.DataFrame], run_id: str, drivers: Iterable[contract.Driver]) -> dict:
    """The drivers' items (client latencies per request name), then one per SLO check (apiserver), in
    perfdash's shape."""
    items = [item for driver in drivers for item in driver.perfdata(tables, run_id)]
    slo = tables.get("slo")
    if slo is not None and not slo.empty:
        for _, row in slo.iterrows():
            items.append({"data": {"Perc99": float(row["p99_seconds"]) * 1000.0}, "unit": "ms",
                          "labels": {"Metric": "APIResponsiveness", "Verb": str(row["verb"]),
                                     "Resource": str(row["resource"]), "Subresource": str(row["subresource"]),
                                     "Scope": str(row["scope"]), "Case": str(row["case"]), "Phase": str(row["phase"]),
                                     "Count": str(int(row["count"])), "RunID": run_id}})
    return {"version": PERFDATA_VERSION, "dataItems": items}


def junit(tables: dict[str, pd.DataFrame], run_id: str) -> bytes:
    """One testcase per SLO verdict; a failed check carries its p99 and threshold, one over too few
    requests is skipped (insufficient samples)."""
    slo = tables.get("slo")
    suite = ET.Element("testsuite", name=f"kqbench-slo-{run_id}")
    failures = 0
    rows = [] if slo is None else list(slo.to_dict("records"))
    for row in rows:
        name = f"{row['verb']} {row['resource']}{'/' + row['subresource'] if row['subresource'] else ''} {row['scope']}"
        case = ET.SubElement(suite, "testcase", classname=f"{row['case']}.{row['phase']}", name=name,
                             time=f"{float(row['p99_seconds']):.6f}")
        if not slo_rules.sufficient(float(row.get("count", slo_rules.MIN_COUNT))):
            ET.SubElement(case, "skipped", message=f"insufficient samples: {float(row['count']):.0f} requests "
                                                    f"< {slo_rules.MIN_COUNT}")
        elif not bool(row["passed"]):
            failures += 1
            ET.SubElement(case, "failure", message=f"p99 {float(row['p99_seconds']):.3f}s > {float(row['threshold_seconds']):.3f}s",
                          type=str(row["kind"]))
    suite.set("tests", str(len(rows)))
    suite.set("failures", str(failures))
    if not rows:
        ET.SubElement(ET.SubElement(suite, "testcase", classname="slo", name="no SLO checks"), "skipped",
                      message="not measured in this run")
        suite.set("tests", "1")
    return ET.tostring(suite, encoding="utf-8", xml_declaration=True)


def labels_of(text: str) -> dict:
    return orjson.loads(text) if text else {}
