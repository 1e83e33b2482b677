"""summary.json: the few numbers a gate reads, computed from a run's tables (pure except read/write).

Each entry is one metric at one sweep point: the median over the point's repeats (with the samples
kept), a unit and which direction is better, and its 95% interval with the samples behind it
(`harness.stats.intervals`): a latency quantile is the quantile of all the point's requests, its
interval bootstrapped over requests (and repeats); any other number is the median of the repeats,
its interval bootstrapped over repeats. Ratios measured within one run (indexed vs snapshot
query latency at the same point) are entries of their own: they cancel the machine's speed, so a
gate on them is far less noisy than a gate on absolute numbers.
"""

from __future__ import annotations

import json
import math
import statistics
import zlib
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from harness.drivers import registry
from harness.metrics import headlines
from harness.results import runs
from harness.stats import differences, intervals
from scheduler.publishing import strategies

SCHEMA_VERSION = 2
"""summary.json format; readers refuse newer ones. 1: first format. 2: entries may carry `low`,
`high` (95% interval of `value`) and `n` (samples behind it); a version-1 entry reads with them None."""
RATIO_PAIRS = ((strategies.AGGREGATED_INDEXED, strategies.AGGREGATED_SNAPSHOT),)
"""(numerator, denominator) strategies whose latency ratio is reported at every shared point."""


@dataclass(slots=True)
class Entry:
    metric: str
    point: str
    value: float
    unit: str
    better: str
    """lower | higher."""
    samples: list[float] = field(default_factory=list)
    low: float | None = None
    """Lower bound of the 95% interval of `value` (None: not estimated, e.g. a version-1 file)."""
    high: float | None = None
    """Upper bound of the 95% interval of `value`."""
    n: int | None = None
    """Samples behind the estimate: requests for latency quantiles, repeats for rates."""

    @property
    def key(self) -> str:
        return f"{self.metric} @ {self.point}"


@dataclass(slots=True)
class Summary:
    run_id: str
    scenario: str
    status: str
    entries: dict[str, Entry] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict:
        return {"schema_version": self.schema_version, "run_id": self.run_id, "scenario": self.scenario,
                "status": self.status, "metrics": {k: asdict(e) for k, e in sorted(self.entries.items())}}

    @classmethod
    def from_dict(cls, data: dict, source: str = "summary.json") -> "Summary":
        runs.check_version(data, SCHEMA_VERSION, source)
        entries = {k: Entry(**v) for k, v in (data.get("metrics") or {}).items()}
        return cls(data.get("run_id", ""), data.get("scenario", ""), data.get("status", ""), entries,
                   data["schema_version"])


# -- per case: one number per metric --------------------------------------------------------


def case_metrics(tables: Mapping[str, pd.DataFrame], case: str,
                 drivers: registry.Registry | None = None) -> list[registry.Metric]:
    """(metric, value, unit, better) measured in one case: the measurements' and every driver's."""
    drivers = drivers or registry.drivers()
    return headlines.metrics(tables, case) + registry.metrics_of(tuple(drivers), tables, case)


# -- per run: medians over repeats, ratios within the run --------------------------------------


def summarise(run: runs.RunRecord, tables: Mapping[str, pd.DataFrame], drivers: registry.Registry | None = None) -> Summary:
    """The summary of a run from its record and its tables; `drivers` add their metrics."""
    measured: dict[tuple[str, str], list[registry.Metric]] = defaultdict(list)
    params_of: dict[str, dict] = {}
    for case in run.cases:
        if case.status not in ("ok", "failed", "interrupted"):
            continue
        params_of[case.point] = case.params
        for metric in case_metrics(tables, case.id, drivers):
            measured[(metric.name, case.point)].append(metric)
    summary = Summary(run.run_id, run.scenario_name, run.status)
    for (name, point), repeats in measured.items():
        entry = estimate(name, point, repeats)
        summary.entries[entry.key] = entry
    prefixes = tuple(prefix for driver in (drivers or registry.drivers()) for prefix in driver.ratio_metrics)
    for entry in ratios(summary.entries.values(), params_of, prefixes):
        summary.entries[entry.key] = entry
    return summary


def estimate(name: str, point: str, repeats: list[registry.Metric]) -> Entry:
    """One entry from a metric's repeats: over requests for a latency quantile with histograms, else over repeats."""
    values = [m.value for m in repeats]
    rng = np.random.default_rng(zlib.crc32(f"{name} @ {point}".encode()))  # same tables, same interval
    q = intervals.quantile_of(name)
    if q is not None and all(m.histograms for m in repeats):
        found = intervals.quantile_interval([m.histograms for m in repeats], q, rng)
    else:
        found = intervals.repeats_interval(values, rng)
    value = found.value if math.isfinite(found.value) else float(statistics.median(values))
    return Entry(name, point, value, repeats[0].unit, repeats[0].better, values, found.low, found.high, found.n)


def ratios(entries, params_of: Mapping[str, dict], prefixes: tuple[str, ...]) -> list[Entry]:
    """numerator/denominator strategy ratios of the metrics named by `prefixes` at points that differ only in strategy."""
    by_point = {(e.metric, e.point): e for e in entries}
    out = []
    for (metric, point), entry in sorted(by_point.items()):
        if not metric.startswith(prefixes):
            continue
        params = params_of.get(point, {})
        for numerator, denominator in RATIO_PAIRS:
            if params.get("scheduler.strategy") != numerator:
                continue
            other = {**params, "scheduler.strategy": denominator}
            match = next((p for p, q in params_of.items() if q == other), None)
            base = by_point.get((metric, match)) if match else None
            if base is None or base.value <= 0:
                continue
            rest = ",".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in params.items() if k != "scheduler.strategy") or "all"
            name = f"ratio.{metric.split('.', 1)[-1]}.{numerator.split('-')[-1]}_over_{denominator.split('-')[-1]}"
            low, high = _ratio_interval(entry, base)
            n = min(entry.n, base.n) if entry.n is not None and base.n is not None else None
            out.append(Entry(name, rest, entry.value / base.value, "ratio", "lower", [], low, high, n))
    return out


def _ratio_interval(numerator: Entry, denominator: Entry) -> tuple[float | None, float | None]:
    """The ratio's interval from its two independent estimates' intervals (the test compare runs)."""
    diff = differences.difference(differences.Side(denominator.value, denominator.low, denominator.high),
                                  differences.Side(numerator.value, numerator.low, numerator.high))
    if diff.low is None or diff.high is None:
        return None, None
    return max(0.0, 1.0 + diff.low), 1.0 + diff.high


def write(folder: Path, summary: Summary) -> Path:
    path = Path(folder) / "summary.json"
    path.write_text(json.dumps(summary.to_dict(), indent=2, sort_keys=True))
    return path


def read(path: Path) -> Summary:
    """A summary.json, or the one in a run folder; refuses newer formats."""
    path = Path(path)
    if path.is_dir():
        path = path / "summary.json"
    if not path.is_file():
        from harness.errors import KqbenchError

        raise KqbenchError(f"{path} does not exist: give a run folder or a summary.json")
    return Summary.from_dict(json.loads(path.read_text()), str(path))
