"""Break conditions: thresholds (part of the capacity phase spec) and their evaluation (pure).

A step's measured figures are compared with each threshold; every condition that holds is named
in the step's verdict. One condition is cross-strategy: admissions/s below a share of what
`aggregated-indexed` achieves at the same load can only be judged once that strategy has run, so
it is evaluated in a post-pass over all strategies' steps (`admissions_postpass`), not per step.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, NonNegativeInt, PositiveFloat

from harness.drivers.capacity import searching
from scheduler.publishing import strategies

REFERENCE_STRATEGY = strategies.AGGREGATED_INDEXED
"""The design the admissions condition compares with: zero writes, the cheapest for the apiserver."""

WRITE_REFUSED = "write_refused"
STALENESS = "staleness_p99"
BYSTANDER = "bystander_p99"
LIST = "list_p99"
THROTTLED = "throttled"
QUERY = "query_p99"
ADMISSIONS = "admissions_vs_indexed"
FILL_SHORT = "fill_short"


class BreakThresholds(BaseModel):
    """When a step counts as broken. Defaults and where they come from:"""

    model_config = ConfigDict(extra="forbid", frozen=True)

    refused_position_writes: NonNegativeInt = 0
    """Position writes refused by etcd or kube-apiserver (too large, 413, 422) tolerated: a refused
    write is a position users never see, so the first one breaks."""
    staleness_p99_seconds: PositiveFloat = 30.0
    """How old the position a user reads may be (p99): 30 s, the SLO of a slow list call."""
    bystander_p99_seconds: PositiveFloat = 1.0
    """Other users' single-object calls (p99): SIG-scalability's mutating/single-object API SLO."""
    list_p99_seconds: PositiveFloat = 30.0
    """Any LIST (p99): SIG-scalability's cluster-scoped list SLO."""
    throttled_share: PositiveFloat = 0.001
    """429s and APF rejections as a share of all requests: 0.1% means clients see retries routinely."""
    query_p99_seconds: PositiveFloat = 1.0
    """Reading a position (p99): a user-facing read, held to the single-object SLO."""
    admissions_share_of_indexed: PositiveFloat = 0.9
    """Admissions/s below this share of aggregated-indexed's at the same load: the design slows the
    scheduler itself (10% is above the spread of repeated runs here, about 6%)."""
    min_fill_share: PositiveFloat = 0.8
    """Pending at the start of the hold below this share of the step's target: the apiserver could
    not take the churn's creates at this load, so the step never held its load (the churn's own
    view lags admissions by a refresh period, ~100-200 Workloads here: hence not 1.0)."""


@dataclass(frozen=True, slots=True)
class StepFigures:
    """What one step measured; None when not measured (a condition without its figure is not judged)."""

    pending: float | None = None
    refused_position_writes: float | None = None
    staleness_p99_seconds: float | None = None
    bystander_p99_seconds: float | None = None
    list_p99_seconds: float | None = None
    requests: float | None = None
    throttled_requests: float | None = None
    """429 answers plus APF rejections."""
    query_p99_seconds: float | None = None
    admissions_per_second: float | None = None
    # Not judged; drawn as curves and used by the extrapolation.
    position_writes_per_second: float | None = None
    """Position writes the apiserver accepted (delivered)."""
    position_writes_demanded_per_second: float | None = None
    """Position writes the design needed (delivered + growth of the unwritten backlog)."""
    position_write_bytes_per_second: float | None = None
    largest_object_bytes: float | None = None
    apiserver_rss_bytes: float | None = None
    etcd_rss_bytes: float | None = None
    admissions_share_of_indexed: float | None = None
    """Set by the post-pass: admissions/s over aggregated-indexed's at the same load."""
    fill_share: float | None = None
    """Pending the scheduler reported when the hold began, over the step's target."""
    visibility_server_p99_seconds: float | None = None
    """The scheduler's own time per visibility request (p99, its histogram), over the hold."""
    visibility_server_mean_seconds: float | None = None
    scheduler_cores: float | None = None
    """Cores used over the hold by the scheduler, kube-apiserver, etcd, the whole machine, and the
    machine less those three (the load generator, the harness, the other cluster processes)."""
    apiserver_cores: float | None = None
    etcd_cores: float | None = None
    machine_cores: float | None = None
    others_cores: float | None = None
    cores_available: float | None = None
    """The machine's logical CPUs (what `machine_cores` is out of)."""

    def as_dict(self) -> dict[str, float]:
        """The measured figures only (for tables and verdicts)."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None and not math.isnan(v)}

    @classmethod
    def from_dict(cls, figures: Mapping[str, float]) -> "StepFigures":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: float(v) for k, v in figures.items() if k in names})

    @property
    def throttled_share(self) -> float | None:
        if self.throttled_requests is None or not self.requests:
            return None
        return self.throttled_requests / self.requests


@dataclass(frozen=True, slots=True)
class Breach:
    name: str
    value: float
    threshold: float
    detail: str


@dataclass(frozen=True, slots=True)
class _Condition:
    name: str
    figure: str
    threshold: str
    unit: str
    says: str
    below: bool = False
    """Broken when the figure falls below the threshold (else when it rises above)."""


# In the order a capacity table names them when several break at once: hard failures first.
CONDITIONS: tuple[_Condition, ...] = (
    _Condition(WRITE_REFUSED, "refused_position_writes", "refused_position_writes", "", "position writes refused"),
    _Condition(THROTTLED, "throttled_share", "throttled_share", "", "share of requests throttled (429/APF)"),
    _Condition(STALENESS, "staleness_p99_seconds", "staleness_p99_seconds", "s", "position staleness p99"),
    _Condition(QUERY, "query_p99_seconds", "query_p99_seconds", "s", "position query p99"),
    _Condition(BYSTANDER, "bystander_p99_seconds", "bystander_p99_seconds", "s", "bystander p99"),
    _Condition(LIST, "list_p99_seconds", "list_p99_seconds", "s", "LIST p99"),
    _Condition(FILL_SHORT, "fill_share", "min_fill_share", "", "pending at the hold / target", below=True),
)
NAMES = tuple(c.name for c in CONDITIONS) + (ADMISSIONS,)


def evaluate(thresholds: BreakThresholds, figures: StepFigures) -> tuple[Breach, ...]:
    """The per-step conditions that hold, in CONDITIONS order (the cross-strategy one is not here)."""
    found = []
    for condition in CONDITIONS:
        value = getattr(figures, condition.figure)
        limit = float(getattr(thresholds, condition.threshold))
        if value is None or math.isnan(value) or (value >= limit if condition.below else value <= limit):
            continue
        found.append(Breach(condition.name, value, limit, f"{condition.says} {_fmt(value, condition.unit)} "
                                                          f"{'<' if condition.below else '>'} {_fmt(limit, condition.unit)}"))
    return tuple(found)


SATURATED_SHARE = 0.9
"""A machine whose processes kept this share of its cores busy over the hold had no CPU to spare."""


def whose_limit(figures: StepFigures) -> str:
    """Whether a broken step ran out of the machine's cores, and who used them (empty when not measured)."""
    if figures.machine_cores is None or not figures.cores_available:
        return ""
    parts = [f"{name} {value:.2f}" for name, value in (("kube-apiserver", figures.apiserver_cores),
                                                        ("scheduler", figures.scheduler_cores),
                                                        ("etcd", figures.etcd_cores),
                                                        ("others", figures.others_cores)) if value is not None]
    busy = f"{figures.machine_cores:.2f} of {figures.cores_available:.0f} cores busy ({', '.join(parts)})"
    saturated = figures.machine_cores >= SATURATED_SHARE * figures.cores_available
    return f"the machine's limit: {busy}" if saturated else f"not the machine's cores: {busy}"


def verdict(thresholds: BreakThresholds, figures: StepFigures) -> searching.Verdict:
    breaches = evaluate(thresholds, figures)
    detail = "; ".join(b.detail for b in breaches)
    if breaches and (limit := whose_limit(figures)):
        detail += f" [{limit}]"
    return searching.Verdict(tuple(b.name for b in breaches), detail, figures.as_dict())


def reference_admissions(steps: Sequence[searching.Step], load: int) -> float | None:
    """The reference's admissions/s at `load`: measured there, else interpolated between the
    nearest loads below and above (None outside its measured range)."""
    points = sorted((s.load, s.verdict.figures["admissions_per_second"]) for s in steps
                    if "admissions_per_second" in s.verdict.figures)
    for at, value in points:
        if at == load:
            return value
    below = [p for p in points if p[0] < load]
    above = [p for p in points if p[0] > load]
    if not below or not above:
        return None
    (x0, y0), (x1, y1) = below[-1], above[0]
    return y0 + (y1 - y0) * (load - x0) / (x1 - x0)


def admissions_postpass(thresholds: BreakThresholds, steps_by_strategy: Mapping[str, Sequence[searching.Step]],
                        reference: str = REFERENCE_STRATEGY) -> dict[str, tuple[searching.Step, ...]]:
    """Every strategy's steps with the admissions condition added where it holds.

    Run after all strategies: a step that held may now be broken, and `searching.conclude` then
    gives a coarser answer (the search is not re-run). Without the reference nothing changes.
    """
    reference_steps = steps_by_strategy.get(reference, ())
    amended: dict[str, tuple[searching.Step, ...]] = {}
    for strategy, steps in steps_by_strategy.items():
        if strategy == reference or not reference_steps:
            amended[strategy] = tuple(steps)
            continue
        amended[strategy] = tuple(_with_admissions(thresholds, step, reference_admissions(reference_steps, step.load))
                                  for step in steps)
    return amended


def _with_admissions(thresholds: BreakThresholds, step: searching.Step, expected: float | None) -> searching.Step:
    achieved = step.verdict.figures.get("admissions_per_second")
    if expected is None or achieved is None or expected <= 0:
        return step
    share = achieved / expected
    old = step.verdict
    figures = {**old.figures, "admissions_share_of_indexed": share}  # in the table whether or not it broke
    if share >= thresholds.admissions_share_of_indexed or ADMISSIONS in old.broken:
        return dataclasses.replace(step, verdict=dataclasses.replace(old, figures=figures))
    detail = (f"admissions {achieved:.1f}/s = {share:.0%} of {REFERENCE_STRATEGY}'s {expected:.1f}/s "
              f"< {thresholds.admissions_share_of_indexed:.0%}")
    amended = searching.Verdict(old.broken + (ADMISSIONS,), "; ".join(d for d in (old.detail, detail) if d), figures)
    return dataclasses.replace(step, verdict=amended)


def _fmt(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value:.2f} s"
    if 0 < value < 1:
        return f"{value:.2%}"
    return f"{value:g}"
