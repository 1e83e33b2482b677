"""Where a jobs phase's load went, from the run's measurement tables (pure): API requests, watch
traffic and stored objects per resource, and CPU per process — the tables that say which component
was the bottleneck and which resource drove it.
"""

from __future__ import annotations

import orjson
import pandas as pd

from harness.metrics import catalog

READ_VERBS = frozenset({"GET", "LIST", "WATCH", "WATCHLIST"})
RESOURCE_COLUMNS = ["resource", "reads_per_s", "writes_per_s", "watch_events_sent_per_s",
                    "watch_cache_events_per_s", "objects_counted"]
PROCESS_COLUMNS = ["component", "cpu_cores", "cpu_seconds", "rss_max_mib"]


def _rows(summary: pd.DataFrame, case: str, phase: str, metric: str, stat: str,
          source: str | None = None) -> list[tuple[dict, float]]:
    """(labels, value) of one metric's stat in a phase, from one source (the process scraped) when given:
    processes share metric names (Kueue's and kube-controller-manager's work queues are both
    `workqueue_*`, and both have one named `job`)."""
    picked = summary[(summary["case"] == case) & (summary["phase"] == phase) & (summary["metric"] == metric)
                     & (summary["stat"] == stat)]
    if source is not None:
        picked = picked[picked["source"] == source]
    return [(orjson.loads(labels), float(value)) for labels, value in zip(picked["labels"], picked["value"])]


def resource_name(labels: dict) -> str:
    """`pods`, `jobs.batch`, `workloads.kueue.x-k8s.io`: plural and group, as kubectl names them."""
    resource = labels.get("resource") or labels.get("kind") or ""
    group = labels.get("group", "")
    if "." in resource or not group:
        return resource
    return f"{resource}.{group}"


def by_resource(summary: pd.DataFrame, case: str, phase: str) -> pd.DataFrame:
    """One row per resource the phase touched, busiest first."""
    table: dict[str, dict[str, float]] = {}

    def add(name: str, column: str, value: float) -> None:
        if name:
            row = table.setdefault(name, dict.fromkeys(RESOURCE_COLUMNS[1:], 0.0))
            row[column] += value

    for labels, value in _rows(summary, case, phase, "apiserver_request_total", "rate"):
        add(resource_name(labels), "reads_per_s" if labels.get("verb") in READ_VERBS else "writes_per_s", value)
    for labels, value in _rows(summary, case, phase, "apiserver_watch_events_total", "rate"):
        add(resource_name(labels), "watch_events_sent_per_s", value)
    for labels, value in _rows(summary, case, phase, "apiserver_watch_cache_events_received_total", "rate"):
        add(resource_name(labels), "watch_cache_events_per_s", value)
    objects = _rows(summary, case, phase, "apiserver_resource_objects", "last") \
        or _rows(summary, case, phase, "apiserver_storage_objects", "last")
    for labels, value in objects:
        add(resource_name(labels), "objects_counted", value)
    frame = pd.DataFrame([{"resource": name, **values} for name, values in table.items()], columns=RESOURCE_COLUMNS)
    busy = frame["reads_per_s"] + frame["writes_per_s"] + frame["watch_events_sent_per_s"]
    return frame.assign(_busy=busy).sort_values("_busy", ascending=False).drop(columns="_busy").reset_index(drop=True)


def by_process(summary: pd.DataFrame, case: str, phase: str) -> pd.DataFrame:
    """Mean cores busy, CPU seconds and largest RSS per component in the phase, busiest first."""
    rows: dict[str, dict[str, float]] = {}
    for metric, stat, column in (("cpu_seconds", "rate", "cpu_cores"), ("cpu_seconds", "delta", "cpu_seconds"),
                                 ("rss_bytes", "max", "rss_max_mib")):
        for labels, value in _rows(summary, case, phase, metric, stat):
            row = rows.setdefault(labels.get("component", "?"), dict.fromkeys(PROCESS_COLUMNS[1:], 0.0))
            row[column] += value / (1 << 20) if column == "rss_max_mib" else value
    frame = pd.DataFrame([{"component": name, **values} for name, values in rows.items()], columns=PROCESS_COLUMNS)
    return frame.sort_values("cpu_cores", ascending=False).reset_index(drop=True)


def _work_table(summary: pd.DataFrame, case: str, phase: str, source: str, columns: list[str],
                labels_named: tuple[str, ...], picks: tuple[tuple, ...]) -> pd.DataFrame:
    """One row per work queue or controller of one process (`source`; named by the first of `labels_named`
    a series carries) with a column per (metric, stat, column[, combine]) pick; rows whose first measured column is not above 0
    did no work in the phase and are left out; busiest first. Two series of one name combine by max
    unless the pick says how."""
    rows: dict[str, dict[str, float]] = {}
    for metric, stat, column, *combine in picks:
        for labels, value in _rows(summary, case, phase, metric, stat, source):
            name = next((labels[k] for k in labels_named if labels.get(k)), "?")
            row = rows.setdefault(name, dict.fromkeys(columns[1:], float("nan")))
            row[column] = value if row[column] != row[column] else (combine or [max])[0](row[column], value)
    frame = pd.DataFrame([{columns[0]: name, **values} for name, values in rows.items()], columns=columns)
    frame = frame[frame[columns[1]] > 0]
    return frame.sort_values(columns[1], ascending=False).reset_index(drop=True)


CONTROLLER_COLUMNS = ["controller", "reconciles", "workers", "most_workers_busy", "largest_backlog",
                      "queue_wait_p50_s", "queue_wait_p99_s", "reconcile_p50_s", "reconcile_p99_s"]


def kueue_controllers(summary: pd.DataFrame, case: str, phase: str) -> pd.DataFrame:
    """Kueue's reconcilers in the phase, one row per controller that reconciled anything, most reconciles
    first: a key that waits long in the queue while every worker is busy says the workers are the limit."""
    return _work_table(summary, case, phase, catalog.KUEUE, CONTROLLER_COLUMNS, ("controller", "name"), (
        ("controller_runtime_reconcile_time_seconds", "count", "reconciles"),
        ("controller_runtime_max_concurrent_reconciles", "last", "workers"),
        ("controller_runtime_active_workers", "max", "most_workers_busy"),
        ("workqueue_depth", "max", "largest_backlog", lambda a, b: a + b),  # one series per priority
        ("workqueue_queue_duration_seconds", "p50", "queue_wait_p50_s"),
        ("workqueue_queue_duration_seconds", "p99", "queue_wait_p99_s"),
        ("controller_runtime_reconcile_time_seconds", "p50", "reconcile_p50_s"),
        ("controller_runtime_reconcile_time_seconds", "p99", "reconcile_p99_s")))


QUEUE_COLUMNS = ["work_queue", "adds", "largest_backlog", "queue_wait_p50_s", "queue_wait_p99_s",
                 "work_p50_s", "work_p99_s"]


def controller_manager_queues(summary: pd.DataFrame, case: str, phase: str) -> pd.DataFrame:
    """kube-controller-manager's work queues that took work in the phase, busiest first: the job
    controller's (`job`) backlog and time in queue say whether its workers kept up."""
    return _work_table(summary, case, phase, catalog.CONTROLLER_MANAGER, QUEUE_COLUMNS, ("name",), (
        ("workqueue_adds_total", "delta", "adds"),
        ("workqueue_depth", "max", "largest_backlog"),
        ("workqueue_queue_duration_seconds", "p50", "queue_wait_p50_s"),
        ("workqueue_queue_duration_seconds", "p99", "queue_wait_p99_s"),
        ("workqueue_work_duration_seconds", "p50", "work_p50_s"),
        ("workqueue_work_duration_seconds", "p99", "work_p99_s")))


def kube_scheduler(summary: pd.DataFrame, case: str, phase: str) -> dict[str, float]:
    """kube-scheduler in the phase: attempts per second by result, its largest queue of pods waiting to be
    placed, and how long a placement took (p99)."""
    figures: dict[str, float] = {}
    for labels, value in _rows(summary, case, phase, "scheduler_schedule_attempts_total", "rate", catalog.KUBE_SCHEDULER):
        key = f"attempts_per_s_{labels.get('result', '?')}"
        figures[key] = figures.get(key, 0.0) + value
    for labels, value in _rows(summary, case, phase, "scheduler_pending_pods", "max", catalog.KUBE_SCHEDULER):
        key = f"most_pods_pending_{labels.get('queue', '?')}"
        figures[key] = max(figures.get(key, 0.0), value)
    for labels, value in _rows(summary, case, phase, "scheduler_scheduling_attempt_duration_seconds", "p99",
                               catalog.KUBE_SCHEDULER):
        figures[f"attempt_p99_s_{labels.get('result', '?')}"] = value
    return figures
