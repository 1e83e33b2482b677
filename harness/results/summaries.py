"""summary.json: the few numbers a gate reads, computed from a run's tables (pure except read/write).

Each entry is one metric at one sweep point: the median over the point's repeats (with the samples
kept), a unit and which direction is better. Ratios measured within one run (indexed vs snapshot
query latency at the same point) are entries of their own: they cancel the machine's speed, so a
gate on them is far less noisy than a gate on absolute numbers.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from harness.drivers import registry
from harness.metrics import headlines
from harness.results import runs
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
    samples: dict[tuple[str, str], list[float]] = defaultdict(list)
    meta: dict[str, tuple[str, str]] = {}
    params_of: dict[str, dict] = {}
    for case in run.cases:
        if case.status not in ("ok", "failed", "interrupted"):
            continue
        params_of[case.point] = case.params
        for metric, value, unit, better in case_metrics(tables, case.id, drivers):
            samples[(metric, case.point)].append(value)
            meta[metric] = (unit, better)
    summary = Summary(run.run_id, run.scenario_name, run.status)
    for (metric, point), values in samples.items():
        unit, better = meta[metric]
        entry = Entry(metric, point, float(statistics.median(values)), unit, better, values)
        summary.entries[entry.key] = entry
    prefixes = tuple(prefix for driver in (drivers or registry.drivers()) for prefix in driver.ratio_metrics)
    for entry in ratios(summary.entries.values(), params_of, prefixes):
        summary.entries[entry.key] = entry
    return summary


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
            out.append(Entry(name, rest, entry.value / base.value, "ratio", "lower"))
    return out


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
