"""The faults' table in the summary and the report (no phase kinds: faults are planned per phase in
the scenario's `faults:` list and injected by harness.faults while the phase runs).

Summary per case: `faults.recovery_seconds[<kind>]` (the slowest probe, from the component being
back), `faults.unrecovered` (faults not injected or not recovered within their timeout), and what
the load saw from injection to recovery: `faults.client_errors[<kind>]`, `faults.window_p99_ms[<kind>]`
(from table `load_history`, whose `t` counts from the load's start, about the phase's start).
"""

from __future__ import annotations

import html

from harness.drivers import contract
from harness.faults import recovering
from harness.load import results as loadresults


def summary_metrics(tables: contract.Tables, case: str) -> list[contract.Metric]:
    table = tables.get(recovering.TABLE)
    if table is None or table.empty or "case" not in table:
        return []
    rows = table[table["case"] == case]
    if rows.empty:
        return []
    out = [contract.Metric(f"faults.recovery_seconds[{kind}]", float(group["recovery_seconds"].max()), "s", "lower")
           for kind, group in rows[rows["recovered"].astype(bool)].groupby("kind")]
    out.append(contract.Metric("faults.unrecovered", float((~rows["recovered"].astype(bool)).sum()), "faults", "lower"))
    load = tables.get(loadresults.HISTORY_TABLE)
    if load is not None and not load.empty and "case" in load:
        load = load[load["case"] == case]
        for row in rows.to_dict("records"):
            window = recovering.window_of(row)
            if window is None:
                continue
            seen = recovering.window_load(load, row["phase"], window)
            out.append(contract.Metric(f"faults.client_errors[{row['kind']}]", float(seen["failures"]), "requests", "lower"))
            if seen["p99_ms"] == seen["p99_ms"]:
                out.append(contract.Metric(f"faults.window_p99_ms[{row['kind']}]", seen["p99_ms"], "ms", "lower"))
    return out


def report_section(tables: contract.Tables, context: contract.ReportContext) -> contract.ReportSection | None:
    table = tables.get(recovering.TABLE)
    if table is None or table.empty:
        return None
    columns = [c for c in ("case", "phase", "kind", "at_seconds", "down_seconds", "apiserver_seconds", "admitting_seconds",
                           "positions_seconds", "recovery_seconds", "recovered", "error") if c in table]

    def cell(value) -> str:
        return f"{value:.1f}" if isinstance(value, float) and value == value else html.escape(str(value))

    rows = "".join("<tr>" + "".join(f"<td>{cell(row[c])}</td>" for c in columns) + "</tr>"
                   for row in table[columns].to_dict("records"))
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    return contract.ReportSection("<h2>Faults</h2><p>Seconds from the component being back until each probe "
                                  f"first succeeded.</p><table><tr>{head}</tr>{rows}</table>")


DRIVER = contract.DriverSpec(name="faults", phases=(), tables=(recovering.TABLE,), run_phase=lambda context: None,
                             summary_metrics=summary_metrics, report_section=report_section)
