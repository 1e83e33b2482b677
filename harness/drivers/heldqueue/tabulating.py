"""The held-queue driver's tables: what one phase measured, as tidy rows (pure).

Every row says which phase, implementation and page cache made it: a sweep over the scheduler puts
ours, ours without its page cache and Kueue in one run's tables (the runner adds `case`).

- `heldqueue_figures`: one row per scalar figure (metric, unit, value): creation, the scheduler's CPU,
  RSS and the apiserver's writes per pending Workload, etcd bytes per Workload, idle cores, admissions.
- `heldqueue_milestones`: one row per bounded wait (`processed`, `admitted`): reached, when, how far.
- `heldqueue_reads`: one row per read arm (`cq_page_idle`, `cq_page_churn`, `proxy_ceiling`).
- `heldqueue_writes`: kube-apiserver's writes by resource over each window (`processed`, `admitted`), every
  client's (the fill's own creations too; `apiserver_writes_per_pending` leaves those out).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

import pandas as pd

from harness.drivers.heldqueue import figures as figs
from harness.implementations import names

FIGURES_TABLE = "heldqueue_figures"
MILESTONES_TABLE = "heldqueue_milestones"
READS_TABLE = "heldqueue_reads"
WRITES_TABLE = "heldqueue_writes"
TABLES = (FIGURES_TABLE, MILESTONES_TABLE, READS_TABLE, WRITES_TABLE)

PROCESSED = "processed"
ADMITTED = "admitted"
IDLE_ARM = "cq_page_idle"
CHURN_ARM = "cq_page_churn"
CEILING_ARM = "proxy_ceiling"
ARMS = (IDLE_ARM, CHURN_ARM, CEILING_ARM)
"""Read arms in the order they run: a page of the queue idle, the same page under churn, then aggregated
discovery (which the scheduler answers without work: what the kube-apiserver hop alone costs)."""

UNITS = {"created_seconds": "s", "created_per_second": "1/s", "etcd_bytes_per_workload": "B",
         "etcd_bytes_per_workload_as_created": "B",
         "scheduler_cpu_seconds": "s", "scheduler_rss_bytes": "B", "cpu_ms_per_pending": "ms",
         "rss_bytes_per_pending": "B", "apiserver_writes_per_pending": "ratio", "pending_gauge": "count",
         "admissions_per_second": "1/s", "apiserver_writes_per_admission": "ratio"}
"""The scalar figures a phase emits; `idle_cores[...]` and `admit_cores[...]` (per process) are in cores."""

LABELS = ["phase", "implementation", "page_cache"]
FIGURE_COLUMNS = [*LABELS, "metric", "unit", "value"]
MILESTONE_COLUMNS = [*LABELS, "milestone", "target", "reached", "seconds", "done", "rate_per_second",
                     "estimated_seconds"]
READ_COLUMNS = [*LABELS, "arm", "path", "readers", "requests", "failed", "per_second", "p50_ms", "p90_ms", "p99_ms",
                "max_ms", "mean_ms", "window_seconds", "scheduler_cores", "apiserver_cores", "etcd_cores",
                "page_hits", "page_misses", "churn_created", "churn_deleted", "churn_failed", "churn_changes_per_second"]
WRITE_COLUMNS = [*LABELS, "window", "resource", "writes"]


@dataclass(frozen=True, slots=True)
class Labels:
    """Who made a row: the scenario's phase, the implementation, and whether ours kept its page cache
    (False for Kueue, which encodes every page per request)."""

    phase: str
    implementation: str
    page_cache: bool

    def as_row(self) -> dict:
        return asdict(self)


def unit_of(metric: str) -> str:
    return "cores" if metric.endswith("]") else UNITS[metric]


def figures_frame(labels: Labels, values: Mapping[str, float | None]) -> pd.DataFrame:
    """metric -> value as rows; figures not measured (None) are left out."""
    rows = [{**labels.as_row(), "metric": metric, "unit": unit_of(metric), "value": float(value)}
            for metric, value in values.items() if value is not None]
    return pd.DataFrame(rows, columns=FIGURE_COLUMNS)


def milestone_frame(labels: Labels, found: figs.Milestone) -> pd.DataFrame:
    row = {**labels.as_row(), "milestone": found.name, "target": found.target, "reached": found.reached,
           "seconds": found.seconds, "done": found.done, "rate_per_second": found.rate_per_second,
           "estimated_seconds": found.estimated_seconds}
    return pd.DataFrame([row], columns=MILESTONE_COLUMNS)


def read_frame(labels: Labels, arm: str, path: str, readers: int, latencies: figs.Latencies, failed: int,
               window_seconds: float, cores: Mapping[str, float], pages: Mapping[str, float] | None = None,
               churn: figs.ChurnCounts | None = None) -> pd.DataFrame:
    """One read arm; `cores` by process over the arm, `pages` (ours) the page cache's hits and misses in it."""
    row = {**labels.as_row(), "arm": arm, "path": path, "readers": readers, **asdict(latencies), "failed": failed,
           "window_seconds": round(window_seconds, 2), "scheduler_cores": cores.get("scheduler"),
           "apiserver_cores": cores.get("kube-apiserver"), "etcd_cores": cores.get("etcd"),
           "page_hits": None if pages is None else pages.get("hit"),
           "page_misses": None if pages is None else pages.get("miss")}
    if churn is not None:
        row |= {"churn_created": churn.created, "churn_deleted": churn.deleted, "churn_failed": churn.failed,
                "churn_changes_per_second": churn.changes_per_second}
    return pd.DataFrame([row], columns=READ_COLUMNS)


def writes_frame(labels: Labels, window: str, writes: Mapping[str, float]) -> pd.DataFrame:
    rows = [{**labels.as_row(), "window": window, "resource": resource, "writes": count}
            for resource, count in sorted(writes.items())]
    return pd.DataFrame(rows, columns=WRITE_COLUMNS)


def cores_figures(prefix: str, cores: Mapping[str, float]) -> dict[str, float]:
    """Cores per process as figures named `prefix[process]`."""
    return {f"{prefix}[{name}]": round(used, 3) for name, used in sorted(cores.items())}


def rows_of(tables: Mapping[str, pd.DataFrame], name: str, case: str | None = None) -> pd.DataFrame:
    """A table of the run (one case's rows when given); empty when the run has none of it."""
    frame = tables.get(name)
    if frame is None or frame.empty:
        return pd.DataFrame()
    if case is not None:
        return frame[frame["case"] == case] if "case" in frame.columns else pd.DataFrame()
    return frame


def design(implementation: str, page_cache: bool) -> str:
    """A case's design in words: the implementation, and for ours whether it kept its page cache."""
    if implementation == names.REFERENCE and not page_cache:
        return f"{implementation}, no page cache"
    return implementation


def iter_cases(frame: pd.DataFrame) -> Iterable[str]:
    return frame["case"].drop_duplicates() if "case" in frame.columns else ()
