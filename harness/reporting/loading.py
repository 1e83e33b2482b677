"""Run folders read for a report: records, tables (case ids prefixed by run id when several runs),
one row per case saying its pivot column, and each run's summary as the pivot sees it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from harness.drivers import registry
from harness.reporting import pivoting
from harness.results import runs, summaries, tables as tidy
from loadtests import naming, settings as load_settings

CASE_COLUMNS = ["id", "key", "strategy", "pending", "status", "error"]
REQUEST_METRICS = (("load.position_query_", load_settings.QUERY_MODES), ("load.bystander_", ("bystander",)))
"""Summary metrics that are percentiles over requests, with the request modes behind them."""


@dataclass(frozen=True, slots=True)
class Loaded:
    records: list[runs.RunRecord]
    tables: dict[str, pd.DataFrame]
    cases: pd.DataFrame
    """id, key (the pivot column's key), strategy, pending, status, error."""
    views: list[pivoting.RunView]


def _param(params: dict, dotted: str, default):
    """A case parameter given flat (`scheduler.strategy`) or nested (`{scheduler: {strategy}}`)."""
    if dotted in params:
        return params[dotted]
    head, _, rest = dotted.partition(".")
    value = params.get(head)
    if isinstance(value, dict) and rest:
        return _param(value, rest, default)
    return default


def view_of(record: runs.RunRecord, summary: summaries.Summary) -> pivoting.RunView:
    """A run's summary with its points in the order the run swept them."""
    strategy_default = (record.scenario.get("scheduler") or {}).get("strategy", "")
    points, strategies = [], {}
    for case in record.cases:
        if case.point not in strategies:
            points.append(case.point)
            strategies[case.point] = str(_param(case.params, "scheduler.strategy", strategy_default) or "")
    for entry in summary.entries.values():  # a summary read without its record still shows every point
        if entry.point not in strategies and not entry.metric.startswith("ratio."):
            points.append(entry.point)
            strategies[entry.point] = ""
    return pivoting.RunView(record.run_id, summary, tuple(points), strategies)


def _summary(folder: Path, record: runs.RunRecord, own: dict[str, pd.DataFrame]) -> summaries.Summary:
    """summary.json as the run wrote it when it is of this kqbench's format; otherwise computed again from
    the run's tables (an older summary.json may lack intervals or count differently), or read as it is."""
    path = folder / "summary.json"
    if path.is_file():
        summary = summaries.read(path)
        if summary.schema_version == summaries.SCHEMA_VERSION or not own:
            return summary
    return summaries.summarise(record, own, registry.drivers())


def load(folders: list[Path]) -> Loaded:
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
        views.append(view_of(record, _summary(Path(folder), record, own)))
        phases = record.scenario.get("phases") or {}
        pending_default = next((p.get("pending", 0) for p in phases.values() if p.get("kind") == "fill"), 0)
        strategy_default = (record.scenario.get("scheduler") or {}).get("strategy", "")
        for case in record.cases:
            cases.append({"id": prefix + case.id, "key": f"{record.run_id} {case.point}",
                          "strategy": _param(case.params, "scheduler.strategy", strategy_default),
                          "pending": _param(case.params, "phases.fill.pending", pending_default) or 0,
                          "status": case.status, "error": case.error})
    tables = {name: pd.concat(frames, ignore_index=True) for name, frames in parts.items()}
    return Loaded(records, tables, pd.DataFrame(cases, columns=CASE_COLUMNS), views)


def request_counts(tables: dict[str, pd.DataFrame], cases: pd.DataFrame) -> dict[tuple[str, str], int]:
    """Requests behind each request-percentile metric per column: (metric, column key) -> count."""
    totals = tables.get("load_totals")
    if totals is None or totals.empty or cases.empty:
        return {}
    modes = totals["name"].map(lambda n: naming.parse(n).mode)
    key_of = dict(zip(cases["id"], cases["key"]))
    out: dict[tuple[str, str], int] = {}
    for prefix, wanted in REQUEST_METRICS:
        picked = totals[modes.isin(wanted)]
        for case, requests in picked.groupby("case")["requests"].sum().items():
            key = key_of.get(case)
            if key is None:
                continue
            for stat in ("p50_ms", "p99_ms"):
                out[(f"{prefix}{stat}", key)] = out.get((f"{prefix}{stat}", key), 0) + int(requests)
    return out
