"""The controller's Prometheus metrics, on a registry of its own (no global state)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LATENCY_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800)
FAST_BUCKETS = (0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5)
WAIT_BUCKETS = (1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400)
"""Seconds from now to an expected admission: a second to a day (a queue's head to a deep queue's tail)."""
REFRESH_CPU_BUCKETS = FAST_BUCKETS + (5, 10)
"""CPU seconds of one estimate refresh: the simulator's budget goes up to a minute, its default is one."""


class SchedulerMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.pending = Gauge("kqbench_scheduler_pending_workloads", "Pending workloads per ClusterQueue (parked included).",
                             ["cluster_queue"], registry=r)
        self.admitted_active = Gauge("kqbench_scheduler_admitted_workloads", "Workloads holding quota per ClusterQueue.",
                                     ["cluster_queue"], registry=r)
        self.admitted_total = Counter("kqbench_scheduler_admitted", "Admissions written to the API.", ["cluster_queue"],
                                      registry=r)
        self.evicted_total = Counter("kqbench_scheduler_evicted", "Evictions (preemptions) written to the API.",
                                     ["cluster_queue"], registry=r)
        self.admission_latency = Histogram(
            "kqbench_scheduler_admission_latency_seconds",
            "From a workload's queue-order timestamp to the API write that admitted it.",
            ["cluster_queue"], buckets=LATENCY_BUCKETS, registry=r)
        self.unwritten = Gauge("kqbench_scheduler_unwritten_admissions",
                               "Admissions decided in memory whose status write has not finished.", registry=r)
        self.cycle_duration = Histogram("kqbench_scheduler_cycle_duration_seconds", "One scheduling cycle in the core.",
                                        buckets=FAST_BUCKETS, registry=r)
        self.decisions = Counter("kqbench_scheduler_decisions",
                                 "Cycle decisions by kind: admit, preempt (evictions started), preempt-in-flight (every "
                                 "target already being evicted), park, wait.", ["kind"], registry=r)
        self.held_while_admitting = Counter(
            "kqbench_scheduler_events_held_while_admitting",
            "Events of a pending Workload that arrived while its admission write was in flight, held until the "
            "write ended: taken in at once, each would have released the quota the cycle assumed.", registry=r)
        self.loop_lag = Histogram("kqbench_scheduler_event_loop_lag_seconds",
                                  "How late a timer fires on the controller's event loop: how long a watch event "
                                  "can wait behind cycles and writes before the core sees it.",
                                  buckets=FAST_BUCKETS, registry=r)
        self.api_writes = Counter("kqbench_scheduler_api_writes", "API writes the scheduler issued.",
                                  ["verb", "resource", "code"], registry=r)
        self.api_write_bytes = Counter("kqbench_scheduler_api_write_bytes", "Request body bytes of those writes.",
                                       ["verb", "resource"], registry=r)
        self.write_failures = Counter("kqbench_scheduler_api_write_failures", "Failed writes by reason.",
                                      ["resource", "reason"], registry=r)
        self.job_steps = Counter("kqbench_scheduler_job_steps",
                                 "Job integration writes done: create-workload, start-job, stop-job, clear-start-time, "
                                 "restore-job, finish-workload, ungate-pod.", ["step"], registry=r)
        self.visibility_latency = Histogram(
            "kqbench_visibility_request_duration_seconds", "Server-side time to answer a visibility request.",
            ["endpoint", "code"], buckets=FAST_BUCKETS, registry=r)
        self.visibility_pages = Counter("kqbench_visibility_pages", "Pages answered, from the page cache or encoded.",
                                        ["endpoint", "cache"], registry=r)

    def observe_write(self, verb: str, resource: str, code: int, size: int) -> None:
        self.api_writes.labels(verb, resource, str(code)).inc()
        self.api_write_bytes.labels(verb, resource).inc(size)


class EstimateMetrics:
    """The expected-admission-time refresh's metrics (scheduler.controller.estimating), on the scheduler's
    registry; made only when an estimator is set, so a scheduler without one exposes none of them."""

    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.waits = Histogram(
            "kqbench_scheduler_estimated_wait_seconds",
            "Seconds from a refresh to each pending Workload's expected admission, per ClusterQueue: every pending "
            "Workload with a time is observed at every refresh (a rate over a window is the distribution of the "
            "queue's estimates in it).", ["cluster_queue"], buckets=WAIT_BUCKETS, registry=r)
        self.without_time = Gauge("kqbench_scheduler_estimates_without_time",
                                  "Pending Workloads the last refresh gave no time, per ClusterQueue and reason.",
                                  ["cluster_queue", "reason"], registry=r)
        self.refresh_cpu = Histogram(
            "kqbench_scheduler_estimate_refresh_cpu_seconds",
            "CPU seconds of one refresh: the snapshot on the controller's loop and the estimate on its own thread.",
            buckets=REFRESH_CPU_BUCKETS, registry=r)
        self.refresh_failures = Counter("kqbench_scheduler_estimate_refresh_failures",
                                        "Refreshes that failed (logged); the previous estimates are served meanwhile.",
                                        registry=r)
