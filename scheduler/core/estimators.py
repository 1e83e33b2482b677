"""The admission-time estimators by name: one table of what each reads, one ``create`` with a useful error.

The contract is ``estimates``; the members import only it. Pure.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from scheduler.core import admissionrates, forecasting, waitaveraging
from scheduler.core.estimates import Estimator
from scheduler.core.runtimes import RuntimeBook

MOVING_AVERAGE = waitaveraging.NAME
RATE = admissionrates.NAME
SIMULATOR = forecasting.NAME


@dataclass(frozen=True, slots=True)
class EstimatorSettings:
    """Settings of every estimator; ``create`` hands each its own."""

    moving_average: waitaveraging.MovingAverageSettings = field(default_factory=waitaveraging.MovingAverageSettings)
    rate: admissionrates.RateSettings = field(default_factory=admissionrates.RateSettings)
    simulator: forecasting.SimulatorSettings = field(default_factory=forecasting.SimulatorSettings)


@dataclass(frozen=True, slots=True)
class Member:
    name: str
    reads: str
    """What it needs in a snapshot."""
    make: Callable[[EstimatorSettings, RuntimeBook, Callable[[], float]], Estimator]
    needs_world: bool = False
    """Its snapshot must carry the world (``estimates.snapshot_of(..., with_world=True)``) and its runtimes
    matter: the edge copies them only for a member that reads them."""


MEMBERS = {
    m.name: m for m in (
        Member(MOVING_AVERAGE, "recent admissions (wait per ClusterQueue or LocalQueue)",
               lambda s, book, clock: waitaveraging.MovingAverage(s.moving_average)),
        Member(RATE, "recent admissions (rate per ClusterQueue and flavor) and pending order",
               lambda s, book, clock: admissionrates.AdmissionRate(s.rate)),
        Member(SIMULATOR, "the world (objects, admitted and pending Workloads) and runtimes",
               lambda s, book, clock: forecasting.Simulator(s.simulator, book, clock), needs_world=True),
    )
}


def create(name: str, settings: EstimatorSettings | None = None, book: RuntimeBook | None = None,
           clock: Callable[[], float] = time.process_time) -> Estimator:
    """A new estimator by name; ``book`` (runtimes) and ``clock`` (CPU seconds) matter to the simulator."""
    try:
        member = MEMBERS[name]
    except KeyError:
        raise ValueError(f"estimator {name!r} is unknown: use one of {', '.join(MEMBERS)}") from None
    return member.make(settings or EstimatorSettings(), book or RuntimeBook(), clock)
