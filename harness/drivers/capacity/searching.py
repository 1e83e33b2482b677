"""Which load to try next: geometric steps up to a ceiling, then bisection to a resolution (pure).

The search knows nothing of clusters: a step function turns a load into a `Verdict` (held, or the
break conditions that held), and `Search` decides the next load from the verdicts so far.

- Geometric stage: `start`, `start * factor`, ... up to `stop` (always tried last when the
  factor overshoots it), until a step breaks.
- Descent stage, only when `start` itself broke: `start / factor`, `start / factor**2`, ... down
  to `absolute_resolution`, until a step holds (a capacity report should say what a design holds,
  not only that it is below the range someone guessed).
- Bisection stage: between the last load that held and the first that broke, until their gap is
  within the resolution: `max(relative_resolution * held, absolute_resolution)`.
- A step that raises counts as broken with its error as the reason; the search goes on (a cluster
  that is dead breaks every step, so `max_consecutive_errors` ends it early).
- Every search is bounded by `max_steps`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

GEOMETRIC = "geometric"
DESCENT = "descent"
BISECTION = "bisection"
ERROR = "error"
"""The condition name a step that raised is broken by."""

# How a search ended, as written in the capacity table.
BROKE = "broke"
"""The break point is known within the resolution."""
HELD_TO_STOP = "held-to-stop"
"""Every step up to `stop` held: capacity is at least `stop`."""
BROKE_BELOW_FLOOR = "broke-below-floor"
"""`start` broke and so did every descent step down to `absolute_resolution`: capacity is below it."""
UNRESOLVED = "unresolved"
"""Steps or errors ran out before the gap reached the resolution."""
INTERRUPTED = "interrupted"
NO_STEPS = "no-steps"


@dataclass(frozen=True, slots=True)
class SearchPlan:
    """The searched range and when to stop. Loads are integers (Workloads, Workloads per second)."""

    start: int
    stop: int
    factor: float = 2.0
    """Geometric step: 2 reaches 100x in 7 steps and leaves a gap that 3-4 bisections close to 10%."""
    relative_resolution: float = 0.10
    """Stop bisecting when first-broken - last-held <= this share of last-held: 10% is below the
    run-to-run spread of a break point on a shared 2-core machine's apiserver."""
    absolute_resolution: int = 100
    """...or when the gap is at most this many: finer steps than this measure noise, not capacity."""
    max_steps: int = 12
    max_consecutive_errors: int = 2
    """Steps in a row that raised before the search gives up (the cluster is probably gone)."""

    def __post_init__(self) -> None:
        if self.start < 1 or self.stop < self.start:
            raise ValueError(f"search range must satisfy 1 <= from <= to (got from={self.start}, to={self.stop})")
        if self.factor <= 1:
            raise ValueError(f"search factor must be > 1 (got {self.factor})")
        if self.relative_resolution <= 0 or self.absolute_resolution < 1:
            raise ValueError("search resolution must be > 0 (relative) and >= 1 (absolute)")
        if self.max_consecutive_errors < 1:
            raise ValueError("max_consecutive_errors must be >= 1")
        if len(self.geometric_loads()) > self.max_steps:
            raise ValueError(f"{len(self.geometric_loads())} geometric steps from {self.start} to {self.stop} exceed "
                             f"max_steps={self.max_steps}: raise the factor or max_steps")

    def geometric_loads(self) -> tuple[int, ...]:
        loads = []
        load = float(self.start)
        while round(load) < self.stop:
            if not loads or round(load) > loads[-1]:
                loads.append(round(load))
            load *= self.factor
        return (*loads, self.stop)

    def resolution_at(self, held: int) -> float:
        return max(self.relative_resolution * held, float(self.absolute_resolution))

    def resolved(self, held: int, broke: int) -> bool:
        return broke - held <= self.resolution_at(held)

    def describe(self) -> str:
        return (f"geometric x{self.factor:g} from {self.start} to {self.stop}, then bisection to "
                f"max({self.relative_resolution:.0%} of the load held, {self.absolute_resolution}), "
                f"at most {self.max_steps} steps")


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one step found: the break conditions that held (none: the load held) and its figures."""

    broken: tuple[str, ...] = ()
    detail: str = ""
    """One line on what broke and by how much (or why the step failed)."""
    figures: Mapping[str, float] = field(default_factory=dict)

    @property
    def held(self) -> bool:
        return not self.broken

    @classmethod
    def failed(cls, error: BaseException) -> "Verdict":
        lines = str(error).strip().splitlines()
        return cls((ERROR,), f"{type(error).__name__}: {lines[0] if lines else ''}".rstrip(": "))


@dataclass(frozen=True, slots=True)
class Step:
    index: int
    load: int
    stage: str
    verdict: Verdict


@dataclass(frozen=True, slots=True)
class Outcome:
    """The search's answer: the largest load that held below the first that broke."""

    conclusion: str
    max_held: int | None
    first_broken: int | None
    breaking_step: Step | None
    """The step at `first_broken` (its verdict names the conditions)."""
    steps: tuple[Step, ...]
    gap: int | None
    """first_broken - max_held, the resolution actually reached."""
    out_of_order: tuple[int, ...] = ()
    """Loads that held above `first_broken` (noise near the edge), reported rather than hidden."""


class Search:
    """Decides the next load from the verdicts so far. One search per strategy."""

    def __init__(self, plan: SearchPlan) -> None:
        self.plan = plan
        self._geometric = list(plan.geometric_loads())
        self._steps: list[Step] = []
        self._held: int | None = None
        self._broke: int | None = None

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(self._steps)

    def next_load(self) -> int | None:
        """The next load to try, or None when the search is over."""
        if len(self._steps) >= self.plan.max_steps or self._errors_in_a_row() >= self.plan.max_consecutive_errors:
            return None
        if self._broke is None:
            return self._geometric[len(self._steps)] if len(self._steps) < len(self._geometric) else None
        if self._held is None:
            return self._descent_load()
        if self.plan.resolved(self._held, self._broke):
            return None
        return midpoint(self._held, self._broke, self.plan.absolute_resolution)

    def record(self, load: int, verdict: Verdict) -> Step:
        stage = GEOMETRIC if self._broke is None else DESCENT if self._held is None else BISECTION
        step = Step(len(self._steps), load, stage, verdict)
        self._steps.append(step)
        if verdict.held:
            self._held = load if self._held is None else max(self._held, load)
        elif self._broke is None or load < self._broke:
            self._broke = load
        return step

    def outcome(self, interrupted: bool = False) -> Outcome:
        return conclude(self.plan, self._steps, interrupted)

    def _descent_load(self) -> int | None:
        """Below the lowest load that broke by the geometric factor, the floor tried last; None after it."""
        lowest = min(step.load for step in self._steps)
        floor = self.plan.absolute_resolution
        return max(math.floor(lowest / self.plan.factor), floor) if lowest > floor else None

    def _errors_in_a_row(self) -> int:
        count = 0
        for step in reversed(self._steps):
            if ERROR not in step.verdict.broken:
                break
            count += 1
        return count


def midpoint(held: int, broke: int, granularity: int) -> int:
    """Halfway, rounded to the granularity when that stays strictly between (tables read better)."""
    middle = (held + broke) / 2
    rounded = int(round(middle / granularity) * granularity)
    if held < rounded < broke:
        return rounded
    return held + max(1, (broke - held) // 2) if broke - held > 1 else broke


def conclude(plan: SearchPlan, steps: list[Step] | tuple[Step, ...], interrupted: bool = False) -> Outcome:
    """The outcome of recorded steps; also re-run after a post-pass changes verdicts."""
    steps = tuple(steps)
    broken = [s for s in steps if not s.verdict.held]
    first = min(broken, key=lambda s: s.load) if broken else None
    below = [s.load for s in steps if s.verdict.held and (first is None or s.load < first.load)]
    max_held = max(below) if below else None
    above = tuple(sorted(s.load for s in steps if s.verdict.held and first is not None and s.load > first.load))
    gap = None if first is None or max_held is None else first.load - max_held
    if interrupted:
        conclusion = INTERRUPTED
    elif not steps:
        conclusion = NO_STEPS
    elif first is None:
        conclusion = HELD_TO_STOP if max_held == plan.stop else UNRESOLVED
    elif max_held is None:
        conclusion = BROKE_BELOW_FLOOR if first.load <= plan.absolute_resolution else UNRESOLVED
    else:
        conclusion = BROKE if plan.resolved(max_held, first.load) else UNRESOLVED
    return Outcome(conclusion, max_held, None if first is None else first.load, first, steps, gap, above)


def run(search: Search, step: Callable[[int], Verdict], on_step: Callable[[Step], None] = lambda s: None) -> Outcome:
    """Drive a search to its end. A step that raises is broken with its reason; Ctrl-C propagates
    (the caller keeps `search.steps`, each already handed to `on_step`)."""
    while (load := search.next_load()) is not None:
        try:
            verdict = step(load)
        except Exception as error:  # a broken step, not a broken search
            verdict = Verdict.failed(error)
        on_step(search.record(load, verdict))
    return search.outcome()


def steps_needed(plan: SearchPlan) -> int:
    """Upper bound on steps for a search that breaks in the geometric stage (for duration estimates;
    a descent below `start` adds its own steps)."""
    worst_gap_ratio = plan.factor - 1
    bisections = max(0, math.ceil(math.log2(worst_gap_ratio / plan.relative_resolution)))
    return min(plan.max_steps, len(plan.geometric_loads()) + bisections)
