"""The metric families kqbench collects, under one name across Kubernetes and etcd versions.

Metric names move between releases (a rename keeps the measurement). Each family lists the names
it has had, newest first; `resolve` picks the one the running server exposes, and the run records
which (`Frames.names`), so two runs on different versions still compare under one name.
"""

from __future__ import annotations

from dataclasses import dataclass

APISERVER = "apiserver"
ETCD = "etcd"
SCHEDULER = "scheduler"
"""The reference scheduler's own /metrics (scheduler/controller/metering.py, scheduler/publishing/metering.py)."""
KUEUE = "kueue"
"""Real Kueue's manager /metrics (its pkg/metrics): read beside ours, never under our names."""
CONTROLLER_MANAGER = "kube-controller-manager"
KUBE_SCHEDULER = "kube-scheduler"
"""The cluster's own components, named as the cluster state names them (ClusterInfo.metrics_urls)."""

COUNTER = "counter"
GAUGE = "gauge"
HISTOGRAM = "histogram"

# Histograms of requests are summarised per these labels (the others, such as component and
# version, are summed): the key Kubernetes' API call latency SLO is stated for.
REQUEST_KEY = ("verb", "group", "resource", "subresource", "scope")


@dataclass(frozen=True, slots=True)
class Family:
    """One measurement: its reporting name, where it comes from, its type, and its other names."""

    name: str
    source: str
    kind: str
    by: tuple[str, ...] = ()
    """Histograms only: labels quantiles are grouped by; () keeps every series apart."""
    aliases: tuple[str, ...] = ()
    """Older names of the same measurement (tried after `name`, in order)."""

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


PENDING = {SCHEDULER: "kqbench_scheduler_pending_workloads", KUEUE: "kueue_pending_workloads"}
"""Each scheduler's pending-Workloads gauge (per ClusterQueue), by source: the one spelling the drivers,
the faults and the benchmarks read."""
ADMITTED = {SCHEDULER: "kqbench_scheduler_admitted_total", KUEUE: "kueue_admitted_workloads_total"}
"""Each scheduler's admissions counter as exposed (with `_total`), by source."""
HOLDING = {SCHEDULER: "kqbench_scheduler_admitted_workloads", KUEUE: "kueue_reserving_active_workloads"}
"""Each scheduler's gauge of Workloads holding quota now (per ClusterQueue): with PENDING, every Workload it holds."""


def _f(name, source, kind, by=(), aliases=()) -> Family:
    return Family(name, source, kind, tuple(by), tuple(aliases))


FAMILIES: tuple[Family, ...] = (
    # Requests and their latency (SLI excludes webhook and APF queue time: what the SLO uses).
    _f("apiserver_request_total", APISERVER, COUNTER),
    _f("apiserver_request_duration_seconds", APISERVER, HISTOGRAM, REQUEST_KEY),
    _f("apiserver_request_sli_duration_seconds", APISERVER, HISTOGRAM, REQUEST_KEY,
       aliases=("apiserver_request_slo_duration_seconds",)),  # 1.23-1.26
    _f("apiserver_response_sizes", APISERVER, HISTOGRAM, REQUEST_KEY),
    _f("apiserver_request_body_size_bytes", APISERVER, HISTOGRAM, ("group", "resource", "verb")),  # writes' bytes
    _f("apiserver_current_inflight_requests", APISERVER, GAUGE),
    _f("apiserver_longrunning_requests", APISERVER, GAUGE),
    # API Priority and Fairness (absent when the apiserver runs with --enable-priority-and-fairness=false).
    _f("apiserver_flowcontrol_rejected_requests_total", APISERVER, COUNTER),
    _f("apiserver_flowcontrol_current_inqueue_requests", APISERVER, GAUGE),
    _f("apiserver_flowcontrol_request_wait_duration_seconds", APISERVER, HISTOGRAM,
       ("priority_level", "flow_schema", "execute")),
    # Storage as the apiserver sees it.
    _f("etcd_requests_total", APISERVER, COUNTER),
    _f("etcd_request_errors_total", APISERVER, COUNTER),
    _f("etcd_request_duration_seconds", APISERVER, HISTOGRAM, ("operation", "group", "resource")),
    _f("apiserver_storage_objects", APISERVER, GAUGE, aliases=("etcd_object_counts",)),  # <= 1.22
    _f("apiserver_resource_objects", APISERVER, GAUGE),  # 1.34+
    _f("apiserver_storage_size_bytes", APISERVER, GAUGE,
       aliases=("apiserver_storage_db_total_size_in_bytes", "etcd_db_total_size_in_bytes")),  # 1.23-1.27, <= 1.22
    # Watch cache: which reads it served, which went to etcd, what watchers got.
    _f("apiserver_cache_list_total", APISERVER, COUNTER),
    _f("apiserver_cache_list_fetched_objects_total", APISERVER, COUNTER),
    _f("apiserver_cache_list_returned_objects_total", APISERVER, COUNTER),
    _f("apiserver_storage_list_total", APISERVER, COUNTER),
    _f("apiserver_storage_list_fetched_objects_total", APISERVER, COUNTER),
    _f("apiserver_storage_list_evaluated_objects_total", APISERVER, COUNTER),
    _f("apiserver_storage_list_returned_objects_total", APISERVER, COUNTER),
    _f("apiserver_watch_cache_consistent_read_total", APISERVER, COUNTER),
    _f("apiserver_watch_cache_read_wait_seconds", APISERVER, HISTOGRAM, ("group", "resource")),
    _f("apiserver_watch_cache_events_received_total", APISERVER, COUNTER),
    _f("apiserver_watch_cache_events_dispatched_total", APISERVER, COUNTER),
    _f("apiserver_watch_events_total", APISERVER, COUNTER),
    _f("apiserver_watch_events_sizes", APISERVER, HISTOGRAM, ("group", "resource")),
    _f("apiserver_terminated_watchers_total", APISERVER, COUNTER),
    _f("kubernetes_build_info", APISERVER, GAUGE),
    # etcd itself.
    _f("etcd_mvcc_db_total_size_in_bytes", ETCD, GAUGE, aliases=("etcd_debugging_mvcc_db_total_size_in_bytes",)),
    _f("etcd_mvcc_db_total_size_in_use_in_bytes", ETCD, GAUGE),
    _f("etcd_mvcc_range_total", ETCD, COUNTER, aliases=("etcd_debugging_mvcc_range_total",)),
    _f("etcd_mvcc_put_total", ETCD, COUNTER, aliases=("etcd_debugging_mvcc_put_total",)),
    _f("etcd_mvcc_delete_total", ETCD, COUNTER, aliases=("etcd_debugging_mvcc_delete_total",)),
    _f("etcd_mvcc_txn_total", ETCD, COUNTER, aliases=("etcd_debugging_mvcc_txn_total",)),
    _f("etcd_debugging_mvcc_keys_total", ETCD, GAUGE),
    _f("grpc_server_handled_total", ETCD, COUNTER),
    _f("etcd_server_version", ETCD, GAUGE),
    # The scheduler under test: what it decided and wrote, and how old the positions users read are.
    # Counters carry prometheus_client's `_total` suffix as exposed.
    _f(PENDING[SCHEDULER], SCHEDULER, GAUGE),
    _f("kqbench_scheduler_admitted_workloads", SCHEDULER, GAUGE),
    _f(ADMITTED[SCHEDULER], SCHEDULER, COUNTER),
    _f("kqbench_scheduler_evicted_total", SCHEDULER, COUNTER),
    _f("kqbench_scheduler_admission_latency_seconds", SCHEDULER, HISTOGRAM, ("cluster_queue",)),
    _f("kqbench_scheduler_unwritten_admissions", SCHEDULER, GAUGE),
    _f("kqbench_scheduler_cycle_duration_seconds", SCHEDULER, HISTOGRAM),
    _f("kqbench_scheduler_decisions_total", SCHEDULER, COUNTER),
    _f("kqbench_scheduler_events_held_while_admitting_total", SCHEDULER, COUNTER),
    _f("kqbench_scheduler_event_loop_lag_seconds", SCHEDULER, HISTOGRAM),
    _f("kqbench_scheduler_api_writes_total", SCHEDULER, COUNTER),
    _f("kqbench_scheduler_api_write_bytes_total", SCHEDULER, COUNTER),
    _f("kqbench_scheduler_api_write_failures_total", SCHEDULER, COUNTER),
    # Expected admission times, when the scheduler runs an estimator (scheduler.controller.estimating).
    _f("kqbench_scheduler_estimated_wait_seconds", SCHEDULER, HISTOGRAM, ("cluster_queue",)),
    _f("kqbench_scheduler_estimates_without_time", SCHEDULER, GAUGE),
    _f("kqbench_scheduler_estimate_refresh_cpu_seconds", SCHEDULER, HISTOGRAM),
    _f("kqbench_scheduler_estimate_refresh_failures_total", SCHEDULER, COUNTER),
    _f("kqbench_visibility_request_duration_seconds", SCHEDULER, HISTOGRAM, ("endpoint", "code")),
    _f("kqbench_visibility_pages_total", SCHEDULER, COUNTER),
    _f("kqbench_positions_changes_total", SCHEDULER, COUNTER),
    _f("kqbench_positions_writes_total", SCHEDULER, COUNTER),
    _f("kqbench_positions_write_bytes_total", SCHEDULER, COUNTER),
    _f("kqbench_positions_write_failures_total", SCHEDULER, COUNTER),
    _f("kqbench_positions_largest_object_bytes", SCHEDULER, GAUGE),
    _f("kqbench_positions_staleness_seconds", SCHEDULER, HISTOGRAM, ("strategy",)),
    _f("kqbench_positions_backlog", SCHEDULER, GAUGE),
    _f("kqbench_positions_coverage_ratio", SCHEDULER, GAUGE),
    _f("kqbench_positions_first_too_large_pending", SCHEDULER, GAUGE),
    _f("kqbench_positions_first_too_large_bytes", SCHEDULER, GAUGE),
    # Real Kueue's own numbers (v0.17): admissions, what is pending and how long admission took.
    # Kueue's histograms carry cluster_queue and priority_class; replica_role is always "standalone" here.
    _f(ADMITTED[KUEUE], KUEUE, COUNTER),
    _f("kueue_quota_reserved_workloads_total", KUEUE, COUNTER),
    _f("kueue_evicted_workloads_total", KUEUE, COUNTER),
    _f(PENDING[KUEUE], KUEUE, GAUGE),
    _f("kueue_admitted_active_workloads", KUEUE, GAUGE),
    _f("kueue_reserving_active_workloads", KUEUE, GAUGE),
    _f("kueue_admission_wait_time_seconds", KUEUE, HISTOGRAM, ("cluster_queue", "priority_class")),
    _f("kueue_quota_reserved_wait_time_seconds", KUEUE, HISTOGRAM, ("cluster_queue", "priority_class")),
    _f("kueue_admission_attempts_total", KUEUE, COUNTER),
    _f("kueue_admission_attempt_duration_seconds", KUEUE, HISTOGRAM, ("result",)),
    _f("kueue_build_info", KUEUE, GAUGE),
    # Kueue's reconcilers (controller-runtime, labelled by controller: job, workload, clusterqueue, ...):
    # workers configured and busy, backlog, time a key waited in the work queue and a reconcile took.
    _f("controller_runtime_max_concurrent_reconciles", KUEUE, GAUGE),
    _f("controller_runtime_active_workers", KUEUE, GAUGE),
    _f("workqueue_depth", KUEUE, GAUGE),
    _f("workqueue_queue_duration_seconds", KUEUE, HISTOGRAM, ("controller",)),
    _f("controller_runtime_reconcile_time_seconds", KUEUE, HISTOGRAM, ("controller",)),
    # kube-controller-manager's work queues (label name: job, garbagecollector_attempt_to_delete, ...):
    # the job controller's backlog and how long a Job waited for one of its workers.
    _f("workqueue_depth", CONTROLLER_MANAGER, GAUGE),
    _f("workqueue_adds_total", CONTROLLER_MANAGER, COUNTER),
    _f("workqueue_queue_duration_seconds", CONTROLLER_MANAGER, HISTOGRAM, ("name",)),
    _f("workqueue_work_duration_seconds", CONTROLLER_MANAGER, HISTOGRAM, ("name",)),
    # kube-scheduler: pods waiting to be placed (label queue: active, backoff, unschedulable, gated) and
    # its scheduling attempts.
    _f("scheduler_pending_pods", KUBE_SCHEDULER, GAUGE),
    _f("scheduler_schedule_attempts_total", KUBE_SCHEDULER, COUNTER),
    _f("scheduler_scheduling_attempt_duration_seconds", KUBE_SCHEDULER, HISTOGRAM, ("result",)),
)


def for_source(source: str, families: tuple[Family, ...] = FAMILIES) -> tuple[Family, ...]:
    return tuple(f for f in families if f.source == source)


def exposed_names(families: tuple[Family, ...]) -> frozenset[str]:
    """Every name (current and old) worth keeping from a scrape."""
    return frozenset(n for f in families for n in f.names)


def resolve(family: Family, present: frozenset[str] | set[str]) -> str | None:
    """The name under which the server exposes this family, or None when it exposes none of them."""
    return next((n for n in family.names if n in present), None)
