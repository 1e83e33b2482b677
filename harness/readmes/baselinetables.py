"""README tables of kueue-baseline runs, from one run folder's `tables/kueue_baseline.csv` (every case's
figures) and `summary.json` (the ratios ours / Kueue with their intervals over the repeats).

Spec of a `kueue-baseline` block (paths relative to the README):

    run: kueue-baseline-full-paced
    columns: {ours: "implementation=reference,min_cycle_seconds=0", Kueue: "implementation=kueue,min_cycle_seconds=0"}
    ratios: [{label: ours / Kueue [95%], of: [ours, Kueue]}]    # numerator column, denominator column
    rows: [wall_seconds, evictions]

A column is a sweep point: the cases whose id is the point plus `,r<repeat>`; a column of another run
names it, `{run: OTHER-FOLDER, point: POINT}` (the block's `run` is then optional). Its cell is the median
over the repeats, then each repeat. A ratio cell is the run's summary figure with its 95% interval
where the summary has one (`kueue.ratio_to_kueue.<figure> @ <point>`, two columns of one run), else the
ratio of the medians (no interval: marked so).

The row `client_limits` is the client-side limit each column's scheduler sent its API requests under (the
case records' `client_limits`; for runs recorded before, the run's `client-limits.json`, which
benchmarks/scripts/kueuebaseline/client-limits.py reads from the schedulers' logs); its ratio cells say
whether the two columns ran under the same limits, as API rates across Kueue versions differ by them.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pandas as pd

from harness.drivers.kueuebaseline import holding, tabulating
from harness.errors import KqbenchError
from harness.readmes import inputs, markdown

CLIENT_LIMITS = "client_limits"
LIMITS_FILE = "client-limits.json"
"""A run recorded before the case records carried client_limits: {"source": ..., "cases": {case id: {qps, burst}}}."""
EVICTED_FINISHED = "evictions_of_finished"
"""A row counted from the run's evictions table: victims whose Finished the generator had written before the
eviction (the scheduler preempted on a view that had not yet taken the Finished in)."""
LABELS = {
    "workloads": "Workloads created",
    "finished": "Workloads finished",
    "wall_seconds": "wall time (s)",
    "evictions": "evictions",
    "cq_usage_percent": "CQ usage (%)",
    "cq_usage_percent_from_workloads": "CQ usage from the Workloads (%)",
    "admissions_per_second": "admissions/s",
    "cycle_seconds_mean": "mean cycle (s)",
    "writes_per_admission": "API writes per admission",
    "scheduler_cpu_seconds": "scheduler CPU (s)",
    "scheduler_rss_max_bytes": "scheduler RSS (MiB)",
    "fairness.jain_index": "Jain's index",
    "fairness.share_error": "share error",
    "fairness.longest_starvation_seconds": "longest starvation (s)",
    "rangespec_failures": "Kueue's rangespec bounds broken",
    "creation_lag_p50_seconds": "creation behind schedule, p50 (s)",
    "hold.decided_to_finished_seconds": "quota held, decision to Finished (s)",
    "hold.seen_seconds": "quota held, as the generator saw it (s)",
    "hold.decision_to_seen_seconds": "decision until the generator saw it (s)",
    EVICTED_FINISHED: "evictions of Workloads the generator had already finished (not counted in evictions)",
    CLIENT_LIMITS: "client limit, QPS / burst",
}
_CLASS = re.compile(r"^time_to_admission_seconds\[([a-z0-9-]+)\]$")
"""A Workload class's mean time to admission (the class names come from the configuration)."""


def _label(metric: str) -> str | None:
    found = _CLASS.match(metric)
    return f"time to admission, {found.group(1)} (s)" if found else LABELS.get(metric)


WINDOWED = {"cycle_seconds_mean", "admissions_per_second", "writes_per_admission"}
"""Rates over the phase's window: their ratio holds also where a side did not finish within its bound."""
SCALE = {"scheduler_rss_max_bytes": 2**20}
"""Rows shown in another unit than the one recorded (bytes as MiB)."""
_REPEAT = re.compile(r",r(\d+)$")
HOLD = "hold."
"""How long quota was held (``holding``): the summary's samples, or for a run summarised before them its
tables/kueue_holds.parquet (made from its Workloads table by benchmarks/scripts/kueuebaseline/hold-rows.py)."""


def _figures(folder: Path) -> pd.DataFrame:
    path = folder / "tables" / "kueue_baseline.csv"
    if not path.is_file():
        raise inputs.missing(path)
    return pd.read_csv(path)


def _holds(folder: Path) -> dict[str, dict[str, float]]:
    path = folder / "tables" / f"{holding.TABLE}.parquet"
    if not path.is_file():
        raise inputs.missing(path, "the hold rows of a run summarised before the summary had them: "
                                   "benchmarks/scripts/kueuebaseline/hold-rows.py makes it from the Workloads table")
    return holding.from_holds_frame(pd.read_parquet(path))


def _evicted_finished(folder: Path) -> dict[str, float]:
    path = folder / "tables" / f"{tabulating.EVICTIONS_TABLE}.parquet"
    if not path.is_file():
        raise inputs.missing(path, f"the row {EVICTED_FINISHED} is counted from it")
    frame = pd.read_parquet(path)
    cases = pd.read_csv(folder / "tables" / "kueue_baseline.csv")["case"].unique()
    counts = frame[frame["victim_had_finished"].astype(bool)].groupby("case").size()
    return {case: float(counts.get(case, 0)) for case in cases}


def _client_limits(folder: Path) -> dict[str, dict]:
    """Each case's client limits ({qps, burst}, qps None for none): its record, else the run's LIMITS_FILE."""
    cases = json.loads((folder / "run.json").read_text()).get("cases", []) if (folder / "run.json").is_file() else []
    found = {case["id"]: case["client_limits"] for case in cases if case.get("client_limits")}
    backfilled = folder / LIMITS_FILE
    if backfilled.is_file():
        found = {**json.loads(backfilled.read_text())["cases"], **found}
    return found


def _limits_cell(limits: dict[str, dict], point: str) -> str:
    """The distinct limits of the point's repeats ("none", or "QPS / burst")."""
    shown = sorted({"none" if limit["qps"] is None else f"{limit['qps']:g} / {limit['burst']}"
                    for case, limit in limits.items() if _REPEAT.sub("", case) == point})
    return ", ".join(shown) or f"not recorded (benchmarks/scripts/kueuebaseline/client-limits.py writes {LIMITS_FILE})"


def _summary(folder: Path) -> dict:
    path = folder / "summary.json"
    return json.loads(path.read_text()).get("metrics", {}) if path.is_file() else {}


def _values(frame: pd.DataFrame, summary: dict, point: str, metric: str,
            holds: dict[str, dict[str, float]] | None = None, evicted_finished: dict[str, float] | None = None) -> list[float]:
    """Each repeat's value: from the figures table, for the figures the summary alone holds (costs,
    fairness) its samples, for how long quota was held the Workloads table (``holds``)."""
    if metric == "rangespec_failures" and "within_rangespec" in frame.columns:
        return _rangespec_failures(frame, point)
    if metric == EVICTED_FINISHED:
        mine = [(int(_REPEAT.search(case).group(1)), count) for case, count in (evicted_finished or {}).items()
                if _REPEAT.sub("", case) == point]
        return [value for _, value in sorted(mine)]
    if metric.startswith(HOLD) and f"kueue.{metric} @ {point}" not in summary:
        figure = metric.removeprefix(HOLD)
        mine = [(int(_REPEAT.search(case).group(1)), values[figure]) for case, values in (holds or {}).items()
                if _REPEAT.sub("", case) == point and figure in values]
        return [value for _, value in sorted(mine)]
    rows = frame[(frame["metric"] == metric) & (frame["case"].str.replace(_REPEAT, "", regex=True) == point)]
    if rows.empty:
        entry = summary.get(f"kueue.{metric} @ {point}") or {}
        return [float(v) / SCALE.get(metric, 1) for v in entry.get("samples") or ()]
    ordered = rows.assign(repeat=rows["case"].str.extract(_REPEAT, expand=False).astype(int)).sort_values("repeat")
    return [float(v) / SCALE.get(metric, 1) for v in ordered["kqbench"]]


def _rangespec_failures(frame: pd.DataFrame, point: str) -> list[float]:
    """Per repeat, how many of Kueue's rangespec bounds the case broke (as the summary counts them)."""
    mine = frame[(frame["case"].str.replace(_REPEAT, "", regex=True) == point) & frame["within_rangespec"].notna()]
    by_case = mine.groupby("case")["within_rangespec"].agg(lambda v: float((~v.astype(bool)).sum()))
    ordered = sorted(by_case.items(), key=lambda item: int(_REPEAT.search(item[0]).group(1)))
    return [value for _, value in ordered]


def _unfinished(frame: pd.DataFrame, point: str) -> bool:
    """A repeat of the point that did not finish every Workload (its `complete` figure is 0)."""
    return any(value < 1 for value in _values(frame, {}, point, "complete"))


def _digits(metric: str, value: float) -> int:
    if metric.startswith("fairness.") and value < 10:
        return 3
    whole = ("evictions", EVICTED_FINISHED, "wall_seconds", "rangespec_failures", "workloads", "finished")
    return 0 if metric in whole or value >= 100 else 1 if value >= 10 else 2


def _cell(metric: str, values: list[float]) -> str:
    if not values:
        return "n/a"
    median = statistics.median(values)
    each = ", ".join(markdown.number(v, _digits(metric, v)) for v in values)
    return f"{markdown.number(median, _digits(metric, median))} ({each})" if len(values) > 1 else each


def _ratio(summary: dict, metric: str, point: str, ours: list[float], theirs: list[float]) -> str:
    entry = summary.get(f"kueue.ratio_to_kueue.{metric} @ {point}")
    if entry and entry.get("low") is not None and entry.get("high") is not None:
        return f"{entry['value']:.2f} [{entry['low']:.2f}, {entry['high']:.2f}]"
    if not ours or not theirs or not statistics.median(theirs):
        return "n/a"
    ratio = statistics.median(ours) / statistics.median(theirs)
    return f"{ratio:.3g} (of medians)"


def _column(header: str, value: object, default: str | None) -> tuple[str, str]:
    """(run folder, point) of a column: a point of the block's `run`, or {run: FOLDER, point: POINT}."""
    if isinstance(value, dict) and "point" in value:
        run = value.get("run", default)
        point = value["point"]
    else:
        run, point = default, value
    if not run:
        raise KqbenchError(f"column {header!r} names no run: give the block a `run:` or the column {{run: ..., point: ...}}")
    return str(run), str(point)


class _Run:
    """One run folder's figures, summary and (when a row needs them) quota holds and evictions of finished work."""

    def __init__(self, folder: Path, holds: bool, evictions: bool = False) -> None:
        self.frame, self.summary = _figures(folder), _summary(folder)
        summarised = any(key.startswith(f"kueue.{HOLD}") for key in self.summary)
        self.holds = _holds(folder) if holds and not summarised else None
        self.evicted_finished = _evicted_finished(folder) if evictions else None
        self.limits = _client_limits(folder)


def cases(spec: dict, folder: Path) -> str:
    columns = {header: _column(header, value, spec.get("run")) for header, value in spec["columns"].items()}
    ratios = spec.get("ratios") or []
    for ratio in ratios:
        of = ratio.get("of") or []
        if len(of) != 2 or not set(of) <= set(columns):
            raise KqbenchError(f"ratio {ratio.get('label')!r}: `of` names two of the columns ({', '.join(columns)})")
    holds = any(str(m).startswith(HOLD) for m in spec["rows"])
    evictions = EVICTED_FINISHED in spec["rows"]
    runs = {run: _Run(folder / run, holds, evictions) for run, _ in columns.values()}
    rows = []
    for metric in spec["rows"]:
        if _label(metric) is None:
            raise KqbenchError(f"unknown row {metric!r} (rows: {', '.join(LABELS)}, time_to_admission_seconds[<class>])")
        if metric == CLIENT_LIMITS:
            limits = {header: _limits_cell(runs[run].limits, point) for header, (run, point) in columns.items()}
            same = ["same" if limits[r["of"][0]] == limits[r["of"][1]] else "differ" for r in ratios]
            rows.append([_label(metric), *limits.values(), *same])
            continue
        values = {header: _values(runs[run].frame, runs[run].summary, point, metric, runs[run].holds,
                                  runs[run].evicted_finished)
                  for header, (run, point) in columns.items()}
        cells = [_cell(metric, values[h]) for h in columns]
        for ratio in ratios:
            a, b = ratio["of"]
            unfinished = [] if metric in WINDOWED else [
                name for name in (a, b) if _unfinished(runs[columns[name][0]].frame, columns[name][1])]
            # The run's own interval only between two points of one run; across runs, the ratio of medians.
            summary = runs[columns[a][0]].summary if columns[a][0] == columns[b][0] else {}
            cells.append(f"not reached ({' and '.join(unfinished)} did not finish)" if unfinished
                         else _ratio(summary, metric, columns[a][1], values[a], values[b]))
        rows.append([_label(metric), *cells])
    return markdown.table(["", *columns, *(r["label"] for r in ratios)], rows)
