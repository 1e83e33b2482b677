"""The invariants' table in the summary and the report (no phase kinds: the runner checks after every phase).

The checks themselves live in `harness.invariants`; this package only tells the summary and the
report how to read the `invariants` table they leave: `invariants.failed` and `invariants.unread`
and `invariants.unsettled` (a status behind objects that kept changing) per case, and a section
naming every failed check's objects.
"""

from __future__ import annotations

import html

from harness.drivers import contract
from harness.invariants import reading


def summary_metrics(tables: contract.Tables, case: str) -> list[contract.Metric]:
    table = tables.get(reading.TABLE)
    if table is None or table.empty or "case" not in table:
        return []
    rows = table[table["case"] == case]
    if rows.empty:
        return []
    return [contract.Metric("invariants.failed", float((rows["status"] == reading.FAILED).sum()), "checks", "lower"),
            contract.Metric("invariants.unread", float((rows["status"] == reading.UNREAD).sum()), "checks", "lower"),
            contract.Metric("invariants.unsettled", float((rows["status"] == reading.UNSETTLED).sum()), "checks", "lower")]


def report_section(tables: contract.Tables, context: contract.ReportContext) -> contract.ReportSection | None:
    table = tables.get(reading.TABLE)
    if table is None or table.empty:
        return None
    bad = table[table["status"] != reading.PASSED]
    passed = int((table["status"] == reading.PASSED).sum())
    phases = ", ".join(html.escape(str(p)) for p in dict.fromkeys(table["phase"]))
    head = f"<h2>Invariants</h2><p>{passed} checks passed, {reading.tally(table)} (checked after: {phases}).</p>"
    if bad.empty:
        return contract.ReportSection(head)
    cells = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(row.get(col, '')))}</td>"
                         for col in ("case", "phase", "check", "status", "objects", "detail")) + "</tr>"
        for row in bad.head(200).to_dict("records"))
    return contract.ReportSection(head + "<table><tr><th>case</th><th>phase</th><th>check</th><th>status</th>"
                                  f"<th>objects</th><th>detail</th></tr>{cells}</table>")


DRIVER = contract.DriverSpec(name="invariants", phases=(), tables=(reading.TABLE,), run_phase=lambda context: None,
                             summary_metrics=summary_metrics, report_section=report_section)
