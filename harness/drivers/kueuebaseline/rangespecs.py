"""Kueue's rangespec.yaml of a scheduler performance configuration: its thresholds, the averages its
comments give, and the verdicts they pass on a run's figures.

Kueue's checker (test/performance/scheduler/checker) fails a run whose scheduler wall time exceeds
``cmd.maxWallMs``, whose ClusterQueue class usage falls below ``clusterQueueClassesMinUsage`` (percent)
or whose workload class's mean time to admission exceeds ``wlClassesMaxAvgTimeToAdmissionMs``. The
same thresholds judge both implementations here, on the figures the kueue-baseline driver computes as
Kueue does (``figures``). ``parse`` is pure; ``load`` reads the file from the Kueue module kqbench builds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.drivers.kueuebaseline import figures
from harness.toolchain import gomodules, versions

CONFIGS = "test/performance/scheduler/configs"
_MEAN = re.compile(r"(?:mean=|Average value )([0-9][0-9_.]*)|#\s*([0-9][0-9_.]*)\s*/\s*[0-9][0-9_.]*\s*/")
"""A mean in a comment: `mean=...`, `Average value ...`, or first of `# mean / stddev / CV%` (the TAS files)."""


@dataclass(frozen=True, slots=True)
class Bound:
    metric: str
    """The driver's figure name (figures.Figures.metrics)."""
    limit: float
    upper: bool
    """True: the figure must not exceed ``limit``; False: must not fall below it."""
    average: float | None = None
    """The mean Kueue's comment gives for its CI runs, in the figure's unit (None when it gives none)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    bound: Bound
    value: float | None

    @property
    def passed(self) -> bool | None:
        """None when the run has no such figure."""
        if self.value is None:
            return None
        return self.value <= self.bound.limit if self.bound.upper else self.value >= self.bound.limit


def parse(text: str) -> tuple[Bound, ...]:
    """The bounds of a rangespec.yaml, in the driver's units (s, %)."""
    data = yaml.safe_load(text) or {}
    means = _comment_means(text)
    bounds = []
    wall = (data.get("cmd") or {}).get("maxWallMs")
    if wall is not None:
        bounds.append(Bound("wall_seconds", wall / 1000, True, _scaled(means.get("maxWallMs"), 1000)))
    for cls, percent in (data.get("clusterQueueClassesMinUsage") or {}).items():
        # one ClusterQueue class in Kueue's configurations: the driver's figure is over all queues
        bounds.append(Bound("cq_usage_percent", float(percent), False, means.get(str(cls))))
    for cls, ms in (data.get("wlClassesMaxAvgTimeToAdmissionMs") or {}).items():
        bounds.append(Bound(f"time_to_admission_seconds[{cls}]", ms / 1000, True, _scaled(means.get(str(cls)), 1000)))
    return tuple(bounds)


def verdicts(bounds: tuple[Bound, ...], figures: dict[str, float]) -> list[Verdict]:
    """Each bound against the run's figure of that name."""
    return [Verdict(bound, figures.get(bound.metric)) for bound in bounds]


def load(config: str, kueue_module: Path) -> tuple[Bound, ...]:
    """The bounds of ``config`` (baseline, large-scale, tas) in a Kueue module's source tree."""
    return parse((kueue_module / CONFIGS / config / "rangespec.yaml").read_text())


def reference(config: str, bounds: tuple[Bound, ...]) -> figures.KueueReference:
    """What a run of ``config`` is set beside: for the baseline its published figures and quoted averages,
    else none; the bounds' limits (and averages where the figures module quotes none)."""
    base = figures.BASELINE if config == "baseline" else figures.KueueReference()
    averages = {b.metric: b.average for b in bounds if b.average is not None}
    return figures.KueueReference(dict(base.published), {**averages, **base.averages},
                                  {b.metric: (b.limit, b.upper) for b in bounds})


def config_version(config: str) -> str:
    """The Kueue module version ``config`` was ported from (harness/versions.toml [kueue.perf_configs])."""
    return dict(versions.load_pins().kueue_perf_configs)[config]


def shipped(config: str, module_dir: Callable[[str, str], Path]) -> tuple[Bound, ...]:
    """The bounds of ``config`` from the module it was ported from; none when that module is not in the
    Go module cache (the toolchain fetches it when it builds Kueue)."""
    module = module_dir(gomodules.KUEUE_MODULE, config_version(config))
    path = module / CONFIGS / config / "rangespec.yaml"
    return parse(path.read_text()) if path.is_file() else ()


def _number(found: re.Match) -> float:
    return float((found.group(1) or found.group(2)).replace("_", ""))


def _comment_means(text: str) -> dict[str, float]:
    """The mean each key's comment gives: on the comment line(s) just above it, or after it on its line."""
    means: dict[str, float] = {}
    pending: float | None = None
    for line in text.splitlines():
        stripped = line.strip()
        found = _MEAN.search(stripped)
        if stripped.startswith("#"):
            pending = _number(found) if found else pending
            continue
        key = stripped.split(":", 1)[0].strip() if ":" in stripped else ""
        value = _number(found) if found else pending
        if key and value is not None and stripped.split(":", 1)[1].split("#")[0].strip():
            means[key] = value
        pending = None if stripped else pending
    return means


def _scaled(value: float | None, divisor: float) -> float | None:
    return None if value is None else value / divisor
