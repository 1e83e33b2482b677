"""The side-by-side table (pure): metrics as rows, the swept cases (or runs) as columns, one unit
per row, the best of each row marked and every other value as a ratio to it.

Columns come from summary.json points in the order the run swept them; several runs give one
column per run (and point, when a run swept several). A cell keeps what the gate's summary knows
about its value: the 95% interval (`low`, `high`) and the samples behind it (`n`) when present.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from harness.results import summaries

BYTE_UNITS = (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))
UNIT_NAMES = {"1/s": "/s", "count": "count", "ratio": "ratio"}


@dataclass(frozen=True, slots=True)
class RunView:
    """One run as the pivot sees it: its summary and its points in sweep order."""

    run_id: str
    summary: summaries.Summary
    points: tuple[str, ...]
    strategies: Mapping[str, str]
    """Point -> the strategy its cases ran ('' when the run has none)."""


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    """`run_id point`: unique over every run shown."""
    run_id: str
    point: str
    label: str
    """What a reader sees as the heading; never shortened."""
    strategy: str


@dataclass(frozen=True, slots=True)
class Cell:
    value: float
    low: float | None = None
    high: float | None = None
    n: int | None = None
    """Samples behind the value (requests for a latency percentile), None when not known."""
    repeats: int = 1
    best: bool = False
    ratio: float | None = None
    """value / the row's best value (None when the best is 0 and this is not)."""

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None


@dataclass(frozen=True, slots=True)
class Row:
    metric: str
    unit: str
    """The unit the shown numbers are in (bytes scaled to KiB/MiB/GiB per row)."""
    scale: float
    better: str
    cells: tuple[Cell | None, ...]

    @property
    def compared(self) -> bool:
        """True when at least two columns have a value (only then is there a best)."""
        return sum(cell is not None for cell in self.cells) >= 2

    def shown(self, value: float | None) -> str:
        return "–" if value is None else number(value / self.scale)


@dataclass(frozen=True, slots=True)
class Pivot:
    heading: str
    """What the columns are (e.g. `strategy`, `run`)."""
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    extra: tuple[summaries.Entry, ...] = ()
    """Entries at no column's point (within-run ratios over several points)."""
    unmeasured: tuple[str, ...] = ()
    """Labels of the cases without a single metric (not run, or failed before measuring): no column."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Column key -> label of every point, also the unmeasured ones."""

    def row(self, metric: str) -> Row | None:
        return next((row for row in self.rows if row.metric == metric), None)


def number(value: float) -> str:
    """A readable number: no exponent notation, about four significant digits."""
    if not math.isfinite(value):
        return str(value)
    size = abs(value)
    if size >= 10_000:
        return f"{value:,.0f}"
    if size >= 100:
        return f"{value:.0f}"
    if size >= 10:
        return f"{value:.0f}" if value == int(value) else f"{value:.1f}"
    if size == 0:
        return "0"
    return f"{value:.3g}"


def ratio_text(ratio: float | None) -> str:
    return "" if ratio is None else f"×{ratio:.2f}" if ratio < 10 else f"×{ratio:.0f}"


def _pairs(point: str) -> list[tuple[str, str]]:
    return [tuple(part.split("=", 1)) if "=" in part else ("", part) for part in point.split(",") if part]


def point_labels(points: Sequence[str]) -> tuple[str, list[str]]:
    """(what the columns vary, a label per point). Parameters equal in every point are said once in the
    heading; when one parameter varies its values are the labels (`strategy=a` -> `a`), otherwise the
    first varying parameter's value leads and the rest follow as `k=v`."""
    pairs = [_pairs(p) for p in points]
    if len(points) < 2 or any(not pair or any(not k for k, _ in pair) for pair in pairs):
        return "case", list(points)
    common = [kv for kv in pairs[0] if all(kv in pair for pair in pairs[1:])]
    varying = [[kv for kv in pair if kv not in common] for pair in pairs]
    if any(not pair for pair in varying):
        return "case", list(points)
    keys = list(dict.fromkeys(k for pair in varying for k, _ in pair))
    lead = keys[0] if all(pair[0][0] == keys[0] for pair in varying) else ""
    labels = [", ".join(([pair[0][1]] if lead else []) + [f"{k}={v}" for k, v in (pair[1:] if lead else pair)])
              for pair in varying]
    heading = lead or "case"
    if common:
        heading += f"; all with {', '.join(f'{k}={v}' for k, v in common)}"
    return heading, labels


def columns_of(views: Sequence[RunView]) -> tuple[str, tuple[Column, ...]]:
    """The columns of the runs: points of one run, or one per run (and point) for several."""
    if len(views) == 1:
        view = views[0]
        heading, labels = point_labels(view.points)
        return heading, tuple(Column(f"{view.run_id} {p}", view.run_id, p, label, view.strategies.get(p, ""))
                              for p, label in zip(view.points, labels))
    columns = []
    for view in views:
        _, labels = point_labels(view.points)
        for point, label in zip(view.points, labels):
            shown = view.run_id if len(view.points) == 1 else f"{view.run_id} {label}"
            columns.append(Column(f"{view.run_id} {point}", view.run_id, point, shown, view.strategies.get(point, "")))
    return "run", tuple(columns)


def _scale(unit: str, values: list[float]) -> tuple[str, float]:
    if unit == "B":
        top = max((abs(v) for v in values), default=0.0)
        for name, factor in BYTE_UNITS:
            if top >= factor:
                return name, float(factor)
    return UNIT_NAMES.get(unit, unit), 1.0


def _marked(cells: list[Cell | None], better: str) -> tuple[Cell | None, ...]:
    values = [c.value for c in cells if c is not None and math.isfinite(c.value)]
    if len(values) < 2:
        return tuple(cells)
    best = min(values) if better == "lower" else max(values)
    if all(v == best for v in values):  # all equal: nothing to mark
        return tuple(cells)
    out = []
    for cell in cells:
        if cell is None:
            out.append(None)
            continue
        ratio = cell.value / best if best != 0 else (1.0 if cell.value == 0 else None)
        out.append(Cell(cell.value, cell.low, cell.high, cell.n, cell.repeats, cell.value == best, ratio))
    return tuple(out)


def _order(metric: str, first: Sequence[str]) -> tuple:
    if metric in first:
        return (0, first.index(metric), metric)
    return (2 if metric.startswith("bringup.") else 1, 0, metric)


def build(views: Sequence[RunView], counts: Mapping[tuple[str, str], int] | None = None,
          first: Sequence[str] = ()) -> Pivot:
    """The pivot of the runs; `counts` gives samples per (metric, column key) where the summary has no `n`;
    rows named in `first` come first, in that order."""
    counts = counts or {}
    heading, columns = columns_of(views)
    index = {column.key: i for i, column in enumerate(columns)}
    grid: dict[str, list[Cell | None]] = {}
    meta: dict[str, tuple[str, str]] = {}
    extra = []
    for view in views:
        for entry in view.summary.entries.values():
            key = f"{view.run_id} {entry.point}"
            if key not in index:
                extra.append(entry)
                continue
            # the summary's n is what its interval rests on; without an interval it is only the repeats,
            # and the requests counted in the tables say more
            interval = entry.low is not None and entry.high is not None
            n = entry.n if interval else counts.get((entry.metric, key), entry.n)
            cell = Cell(entry.value, entry.low, entry.high, None if n is None else int(n), max(1, len(entry.samples)))
            grid.setdefault(entry.metric, [None] * len(columns))[index[key]] = cell
            meta.setdefault(entry.metric, (entry.unit, entry.better))
    labels = {c.key: c.label for c in columns}
    kept = [i for i in range(len(columns)) if any(cells[i] is not None for cells in grid.values())]
    unmeasured = tuple(c.label for i, c in enumerate(columns) if i not in kept)
    columns = tuple(columns[i] for i in kept)
    grid = {metric: [cells[i] for i in kept] for metric, cells in grid.items()}
    rows = []
    for metric in sorted(grid, key=lambda m: _order(m, list(first))):
        unit, better = meta[metric]
        shown_unit, scale = _scale(unit, [c.value for c in grid[metric] if c is not None])
        rows.append(Row(metric, shown_unit, scale, better, _marked(grid[metric], better)))
    return Pivot(heading, columns, tuple(rows), tuple(extra), unmeasured, labels)
