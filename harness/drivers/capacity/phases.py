"""The capacity driver's phase: a search over one load axis, with its break conditions."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, NonNegativeInt, PositiveFloat, PositiveInt, model_validator

from harness.drivers.capacity import conditions, searching
from harness.scenarios import base


class CapacityPhase(base.Model):
    """Raise `vary` from `from` to `to` (geometric, then bisection; below `from` if it already breaks)
    until a break condition holds.

    Each step: delete every Workload and restart the scheduler (a fresh start, see docs/capacity.md), fill
    to the step's pending with churn, queries and bystanders running, hold for `hold_seconds`,
    then judge the step from what the hold measured.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)  # `from`/`to` or start/stop

    kind: Literal["capacity"] = "capacity"
    vary: Literal["queue.pending"] = "queue.pending"
    """The load axis: pending Workloads kept in the queues (churn goes on at `load.rates`)."""
    start: PositiveInt = Field(1000, alias="from")
    stop: PositiveInt = Field(100_000, alias="to")
    factor: float = Field(2.0, gt=1)
    relative_resolution: float = Field(0.10, gt=0, lt=1)
    absolute_resolution: PositiveInt = 100
    max_steps: PositiveInt = 12
    hold_seconds: PositiveFloat = 60
    """Measured window per step once pending is at its target: a minute holds ~100 position queries."""
    fill_timeout_seconds: PositiveFloat = 900
    """Upper bound on reaching a step's pending; the hold starts then even if pending is short (the
    table shows the pending reached)."""
    reset_timeout_seconds: PositiveFloat = 300
    """Upper bound on deleting a step's Workloads."""
    bulk: bool = False
    """Fill each step by writing its pending straight into etcd as a backlog (as a `bulk` fill does:
    one priority below the churn mix, admitted ones finished by a keeper), the churn keeping
    `churn_pending` of its own on top; without it, churn users POST the whole step, which on 2 cores
    reaches about 16k pending within the fill timeout."""
    churn_pending: NonNegativeInt = 50
    """With `bulk`: the Workloads churn users keep pending of their own, beside the backlog."""
    thresholds: conditions.BreakThresholds = conditions.BreakThresholds()

    @model_validator(mode="after")
    def _plan_is_valid(self) -> "CapacityPhase":
        self.plan()  # a ValueError here becomes the scenario's one-line error
        if self.bulk and self.churn_pending >= self.start:
            raise ValueError(f"churn_pending ({self.churn_pending}) must be below the search's first load "
                             f"(from: {self.start}): the backlog is the rest of each step's pending")
        return self

    def plan(self) -> searching.SearchPlan:
        return searching.SearchPlan(self.start, self.stop, self.factor, self.relative_resolution,
                                    self.absolute_resolution, self.max_steps)


PHASES = (CapacityPhase,)
