"""summary.json: the few numbers a gate reads, computed from a run's tables (pure except read/write).

Each entry is one metric at one sweep point: the median over the point's repeats (with the samples
kept), a unit and which direction is better, and its 95% interval with the samples behind it
(`harness.stats.intervals`): a latency quantile is the quantile of all the point's requests, its
interval bootstrapped over requests (and repeats); any other number is the median of the repeats,
its interval bootstrapped over repeats (a ratio's on the log scale, so never below zero). Every draw
uses one seed (`intervals.SEED`), recorded in the entry: equal numbers give equal intervals whatever
the metric is named. Ratios measured within one run (indexed vs snapshot
query latency at the same point) are entries of their own: they cancel the machine's speed, so a
gate on them is far less noisy than a gate on absolute numbers. So are latencies over the machine's
calibration p50 in the same cases (`ratio.<metric>.over_calibration`, the metrics drivers name in
`calibrated_metrics`): a design's own figure with the day's and the CPU's speed divided out.

Resolution: a latency entry keeps `step`, the smallest change its data can show at its value (1 ms
for Locust's figures below 100 ms, about 0.1% for the HDR histograms), and its interval is never
narrower than that. A ratio's `step` follows from its parts' (a step of either part moves it by
step/part); when one step of a part moves the ratio by more than COARSE_RATIO_STEP the ratio is of
small numbers and its `note` says so: 3 ms / 5 ms at 1 ms steps can only be 0.5, 0.6, 0.75, 1.0, 1.2
and a one-step shift doubles it, which no gate should read as a change of design.

The summary also records the machine (`harness.results.machines`: fingerprint and calibration).
"""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import numpy as np
import pandas as pd

from harness.drivers import contract
from harness.errors import KqbenchError
from harness.results import headlines, machines, runs
from harness.stats import differences, intervals
from loadtests import histograms
from scheduler.publishing import strategies

SCHEMA_VERSION = 4
"""summary.json format; readers refuse newer ones. 1: first format. 2: entries may carry `low`,
`high` (95% interval of `value`) and `n` (samples behind it); a version-1 entry reads with them None.
3: entries carry `step` (the resolution of `value`) and `note` (a ratio of small numbers says so);
the summary carries `machine` (fingerprint) and `calibration`. Versions 1 and 2 read through
`_upgrade`: their latencies were Locust's whole milliseconds, which now sets their steps.
4: entries carry `seed` (the bootstrap draw behind `low`, `high`), and a ratio over repeats has its
interval on the log scale; a version-3 entry reads with `seed` None and its interval as written
(benchmarks/scripts/intervals/ratio-intervals.py redraws a ratio's from its samples, with its seed)."""
SAME_FIGURES_SINCE = 3
"""The oldest version whose values this kqbench computes the same way: a report reads such a summary as
written. Older ones are summarised again from the run's tables when it has them. Version 4 changed only
how intervals are drawn, and most runs' raw tables are no longer in git to draw them again from."""
RATIO_UNIT = "ratio"
"""The unit of a ratio entry: its interval over repeats is found on the log scale."""
COARSE_RATIO_STEP = 0.05
"""A ratio is of small numbers when one resolution step of a part moves it by more than this (a part
under 20 steps): at 1 ms steps, parts below 20 ms."""
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
    step: float | None = None
    """Resolution of `value` (its unit): the smallest change the data behind it can show there; None for
    counts and rates, whose resolution is not the issue."""
    note: str = ""
    """Why this value needs care when compared (a ratio of small numbers), for the report and compare."""
    seed: int | None = None
    """Seed of the bootstrap draw behind `low` and `high` (None: no draw, or a summary before version 4)."""

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
    machine: machines.Fingerprint | None = None
    """The machine the run ran on; None in summaries before version 3."""
    calibration: machines.Calibration | None = None
    notes: list[str] = field(default_factory=list)
    """What reading an older file had to assume (one line each); not written."""

    def to_dict(self) -> dict:
        return {"schema_version": self.schema_version, "run_id": self.run_id, "scenario": self.scenario,
                "status": self.status, "machine": self.machine.to_dict() if self.machine else None,
                "calibration": self.calibration.to_dict() if self.calibration else None,
                "metrics": {k: asdict(e) for k, e in sorted(self.entries.items())}}

    @classmethod
    def from_dict(cls, data: dict, source: str = "summary.json") -> "Summary":
        runs.check_version(data, SCHEMA_VERSION, source)
        known = {f.name for f in fields(Entry)}
        entries = {}
        for key, value in (data.get("metrics") or {}).items():
            try:
                entries[key] = Entry(**{name: item for name, item in value.items() if name in known})
            except (AttributeError, TypeError) as error:  # not a mapping, or a required field missing
                raise KqbenchError(f"{source}: metric {key!r} is not a summary entry ({error})") from None
        summary = cls(data.get("run_id", ""), data.get("scenario", ""), data.get("status", ""), entries,
                      data["schema_version"], machines.Fingerprint.from_dict(data.get("machine")),
                      machines.Calibration.from_dict(data.get("calibration")))
        if summary.schema_version < 3:
            _upgrade(summary, source)
        elif summary.machine is None:
            summary.notes.append(f"{source} records no machine fingerprint: it cannot tell which machine it ran on")
        return summary


# -- per case: one number per metric --------------------------------------------------------


def case_metrics(tables: Mapping[str, pd.DataFrame], case: str,
                 drivers: Iterable[contract.Driver]) -> list[contract.Metric]:
    """(metric, value, unit, better) measured in one case: the measurements' and every driver's."""
    return headlines.metrics(tables, case) + [metric for driver in drivers for metric in driver.metrics(tables, case)]


# -- per run: medians over repeats, ratios within the run --------------------------------------


def summarise(run: runs.RunRecord, tables: Mapping[str, pd.DataFrame], drivers: Iterable[contract.Driver]) -> Summary:
    """The summary of a run from its record and its tables; `drivers` (the registry's, handed down by the
    caller: this layer lists no driver) add their metrics, ratios and calibrated ratios."""
    drivers = tuple(drivers)
    measured: dict[tuple[str, str], list[contract.Metric]] = defaultdict(list)
    params_of: dict[str, dict] = {}
    for case in run.cases:
        if case.status not in ("ok", "failed", "interrupted"):
            continue
        params_of[case.point] = case.params
        for metric in case_metrics(tables, case.id, drivers):
            measured[(metric.name, case.point)].append(metric)
    summary = Summary(run.run_id, run.scenario_name, run.status, machine=run.fingerprint,
                      calibration=machines.calibration_of(tables.get(machines.CALIBRATION_TABLE)))
    for (name, point), repeats in measured.items():
        entry = estimate(name, point, repeats)
        summary.entries[entry.key] = entry
    prefixes = tuple(prefix for driver in drivers for prefix in driver.ratio_metrics)
    calibrated = tuple(name for driver in drivers for name in driver.calibrated_metrics)
    for entry in ratios(summary.entries.values(), params_of, prefixes) + calibrated_ratios(summary.entries.values(),
                                                                                         calibrated):
        summary.entries[entry.key] = entry
    return summary


def estimate(name: str, point: str, repeats: list[contract.Metric]) -> Entry:
    """One entry from a metric's repeats: over requests for a latency quantile with histograms, else over repeats."""
    values = [m.value for m in repeats]
    rng = np.random.default_rng(intervals.SEED)
    q = intervals.quantile_of(name)
    if q is not None and all(m.histograms for m in repeats):
        found = intervals.quantile_interval([m.histograms for m in repeats], q, rng)
    elif repeats[0].unit == RATIO_UNIT:
        found = intervals.ratio_interval(values, rng)
    else:
        found = intervals.repeats_interval(values, rng)
    resolution = repeats[0].resolution
    found = intervals.widen(found, resolution)
    value = found.value if math.isfinite(found.value) else float(statistics.median(values))
    step = resolution(value) if resolution is not None and math.isfinite(value) else None
    seed = intervals.SEED if found.low is not None else None
    return Entry(name, point, value, repeats[0].unit, repeats[0].better, values, found.low, found.high, found.n, step,
                 seed=seed)


def redraw_ratio(entry: Entry) -> Entry:
    """A ratio entry over repeats with its interval drawn again from its samples as `estimate` draws it now
    (an older summary's, on the linear scale); other entries, and ratios without samples, as they are."""
    if entry.unit != RATIO_UNIT or not entry.samples:
        return entry
    found = intervals.ratio_interval(entry.samples, np.random.default_rng(intervals.SEED))
    found = intervals.widen(found, None if entry.step is None else lambda _: entry.step)
    if found.low is None:
        return entry
    return replace(entry, low=found.low, high=found.high, seed=intervals.SEED)


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
            out.append(ratio_entry(name, rest, entry, base))
    return out


def calibrated_ratios(entries, names: tuple[str, ...]) -> list[Entry]:
    """Each named metric over the calibration p50 at its own point (`ratio.<metric>.over_calibration`):
    the figure in units of the machine's own fast path, measured in the same cases."""
    calibration = {e.point: e for e in entries if e.metric == headlines.CALIBRATION_METRIC and e.value > 0}
    return [ratio_entry(f"ratio.{e.metric.split('.', 1)[-1]}.over_calibration", e.point, e, calibration[e.point])
            for e in sorted(entries, key=lambda e: e.key) if e.metric in names and e.point in calibration]


def ratio_entry(name: str, point: str, numerator: Entry, denominator: Entry) -> Entry:
    """numerator / denominator with its interval, its resolution and, for small numbers, why it needs care."""
    low, high = _ratio_interval(numerator, denominator)
    n = min(numerator.n, denominator.n) if numerator.n is not None and denominator.n is not None else None
    value = numerator.value / denominator.value
    step, note = _ratio_resolution(value, numerator, denominator)
    return Entry(name, point, value, RATIO_UNIT, "lower", [], low, high, n, step, note)


def _ratio_resolution(value: float, numerator: Entry, denominator: Entry) -> tuple[float | None, str]:
    """The ratio's step (a step of each part: value x (step_n / n + step_d / d)) and its small-numbers note."""
    if numerator.step is None or denominator.step is None:
        return None, ""
    if numerator.value <= 0:
        return None, f"ratio of small numbers: numerator {numerator.value:g} {numerator.unit}"
    moves = (numerator.step / numerator.value, denominator.step / denominator.value)
    if max(moves) <= COARSE_RATIO_STEP:
        return value * sum(moves), ""
    apart = abs(numerator.value - denominator.value) / max(numerator.step, denominator.step)
    unit = numerator.unit
    note = (f"ratio of small numbers: parts {numerator.value:.4g} and {denominator.value:.4g} {unit}, "
            f"{apart:.1f} steps of {max(numerator.step, denominator.step):.3g} {unit} apart; one step of a part "
            f"moves the ratio by up to {max(moves):.0%}")
    return value * sum(moves), note


def _ratio_interval(numerator: Entry, denominator: Entry) -> tuple[float | None, float | None]:
    """The ratio's interval from its two independent estimates' intervals (the test compare runs)."""
    diff = differences.difference(differences.Side(denominator.value, denominator.low, denominator.high),
                                  differences.Side(numerator.value, numerator.low, numerator.high))
    if diff.low is None or diff.high is None:
        return None, None
    return max(0.0, 1.0 + diff.low), 1.0 + diff.high


# -- older files ---------------------------------------------------------------------------


def _upgrade(summary: Summary, source: str) -> None:
    """A version-1 or -2 summary as version 3 would have it, as far as its numbers allow.

    Their latencies were Locust's figures, whole milliseconds below 100 ms: each latency entry gets
    that step and an interval at least as wide; each within-run ratio of latencies gets its interval,
    step and note again from its two parts (when the file holds them)."""
    for entry in summary.entries.values():
        if intervals.quantile_of(entry.metric) is not None and entry.unit == "ms" and not entry.metric.startswith("ratio."):
            entry.step = histograms.locust_step_ms(entry.value)
            widened = intervals.widen(intervals.Estimate(entry.value, entry.low, entry.high, entry.n or 0),
                                      histograms.locust_step_ms)
            entry.low, entry.high = widened.low, widened.high
    for key, entry in list(summary.entries.items()):
        parts = _parts(summary.entries, entry) if entry.metric.startswith("ratio.") else None
        if parts is not None:
            summary.entries[key] = ratio_entry(entry.metric, entry.point, *parts)
    summary.notes.append(f"{source} is a version-{summary.schema_version} summary: latencies in Locust's whole "
                         "milliseconds (intervals widened to those steps, within-run ratios re-derived from their "
                         "parts) and no machine fingerprint")


def _parts(entries: Mapping[str, Entry], ratio: Entry) -> tuple[Entry, Entry] | None:
    """The numerator and denominator entries of a within-run ratio entry (as `ratios` named it), if present."""
    middle, _, pair = ratio.metric.removeprefix("ratio.").rpartition(".")
    numerator, _, denominator = pair.partition("_over_")
    found: dict[str, Entry] = {}
    for entry in entries.values():
        if entry.metric.startswith("ratio.") or entry.metric.split(".", 1)[-1] != middle:
            continue
        fields_ = entry.point.split(",")
        named = [f.split("=", 1)[1] for f in fields_ if f.startswith("strategy=")]
        rest = ",".join(f for f in fields_ if not f.startswith("strategy=")) or "all"
        if len(named) == 1 and rest == ratio.point:
            for short in (numerator, denominator):
                if named[0].split("-")[-1] == short:
                    found[short] = entry
    if numerator in found and denominator in found and found[denominator].value > 0:
        return found[numerator], found[denominator]
    return None


FILE = "summary.json"


def write(folder: Path, summary: Summary) -> Path:
    path = Path(folder) / FILE
    path.write_text(json.dumps(summary.to_dict(), indent=2, sort_keys=True))
    return path


def read(path: Path) -> Summary:
    """A summary.json, or the one in a run folder; refuses newer formats."""
    path = Path(path)
    if path.is_dir():
        path = path / "summary.json"
    if not path.is_file():
        raise KqbenchError(f"{path} does not exist: give a run folder or a summary.json")
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise KqbenchError(f"{path} is not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise KqbenchError(f"{path} is not a summary (a JSON object)")
    return Summary.from_dict(data, str(path))
