"""The five strategies by name: what each needs from the scheduler process, where users read
positions, and what they read there (pure). Every other module asks here: the scheduler, the
scenarios' validation, the load (which query mode to drive) and the summaries."""

from __future__ import annotations

from dataclasses import dataclass

STATUS_FIELD = "status-field"
SINGLE_OBJECT = "single-object"
CQ_STATUS_TOPN = "cq-status-topn"
AGGREGATED_SNAPSHOT = "aggregated-snapshot"
AGGREGATED_INDEXED = "aggregated-indexed"


@dataclass(frozen=True, slots=True)
class Strategy:
    name: str
    core_positions: str
    """The core's position structure ('indexed' or 'snapshot')."""
    visibility_api: bool
    """Serve the aggregated visibility API: the harness registers its APIService only then."""
    query_mode: str
    """Where a user reads positions: one of loadtests.settings.QUERY_MODES (the position querier's modes)."""
    summary: str
    """What a user reads there."""


STRATEGIES = {
    s.name: s for s in (
        Strategy(STATUS_FIELD, "indexed", False, "workload-status",
                 "every pending Workload's status carries its positions"),
        Strategy(SINGLE_OBJECT, "indexed", False, "single-object",
                 "one object per ClusterQueue holds the whole ordered list"),
        Strategy(CQ_STATUS_TOPN, "indexed", False, "cq-status",
                 "ClusterQueue status holds the first N, refreshed every T s"),
        Strategy(AGGREGATED_SNAPSHOT, "snapshot", True, "visibility-cq", "visibility API, copy + sort per request"),
        Strategy(AGGREGATED_INDEXED, "indexed", True, "visibility-cq", "visibility API over an order-statistic index"),
    )
}


def get(name: str) -> Strategy:
    try:
        return STRATEGIES[name]
    except KeyError:
        raise ValueError(f"strategy {name!r} is unknown: use one of {', '.join(STRATEGIES)}") from None


MAX_TOPN = 4000
"""The most head entries a ClusterQueue status may list (Kueue's QueueVisibility allowed up to 4000)."""


@dataclass(frozen=True, slots=True)
class PublishSettings:
    min_interval_seconds: float = 0.2
    """status-field: recompute positions at most this often (changes in between coalesce)."""
    single_object_interval_seconds: float = 1.0
    """single-object: rewrite each queue's object at most this often."""
    topn: int = 10
    """cq-status-topn: how many head workloads ClusterQueue status lists (1 to MAX_TOPN)."""
    topn_interval_seconds: float = 5.0
    """cq-status-topn: refresh period (Kueue's QueueVisibility default was 5 s)."""

    def __post_init__(self) -> None:
        if not 1 <= self.topn <= MAX_TOPN:
            raise ValueError(f"topn must be between 1 and {MAX_TOPN} (got {self.topn})")
        if min(self.min_interval_seconds, self.single_object_interval_seconds, self.topn_interval_seconds) <= 0:
            raise ValueError("publishing intervals must be > 0 seconds")
