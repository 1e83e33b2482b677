"""README tables of pyperf results (benchmarks/micro/*.py write them): each benchmark's mean, side by side.

Spec of a `pyperf-pairs` block (paths relative to the README):

    file: bench_scheduler_core.json
    columns: [snapshot, indexed]               # benchmark name = the row's stem + "-" + the column
    ratio: true                                # a column first / second
    rows: {ClusterQueue page of 100, 1k pending: cq-page100-1k}
"""

from __future__ import annotations

from pathlib import Path

import pyperf

from harness.errors import KqbenchError
from harness.readmes import inputs, markdown


def duration(seconds: float) -> str:
    """Three significant digits in the unit pyperf would print: 462 us, 2.70 ms, 102 ms."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if seconds >= scale:
            value = seconds / scale
            return f"{value:.{max(0, 2 - len(str(int(value))) + 1)}f} {unit}"
    return f"{seconds * 1e9:.2f} ns"


def times(value: float) -> str:
    """A ratio as 2.0x, 18x, 418x, ~55,000x."""
    if value >= 1000:
        return f"~{float(f'{value:.2g}'):,.0f}x"
    return f"{value:.1f}x" if value < 10 else f"{value:.0f}x"


def pairs(spec: dict, folder: Path) -> str:
    """One row per benchmark stem, its mean per column (stem-column), and the first over the second."""
    path = folder / spec["file"]
    if not path.is_file():
        raise inputs.missing(path)
    means = {b.get_name(): b.mean() for b in pyperf.BenchmarkSuite.load(str(path)).get_benchmarks()}
    columns: list[str] = spec["columns"]
    lines = []
    for label, stem in spec["rows"].items():
        names = [f"{stem}-{column}" for column in columns]
        if missing := [n for n in names if n not in means]:
            raise KqbenchError(f"no benchmark {', '.join(missing)} in {path} (has: {', '.join(means)})")
        cells = [duration(means[n]) for n in names]
        if spec.get("ratio"):
            cells.append(times(means[names[0]] / means[names[1]]))
        lines.append([label, *cells])
    header = ["benchmark", *columns] + ([f"{columns[0]} / {columns[1]}"] if spec.get("ratio") else [])
    return markdown.table(header, lines)
