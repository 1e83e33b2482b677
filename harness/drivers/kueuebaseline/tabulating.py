"""kueue-baseline outcome -> tidy tables and the small files a committed run keeps (pure)."""

from __future__ import annotations

import datetime as dt
import statistics
from typing import TYPE_CHECKING

import pandas as pd

from harness.drivers.kueuebaseline import declaring, figures as figs

if TYPE_CHECKING:
    from harness.drivers.kueuebaseline import reading
    from harness.scenarios import sections

FIGURES_TABLE = "kueue_baseline"
CLASSES_TABLE = "kueue_classes"
WORKLOADS_TABLE = "kueue_workloads"
EVICTIONS_TABLE = "kueue_evictions"
ESTIMATES_TABLE = "kueue_estimates"
ADMISSIONS_TABLE = "kueue_admissions"
ESTIMATE_READS_TABLE = "kueue_estimate_reads"
ESTIMATES_COLUMNS = ["read", "read_s", "workload", "namespace", "cluster_queue", "position", "estimator", "estimated_s",
                     "reason", "note", "snapshot_s", "age_seconds"]


def parse_time(text: str) -> float | None:
    """RFC 3339 (the API's 1 s resolution) -> epoch seconds; '' -> None."""
    if not text:
        return None
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def api_time_to_admission(records: dict[str, figs.WorkloadRecord], api_times: dict[str, list[str]]) -> dict[str, float]:
    """Mean (QuotaReserved lastTransitionTime - creationTimestamp) per class: the same figure at 1 s resolution."""
    waits: dict[str, list[float]] = {}
    for name, record in records.items():
        created, reserved, _ = (api_times.get(name) or ["", "", ""])[:3]
        a, b = parse_time(created), parse_time(reserved)
        if a is not None and b is not None:
            waits.setdefault(record.workload_class, []).append(b - a)
    return {f"time_to_admission_seconds[{k}]": statistics.fmean(v) for k, v in waits.items()}


def api_wall_seconds(api_times: dict[str, list[str]]) -> float | None:
    created = [t for t in (parse_time(v[0]) for v in api_times.values()) if t is not None]
    finished = [t for t in (parse_time(v[2]) for v in api_times.values()) if t is not None]
    return max(finished) - min(created) if created and finished else None


def figures_frame(figures: figs.Figures, api_metrics: dict[str, float], extras: dict[str, float],
                  reference: figs.KueueReference = figs.BASELINE) -> pd.DataFrame:
    """Ours (our clock; the API's 1 s timestamps) next to Kueue's published and rangespec figures, plus run facts."""
    rows = []
    for row in figs.comparison(figures, reference):
        rows.append({**row, "kqbench_api_1s": api_metrics.get(row["metric"])})
    for metric, value in extras.items():
        rows.append({"metric": metric, "unit": "count" if metric.endswith(("s_count", "failures", "evictions",
                                                                        "workloads", "finished", "complete"))
                     else "s", "kqbench": value, "kueue_published": None, "kueue_rangespec_average": None,
                     "kueue_rangespec_limit": None, "within_rangespec": None,
                     "ratio_to_published": None, "kqbench_api_1s": None})
    columns = ["metric", "unit", "kqbench", "kqbench_api_1s", "kueue_published", "kueue_rangespec_average",
               "kueue_rangespec_limit", "within_rangespec", "ratio_to_published"]
    return pd.DataFrame(rows, columns=columns)


def classes_frame(figures: figs.Figures) -> pd.DataFrame:
    return pd.DataFrame([{
        "class": c.workload_class, "count": c.count, "admitted": c.admitted, "finished": c.finished,
        "evictions": c.evictions, "mean_time_to_admission_s": c.mean_time_to_admission_seconds,
        "p50_time_to_admission_s": c.p50_time_to_admission_seconds,
        "p90_time_to_admission_s": c.p90_time_to_admission_seconds,
        "mean_time_to_finish_s": c.mean_time_to_finish_seconds} for c in figures.classes])


def with_entitlements(workloads: pd.DataFrame, scenario: sections.ScenarioFields, nominal_milli: dict[str, int]) -> pd.DataFrame:
    """Each Workload's ClusterQueue's cohort and entitlement (what the fairness figures divide by): its
    spec.fairSharing.weight with fair sharing on (Kueue's default 1), else its nominal cpu quota."""
    cohorts, weights = {}, {}
    for cq in scenario.queues.cluster_queues:
        for name, cohort in cq.expanded():
            cohorts[name] = cohort or ""
            weights[name] = 1.0 if cq.fair_sharing_weight is None else cq.fair_sharing_weight
    entitled = weights if scenario.scheduler.fair_sharing else {k: v / 1000 for k, v in nominal_milli.items()}
    return workloads.assign(cohort=workloads["cluster_queue"].map(lambda q: cohorts.get(q, "")),
                            entitlement=workloads["cluster_queue"].map(lambda q: entitled.get(q, 1.0)))


def workloads_frame(records: dict[str, figs.WorkloadRecord], api_times: dict[str, list[str]], start: float,
                    runtimes: dict[str, declaring.Runtime] | None = None) -> pd.DataFrame:
    """One row per Workload; times in seconds after the start of generation (our clock), API times as stored,
    and the first QuotaReserved time on the same axis (`quota_reserved_s`, the object's whole seconds);
    `runtime_s` / `declared_runtime_s`: its own runtime and declaration where it had one (else empty)."""
    def rel(t: float | None) -> float | None:
        return None if t is None else t - start

    rows = []
    runtimes = runtimes or {}
    for name, r in records.items():
        api = api_times.get(name) or ["", "", ""]
        own = runtimes.get(name)
        rows.append({"name": name, "cluster_queue": r.cluster_queue, "class": r.workload_class, "cpu_milli": r.cpu_milli,
                     "created_s": rel(r.created), "admitted_s": rel(r.admitted), "finished_s": rel(r.finished),
                     "admitted_seconds": r.admitted_seconds, "evictions": r.evictions, "api_created": api[0],
                     "api_quota_reserved": api[1], "api_finished": api[2], "quota_reserved_s": rel(parse_time(api[1])),
                     "runtime_s": own.real_seconds if own else None,
                     "declared_runtime_s": own.declared_seconds if own else None})
    return pd.DataFrame(rows, columns=["name", "cluster_queue", "class", "cpu_milli", "created_s", "admitted_s",
                                       "finished_s", "admitted_seconds", "evictions", "api_created",
                                       "api_quota_reserved", "api_finished", "quota_reserved_s", "runtime_s",
                                       "declared_runtime_s"])


def admissions_frame(reservations: dict[str, list[str]], start: float) -> pd.DataFrame:
    """One row per quota reservation of each Workload (`n` from 0; more than one when it was evicted and
    admitted again): the API time as stored and on the generation's axis (`quota_reserved_s`)."""
    rows = [(name, n, stamp, None if (t := parse_time(stamp)) is None else t - start)
            for name, stamps in reservations.items() for n, stamp in enumerate(stamps)]
    frame = pd.DataFrame(rows, columns=["name", "n", "api_quota_reserved", "quota_reserved_s"])
    return frame.astype({"n": "int64", "quota_reserved_s": "float64"})


def estimates_frame(entries: list[reading.Entry], start: float) -> pd.DataFrame:
    """One row per Workload per read of the pending Workloads; times in seconds after the start of generation
    (`read_s` by our clock, `estimated_s` and `snapshot_s` from the API's whole seconds)."""
    def rel(t: float | None) -> float | None:
        return None if t is None else t - start

    frame = pd.DataFrame([(e.read, e.read_at - start, e.workload, e.namespace, e.cluster_queue, e.position,
                           e.estimator, rel(e.estimated_at), e.reason, e.note, rel(e.snapshot_at), e.age_seconds)
                          for e in entries], columns=ESTIMATES_COLUMNS)
    # None (no time, no snapshot) as NaN, so that an all-empty column is still a float column in parquet
    return frame.astype({"read": "int64", "position": "int64", "read_s": "float64", "estimated_s": "float64",
                         "snapshot_s": "float64", "age_seconds": "float64"})


def estimate_reads_frame(pages: list[reading.Page]) -> pd.DataFrame:
    """One row per page the estimates reader GET: its read, ClusterQueue, offset, seconds, entries and bytes."""
    frame = pd.DataFrame([(p.read, p.cluster_queue, p.offset, p.seconds, p.entries, p.json_bytes) for p in pages],
                         columns=["read", "cluster_queue", "offset", "seconds", "entries", "json_bytes"])
    return frame.astype({"read": "int64", "offset": "int64", "seconds": "float64", "entries": "int64",
                         "json_bytes": "int64"})


def evictions_frame(evictions: list[figs.Eviction], records: dict[str, figs.WorkloadRecord],
                    start: float) -> pd.DataFrame:
    """One row per eviction: victim and preemptor with their class and ClusterQueue, and the reason,
    so that two schedulers' evictions can be told apart by who preempted whom and why."""
    def of(name: str) -> tuple[str, str]:
        record = records.get(name)
        return (record.workload_class, record.cluster_queue) if record else ("", "")

    rows = []
    for e in evictions:
        (victim_class, victim_cq), (preemptor_class, preemptor_cq) = of(e.victim), of(e.preemptor)
        record = records.get(e.victim)
        # The scheduler chose a target whose Finished write it had not yet seen: no quota was taken back.
        after_finish = record is not None and record.finished is not None and record.finished <= e.t
        rows.append({"t_s": e.t - start, "victim": e.victim, "victim_class": victim_class, "victim_cq": victim_cq,
                     "reason": e.reason, "preemptor": e.preemptor, "preemptor_class": preemptor_class,
                     "preemptor_cq": preemptor_cq, "victim_had_finished": after_finish})
    return pd.DataFrame(rows, columns=["t_s", "victim", "victim_class", "victim_cq", "reason", "preemptor",
                                       "preemptor_class", "preemptor_cq", "victim_had_finished"])


def markdown(frame: pd.DataFrame) -> str:
    """A small GitHub table of the figures frame (no tabulate dependency)."""
    shown = ["metric", "unit", "kqbench", "kqbench_api_1s", "kueue_published", "kueue_rangespec_average",
             "kueue_rangespec_limit", "within_rangespec", "ratio_to_published"]

    def cell(v) -> str:
        if v is None or (isinstance(v, float) and pd.isna(v)):
            return ""
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(shown) + " |", "|" + "---|" * len(shown)]
    for _, row in frame.iterrows():
        lines.append("| " + " | ".join(cell(row[c]) for c in shown) + " |")
    return "\n".join(lines) + "\n"
