"""Metrics every publisher reports: what it wrote, what failed, how stale its positions are."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

STALENESS_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800)


class PublishMetrics:
    def __init__(self, strategy: str, registry: CollectorRegistry) -> None:
        labels = ["strategy"]
        self.strategy = strategy
        self.changes = Counter("kqbench_positions_changes",
                               "Position changes to publish (status-field: each one a write; the demand).",
                               labels, registry=registry)
        self.writes = Counter("kqbench_positions_writes", "API writes issued to publish positions.",
                              labels + ["resource"], registry=registry)
        self.write_bytes = Counter("kqbench_positions_write_bytes", "Request bytes of those writes.",
                                   labels + ["resource"], registry=registry)
        self.failures = Counter("kqbench_positions_write_failures", "Failed position writes by reason.",
                                labels + ["reason"], registry=registry)
        self.largest_object = Gauge("kqbench_positions_largest_object_bytes",
                                    "Largest object a position write succeeded with.", labels, registry=registry)
        self.staleness = Histogram("kqbench_positions_staleness_seconds",
                                   "From a queue change to the write that published it.", labels,
                                   buckets=STALENESS_BUCKETS, registry=registry)
        self.backlog = Gauge("kqbench_positions_backlog", "Position updates computed but not yet written.", labels,
                             registry=registry)
        self.coverage = Gauge("kqbench_positions_coverage_ratio",
                              "Share of pending workloads whose position is published (min over ClusterQueues).",
                              labels, registry=registry)
        self.first_failure_pending = Gauge(
            "kqbench_positions_first_too_large_pending",
            "Pending workloads in the queue when a write first failed for size (0: never).", labels, registry=registry)
        self.first_failure_bytes = Gauge(
            "kqbench_positions_first_too_large_bytes", "Size of that first refused object.", labels, registry=registry)

    def wrote(self, resource: str, size: int) -> None:
        self.writes.labels(self.strategy, resource).inc()
        self.write_bytes.labels(self.strategy, resource).inc(size)

    def failed(self, reason: str) -> None:
        self.failures.labels(self.strategy, reason).inc()
