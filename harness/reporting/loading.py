"""Run folders read for a report: records, tables (case ids prefixed by run id when several runs),
one row per case saying its pivot column, and each run's summary as the pivot sees it.

The drivers are handed in (the caller asks the registry: this layer lists no driver) and travel with
the loaded runs, so that the report asks the same drivers everything."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from harness.drivers import contract
from harness.reporting import pivoting
from harness.results import runs, summaries, tables as tidy

CASE_COLUMNS = ["id", "key", "strategy", "pending", "status", "error"]


@dataclass(frozen=True, slots=True)
class Loaded:
    records: list[runs.RunRecord]
    tables: dict[str, pd.DataFrame]
    cases: pd.DataFrame
    """id, key (the pivot column's key), strategy, pending, status, error."""
    views: list[pivoting.RunView]
    drivers: tuple[contract.Driver, ...]
    """The drivers whose summaries, counts, figures and sections the report shows."""


def view_of(record: runs.RunRecord, summary: summaries.Summary) -> pivoting.RunView:
    """A run's summary with its points in the order the run swept them."""
    strategy_default = (record.scenario.get("scheduler") or {}).get("strategy", "")
    points, strategies = [], {}
    for case in record.cases:
        if case.point not in strategies:
            points.append(case.point)
            strategies[case.point] = str(runs.param(case.params, "scheduler.strategy", strategy_default) or "")
    for entry in summary.entries.values():  # a summary read without its record still shows every point
        if entry.point not in strategies and not entry.metric.startswith("ratio."):
            points.append(entry.point)
            strategies[entry.point] = ""
    return pivoting.RunView(record.run_id, summary, tuple(points), strategies)


def _summary(folder: Path, record: runs.RunRecord, own: dict[str, pd.DataFrame],
             drivers: Sequence[contract.Driver]) -> summaries.Summary:
    """summary.json as the run wrote it when its figures are computed as this kqbench computes them
    (`summaries.SAME_FIGURES_SINCE`); otherwise computed again from the run's tables (an older summary.json
    may lack intervals or count differently), or read as it is."""
    path = folder / "summary.json"
    if path.is_file():
        summary = summaries.read(path)
        if summary.schema_version >= summaries.SAME_FIGURES_SINCE or not own:
            return summary
    return summaries.summarise(record, own, drivers)


def load(folders: list[Path], drivers: Iterable[contract.Driver]) -> Loaded:
    drivers = tuple(drivers)
    records, parts, cases, views = [], {}, [], []
    for folder in folders:
        record = runs.read_run(Path(folder))
        records.append(record)
        own = tidy.read(Path(folder))
        prefix = f"{record.run_id}/" if len(folders) > 1 else ""
        for name, frame in own.items():
            if "case" in frame.columns:
                frame = frame.assign(case=prefix + frame["case"].astype(str))
            parts.setdefault(name, []).append(frame)
        views.append(view_of(record, _summary(Path(folder), record, own, drivers)))
        strategy_default = (record.scenario.get("scheduler") or {}).get("strategy", "")
        for case in record.cases:
            cases.append({"id": prefix + case.id, "key": f"{record.run_id} {case.point}",
                          "strategy": runs.param(case.params, "scheduler.strategy", strategy_default),
                          "pending": pending_of(record.scenario, case.params, drivers),
                          "status": case.status, "error": case.error})
    tables = {name: pd.concat(frames, ignore_index=True) for name, frames in parts.items()}
    return Loaded(records, tables, pd.DataFrame(cases, columns=CASE_COLUMNS), views, drivers)


def pending_of(scenario: dict, params: dict, drivers: Iterable[contract.Driver]) -> int:
    """Workloads a case held, as the first driver that says it tells (0 when none does)."""
    return next((n for driver in drivers if (n := driver.case_pending(scenario, params)) is not None), 0)


def request_counts(tables: dict[str, pd.DataFrame], cases: pd.DataFrame,
                   drivers: Iterable[contract.Driver]) -> dict[tuple[str, str], int]:
    """Requests behind each request-percentile metric per column: (metric, column key) -> count."""
    if cases.empty:
        return {}
    key_of = dict(zip(cases["id"], cases["key"]))
    out: dict[tuple[str, str], int] = {}
    for driver in drivers:
        for (metric, case), requests in driver.request_counts(tables).items():
            key = key_of.get(case)
            if key is not None:
                out[(metric, key)] = out.get((metric, key), 0) + int(requests)
    return out
