"""The Locust driver's phases: fill the queues, churn, query positions, drain."""

from __future__ import annotations

from typing import Literal

from pydantic import NonNegativeInt, PositiveFloat, PositiveInt

from harness.scenarios import base, sections


class FillPhase(base.Model):
    kind: Literal["fill"] = "fill"
    pending: NonNegativeInt = 1000
    """Workloads pending across all ClusterQueues at the end of the phase."""
    timeout_seconds: PositiveFloat = 600
    bulk: bool = False
    """Write `pending` straight into etcd as a backlog (harness.workloads.backlog: no churn user owns it,
    one priority below the churn mix, finished by a keeper when admitted) instead of churn users' POSTs;
    the phase ends when the scheduler holds them all. For 100k and more pending."""
    churn_pending: NonNegativeInt = 50
    """With `bulk`: the Workloads churn users keep pending of their own, on top of the backlog."""
    local_queues: tuple[str, ...] = ()
    """With `bulk`: the LocalQueues (names in queues.local_queues) the backlog goes to; empty: every one. A
    backlog in a queue no Job uses stays pending beside a jobs phase (its ClusterQueue without quota)."""

    def check_scenario(self, scenario: sections.ScenarioFields) -> str | None:
        if self.local_queues and not self.bulk:
            return "fill.local_queues is read only with bulk: true (a churn fill spreads over every LocalQueue)"
        return sections.unknown_local_queues(scenario, self.local_queues)


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
