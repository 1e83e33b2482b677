"""The TAS object-size driver's phase: one Workload at a time, each placing more pods one per host."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, NonNegativeFloat, PositiveFloat, PositiveInt, field_validator

from harness.nodes import topologies
from harness.scenarios import base


class ObjectSizePhase(base.Model):
    """For each pod set size, smallest first: one Workload asking for that many one-CPU pods preferring one
    block (so each pod takes a host of one-CPU nodes), until admitted or `admit_seconds`; then deleted."""

    kind: Literal["tas-object-size"] = "tas-object-size"
    pods: list[PositiveInt] = Field(default_factory=lambda: [1_000, 10_000, 50_000, 90_000, 100_000], min_length=1)
    """Pod set sizes, each at most the cluster's node count (run smallest first)."""
    local_queue: str = "lq"
    namespace: str = "kqbench-tas"
    """The LocalQueue the Workloads go to (one of the scenario's queues.local_queues)."""
    cpu: str = "1"
    """Each pod's CPU request: the nodes' whole CPU, so that a pod takes a host."""
    preferred_level: str = topologies.BLOCK_LABEL
    """The Workload's topologyRequest.preferred (a level of the flavor's Topology)."""
    admit_seconds: PositiveFloat = 180.0
    """Bound on each Workload's admission; past it the Workload counts as not admitted."""
    watch_seconds: NonNegativeFloat = 30.0
    """After a Workload's bound: how long to count the scheduler's further status writes of it."""

    @field_validator("pods")
    @classmethod
    def _smallest_first(cls, pods: list[int]) -> list[int]:
        return sorted(set(pods))


PHASES = (ObjectSizePhase,)
