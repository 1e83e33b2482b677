"""The Locust driver's phases: fill the queues, churn, query positions, drain."""

from __future__ import annotations

from typing import Literal

from pydantic import NonNegativeInt, PositiveFloat, PositiveInt

from harness.scenarios import base


class FillPhase(base.Model):
    kind: Literal["fill"] = "fill"
    pending: NonNegativeInt = 1000
    """Workloads pending across all ClusterQueues at the end of the phase."""
    timeout_seconds: PositiveFloat = 600


class ChurnPhase(base.Model):
    kind: Literal["churn"] = "churn"
    seconds: PositiveFloat = 60


class QueryPhase(base.Model):
    kind: Literal["query"] = "query"
    seconds: PositiveFloat = 30
    limit: PositiveInt = 100
    max_offset: NonNegativeInt = 0


class DrainPhase(base.Model):
    """Drives no load: the phase is marked and ends at once (waiting for pending == 0 needs a pending
    count from the scheduler, which it does not publish yet); `timeout_seconds` is kept for then."""

    kind: Literal["drain"] = "drain"
    timeout_seconds: PositiveFloat = 300


PHASES = (FillPhase, ChurnPhase, QueryPhase, DrainPhase)
