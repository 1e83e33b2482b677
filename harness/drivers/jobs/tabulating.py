"""Jobs figures and records -> tidy tables (pure)."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from harness.drivers.jobs import figures as figs, placing, recording

FIGURES_TABLE = "jobs_figures"
RATES_TABLE = "jobs_rates"
JOBS_TABLE = "jobs_jobs"
PODS_TABLE = "jobs_pods"

LATENCY_NAMES = {"admitted": "time_to_admission", "first_running": "time_to_first_pod_running",
                 "completed": "time_to_complete"}
POD_LATENCY_NAMES = {"bind": "pod_create_to_bound", "start": "pod_bound_to_running"}

STEPS = ("created", "admitted", "unsuspended", "first_running", "completed", "workload_finished")
"""A Job's steps in the order they happen; jobs_frame has a `<step>_s` column for each."""
STEP_METRIC = "step_p50_seconds"
"""jobs_figures names the p50 from one step to a later one `step_p50_seconds:FROM:TO`."""
LAST_COMPLETE_METRIC = "last_job_complete_seconds"
"""When the last Job was Complete, after the start of generation."""


def _distribution_rows(prefix: str, dist: figs.Distribution | None, **extra) -> list[dict]:
    if dist is None:
        return []
    return [{"metric": f"{prefix}_{stat}_seconds", "value": float(getattr(dist, stat)), "unit": "s", **extra}
            for stat in ("mean", "p50", "p90", "p99", "max")]


def figures_frame(figures: figs.Figures, extras: dict[str, float], more: Iterable[dict] = ()) -> pd.DataFrame:
    """One row per figure: metric, value, unit, class ('' for all classes)."""
    rows = [{"metric": name, "value": float(value), "unit": "count"} for name, value in (
        ("jobs", figures.jobs), ("jobs_completed", figures.jobs_completed), ("jobs_failed", figures.jobs_failed),
        ("pods", figures.pods), ("pods_succeeded", figures.pods_succeeded),
        ("most_jobs_running", figures.most_jobs_running), ("most_pods_running", figures.most_pods_running),
        ("suspensions", figures.suspensions), ("complete", float(figures.complete)))]
    rows.append({"metric": "wall_seconds", "value": figures.wall_seconds, "unit": "s"})
    for series, value in figures.sustained.items():
        if value is not None:
            rows.append({"metric": f"{series}_per_second_sustained", "value": value, "unit": "1/s"})
    for series, value in figures.peak.items():
        rows.append({"metric": f"{series}_per_second_peak_{figs.PEAK_WINDOW_SECONDS}s", "value": value, "unit": "1/s"})
    for until, dist in figures.job_latency.items():
        rows += _distribution_rows(LATENCY_NAMES[until], dist)
    for (name, until), dist in figures.job_latency_by_class.items():
        rows += _distribution_rows(LATENCY_NAMES[until], dist, job_class=name)
    for kind, dist in figures.pod_latency.items():
        rows += _distribution_rows(POD_LATENCY_NAMES[kind], dist)
    for name, value in extras.items():
        rows.append({"metric": name, "value": float(value), "unit": "s" if name.endswith("_seconds") else "count"})
    rows += list(more)
    frame = pd.DataFrame(rows, columns=["metric", "value", "unit", "job_class"])
    frame["job_class"] = frame["job_class"].fillna("")
    return frame


def rates_frame(figures: figs.Figures) -> pd.DataFrame:
    """series (pods_bound, jobs_admitted, ...), second after the start of generation, count."""
    rows = [{"series": series, "second": second, "count": count}
            for series, counts in figures.rates.items() for second, count in sorted(counts.items())]
    return pd.DataFrame(rows, columns=["series", "second", "count"])


def jobs_frame(recorder: recording.Recorder, start: float) -> pd.DataFrame:
    """One row per Job, times in seconds after the start of generation."""
    def rel(t: float | None) -> float | None:
        return None if t is None else t - start

    rows = [{"namespace": j.namespace, "name": j.name, "job_class": j.job_class, "cluster_queue": j.cluster_queue,
             "pods": j.pods, "created_s": rel(j.created), "admitted_s": rel(j.admitted),
             "unsuspended_s": rel(j.unsuspended), "first_running_s": rel(j.first_running),
             "completed_s": rel(j.completed), "workload_finished_s": rel(j.workload_finished), "failed": j.failed,
             "suspensions": j.suspensions} for j in recorder.jobs.values()]
    return pd.DataFrame(rows, columns=["namespace", "name", "job_class", "cluster_queue", "pods", "created_s",
                                       "admitted_s", "unsuspended_s", "first_running_s", "completed_s",
                                       "workload_finished_s", "failed", "suspensions"])


def pods_frame(recorder: recording.Recorder, start: float) -> pd.DataFrame:
    def rel(t: float | None) -> float | None:
        return None if t is None else t - start

    rows = [{"namespace": ns, "name": name, "job": p.job[1], "created_s": rel(p.created), "bound_s": rel(p.bound),
             "running_s": rel(p.running), "succeeded_s": rel(p.succeeded), "failed_s": rel(p.failed), "node": p.node}
            for (ns, name), p in recorder.pods.items()]
    return pd.DataFrame(rows, columns=["namespace", "name", "job", "created_s", "bound_s", "running_s",
                                       "succeeded_s", "failed_s", "node"])


def step_metric(begin: str, end: str) -> str:
    return f"{STEP_METRIC}:{begin}:{end}"


def step_p50(jobs: pd.DataFrame, begin: str, end: str) -> float | None:
    """p50 over Jobs of the time from one step to another (lower-interpolated: a time some Job took);
    None when no Job has both."""
    waits = (jobs[f"{end}_s"] - jobs[f"{begin}_s"]).dropna()
    return None if waits.empty else float(waits.quantile(0.5, interpolation="lower"))


def step_rows(jobs: pd.DataFrame) -> list[dict]:
    """One figure per step and later step (jobs_frame rows of one case), so the README's step rows read
    jobs_figures, which git keeps, and not the per-Job table, which it does not; a pair no Job has is left out."""
    rows = []
    for i, begin in enumerate(STEPS):
        for end in STEPS[i + 1:]:
            value = step_p50(jobs, begin, end)
            if value is not None:
                rows.append({"metric": step_metric(begin, end), "value": value, "unit": "s", "job_class": ""})
    return rows


def per_job_rows(jobs: pd.DataFrame) -> list[dict]:
    """The figures of jobs_figures read from the per-Job table (one case's rows): the steps' p50s and when the
    last Job was Complete, so that the README reads them from jobs_figures, which git keeps."""
    rows = step_rows(jobs)
    if jobs["completed_s"].notna().any():
        rows.append({"metric": LAST_COMPLETE_METRIC, "value": float(jobs["completed_s"].max()), "unit": "s",
                     "job_class": ""})
    return rows


def placement_rows(kept: dict[str, placing.Kept]) -> list[dict]:
    """Per class that requires a topology level: Jobs judged and Jobs that ran in one domain of it."""
    return [row for name, k in kept.items() for row in (
        {"metric": "topology_jobs_judged", "value": float(k.judged), "unit": "count", "job_class": name},
        {"metric": "topology_jobs_in_one_domain", "value": float(k.in_one_domain), "unit": "count", "job_class": name})]
