"""README table of a faults run: each fault's times (tables/faults.parquet), what the load saw from its
injection to its recovery (tables/load_history.parquet, by the faults' own window rule) and the
invariants checked right after it (tables/invariants.parquet, phase `<phase>/after-<kind>`).

Spec of a `faults` block: `run: FOLDER` (relative to the README).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.faults import recovering
from harness.readmes import inputs, markdown

HEADER = ["fault (planned at)", "injected at", "down", "kube-apiserver ready", "scheduler admitting",
          "positions served", "recovery", "client errors in window", "worst p99 in window", "invariants right after"]


def _table(run: Path, name: str) -> pd.DataFrame:
    path = run / "tables" / f"{name}.parquet"
    if not path.is_file():
        raise inputs.missing(path)
    return pd.read_parquet(path)


def _seconds(value) -> str:
    return "-" if value is None or value != value else f"{value:.1f} s"


def faults(spec: dict, folder: Path) -> str:
    run = folder / spec["run"]
    table, load, invariants = _table(run, recovering.TABLE), _table(run, "load_history"), _table(run, "invariants")
    rows = []
    for fault in table.to_dict("records"):
        load_of_case = load[load["case"] == fault["case"]]
        window = recovering.window_of(fault)
        seen = recovering.window_load(load_of_case, fault["phase"], window) if window is not None else None
        checks = invariants[(invariants["case"] == fault["case"])
                            & (invariants["phase"] == f"{fault['phase']}/after-{fault['kind']}")]
        passed = int((checks["status"] == "passed").sum())
        rows.append([
            f"{fault['kind']} ({fault['at_seconds']:.0f} s)", _seconds(fault["injected_in_phase"]),
            _seconds(fault["down_seconds"]), _seconds(fault["apiserver_seconds"]), _seconds(fault["admitting_seconds"]),
            _seconds(fault["positions_seconds"]), _seconds(fault["recovery_seconds"]) if fault["recovered"] else "not recovered",
            "-" if seen is None else markdown.number(seen["failures"]),
            "-" if seen is None or seen["p99_ms"] != seen["p99_ms"] else f"{markdown.number(seen['p99_ms'])} ms",
            f"{passed}/{len(checks)} passed" if len(checks) else "-"])
    return markdown.table(HEADER, rows)
