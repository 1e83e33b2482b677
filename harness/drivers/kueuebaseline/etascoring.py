"""Expected admission times scored against the admissions that really happened in the same run (pure).

Input: the `kueue_estimates` table (one row per Workload per read of the pending Workloads, with the
estimate its entry carried), the driver's `kueue_admissions` table (every QuotaReserved time of each
Workload: an evicted one reserves again) and its `kueue_workloads` table (each Workload's first
QuotaReserved time, `quota_reserved_s`, else the time the generator first saw it admitted, `admitted_s`:
what runs from before the admissions table are scored by), all in seconds after the start of generation.
Per case (one estimator), each estimate with a time is joined with the admission it foretold: its
Workload's first admission after the read:

- error = estimated - real admission (s; positive: expected later than it came); `abs_error_p50/p90`;
- the real wait from the read: real admission - read time; `relative_error_p50` is |error| over it, and
  `within_share` the share of estimates whose |error| is within `TOLERANCE` of it. The API keeps both
  times in whole seconds, so a wait under `RESOLUTION_SECONDS` counts as that much (a Workload admitted in
  the second after the read is not a division by nought);
- `bias_seconds`: the median signed error (negative: optimistic);
- `without_time_share`: estimates served without a time (any reason), and per reason;
- not scored: estimates whose Workload was never admitted in the run (`unadmitted`: the run ended first),
  and those read after its last admission by more than the resolution (`requeued`: evicted and queued
  again, not admitted again before the run ended; without the admissions table, every read after the
  first admission).

Every estimate counts, so a Workload read pending ten times weighs ten times: the scores are of what
readers were told, over the run. The refresh's CPU per refresh (p50, p99) comes from the scraped
histogram `kqbench_scheduler_estimate_refresh_cpu_seconds` in the run's `summary` table, when the case
has it (the reference scheduler with an estimator); the read path's cost from the `kueue_estimate_reads`
table (one row per page GET): its latency (p50, p99) and the body's bytes per entry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from harness.drivers import contract
from harness.drivers.kueuebaseline import tabulating

TOLERANCE = 0.2
"""An estimate is "within" when its error is at most this share of the real wait."""
RESOLUTION_SECONDS = 1.0
"""The API's timestamps (estimatedAdmissionTime, QuotaReserved) are whole seconds."""
REFRESH_CPU = "kqbench_scheduler_estimate_refresh_cpu_seconds"


@dataclass(frozen=True, slots=True)
class Scores:
    """One case's scores; None where nothing was there to score."""

    estimator: str
    estimates: int
    """Entries read that carried an estimator's fields."""
    scored: int
    abs_error_p50_seconds: float | None = None
    abs_error_p90_seconds: float | None = None
    relative_error_p50: float | None = None
    within_share: float | None = None
    bias_seconds: float | None = None
    without_time_share: float | None = None
    without_time_by_reason: Mapping[str, float] = field(default_factory=dict)
    """Reason -> share of all estimates."""
    unadmitted: int = 0
    requeued: int = 0
    refreshes: float | None = None
    refresh_cpu_p50_seconds: float | None = None
    refresh_cpu_p99_seconds: float | None = None
    read_latency_p50_seconds: float | None = None
    read_latency_p99_seconds: float | None = None
    read_bytes_per_entry: float | None = None
    """A page body's JSON bytes per entry, over every page that had entries."""


def real_admissions(workloads: pd.DataFrame) -> pd.Series:
    """Workload name -> its first real admission (s after the start): QuotaReserved's time, else first seen."""
    seen = workloads["admitted_s"].astype("float64")
    if "quota_reserved_s" in workloads.columns:
        seen = workloads["quota_reserved_s"].astype("float64").fillna(seen)
    return pd.Series(seen.to_numpy(), index=workloads["name"].to_numpy()).dropna()


def every_admission(workloads: pd.DataFrame, admissions: pd.DataFrame | None = None) -> pd.DataFrame:
    """(workload, admission_s): each Workload's every quota reservation from the admissions table, and its
    first admission from the Workloads table for one the admissions table has no time of."""
    first = real_admissions(workloads)
    first = first[~first.index.duplicated()]
    parts = []
    if admissions is not None and not admissions.empty:
        known = admissions[admissions["quota_reserved_s"].notna()]
        parts.append(pd.DataFrame({"workload": known["name"].to_numpy(),
                                   "admission_s": known["quota_reserved_s"].to_numpy(dtype=float)}))
        first = first[~first.index.isin(known["name"])]
    parts.append(pd.DataFrame({"workload": first.index.to_numpy(), "admission_s": first.to_numpy(dtype=float)}))
    return pd.concat(parts, ignore_index=True).drop_duplicates()


def joined(estimates: pd.DataFrame, workloads: pd.DataFrame, admissions: pd.DataFrame | None = None) -> pd.DataFrame:
    """The estimates with a time, each with `real_s` (the Workload's first admission after the read, within the
    resolution; NaN: none), `error_s`, `real_wait_s`, `estimated_wait_s`, `admitted` (ever, in the run) and
    `scored` (an admission came after the read)."""
    timed = estimates[estimates["estimated_s"].notna()].copy()
    every = every_admission(workloads, admissions)
    timed["admitted"] = timed["workload"].isin(every["workload"])
    timed["_key"] = (timed["read_s"] - RESOLUTION_SECONDS).astype("float64")
    timed["_row"] = range(len(timed))
    # one key type on both sides: parquet gives strings a string dtype, a frame built here may hold objects
    found = pd.merge_asof(timed[["_key", "_row"]].assign(workload=timed["workload"].astype(object)).sort_values("_key"),
                          pd.DataFrame({"workload": every["workload"].astype(object),
                                        "real_s": every["admission_s"].astype("float64"),
                                        "_key": every["admission_s"].astype("float64")}).sort_values("_key"),
                          on="_key", by="workload", direction="forward")
    timed["real_s"] = found.set_index("_row")["real_s"].reindex(timed["_row"]).to_numpy(dtype=float)
    timed = timed.drop(columns=["_key", "_row"])
    timed["error_s"] = timed["estimated_s"] - timed["real_s"]
    timed["real_wait_s"] = timed["real_s"] - timed["read_s"]
    timed["estimated_wait_s"] = timed["estimated_s"] - timed["read_s"]
    timed["scored"] = timed["real_s"].notna()
    return timed


def read_path(reads: pd.DataFrame | None) -> tuple[float | None, float | None, float | None]:
    """(p50, p99 seconds per page GET, bytes per entry) of a case's estimate reads (Nones without any)."""
    if reads is None or reads.empty:
        return None, None, None
    seconds = reads["seconds"].to_numpy(dtype=float)
    filled = reads[reads["entries"] > 0]
    per_entry = float(filled["json_bytes"].sum() / filled["entries"].sum()) if not filled.empty else None
    return _quantile(seconds, 0.5), _quantile(seconds, 0.99), per_entry


def score(estimates: pd.DataFrame, workloads: pd.DataFrame, summary: pd.DataFrame | None = None,
          admissions: pd.DataFrame | None = None, reads: pd.DataFrame | None = None) -> Scores | None:
    """One case's scores (its rows of each table); None when it read no estimates."""
    if estimates is None or estimates.empty or workloads is None:
        return None
    served = estimates[estimates["estimator"].fillna("") != ""]
    if served.empty:
        return None
    rows = joined(served, workloads, admissions)
    scored = rows[rows["scored"]]
    errors = scored["error_s"].to_numpy(dtype=float)
    waits = np.maximum(scored["real_wait_s"].to_numpy(dtype=float), RESOLUTION_SECONDS)
    relative = np.abs(errors) / waits if len(errors) else errors
    untimed = served[served["estimated_s"].isna()]
    by_reason = {str(reason): count / len(served) for reason, count in untimed["reason"].value_counts().items()}
    refreshes, p50, p99 = refresh_cpu(summary, served)
    return Scores(
        estimator=str(served["estimator"].mode().iloc[0]), estimates=len(served), scored=len(scored),
        abs_error_p50_seconds=_quantile(np.abs(errors), 0.5), abs_error_p90_seconds=_quantile(np.abs(errors), 0.9),
        relative_error_p50=_quantile(relative, 0.5),
        within_share=float(np.mean(relative <= TOLERANCE)) if len(errors) else None,
        bias_seconds=_quantile(errors, 0.5), without_time_share=len(untimed) / len(served),
        without_time_by_reason=by_reason, unadmitted=int((~rows["admitted"]).sum()),
        requeued=int((rows["admitted"] & ~rows["scored"]).sum()),
        refreshes=refreshes, refresh_cpu_p50_seconds=p50, refresh_cpu_p99_seconds=p99,
        **dict(zip(("read_latency_p50_seconds", "read_latency_p99_seconds", "read_bytes_per_entry"), read_path(reads))))


def refresh_cpu(summary: pd.DataFrame | None, estimates: pd.DataFrame) -> tuple[float | None, float | None, float | None]:
    """(refreshes, p50, p99 CPU seconds per refresh) of the case's phases the estimates were read in; over
    several phases the refreshes add up and the worst quantile is kept."""
    if summary is None or summary.empty or "metric" not in summary.columns:
        return None, None, None
    rows = summary[summary["metric"] == REFRESH_CPU]
    if "case" in estimates.columns and "case" in rows.columns:
        rows = rows[rows["case"].isin(estimates["case"].unique())]
    if "phase" in estimates.columns and "phase" in rows.columns:
        rows = rows[rows["phase"].isin(estimates["phase"].unique())]
    if rows.empty:
        return None, None, None

    def stat(name: str, combine) -> float | None:
        values = rows.loc[rows["stat"] == name, "value"].dropna()
        return float(combine(values)) if not values.empty else None

    return stat("count", np.sum), stat("p50", np.max), stat("p99", np.max)


def _quantile(values: np.ndarray, q: float) -> float | None:
    return float(np.quantile(values, q)) if len(values) else None


def slug(reason: str) -> str:
    """A reason as a metric's bracketed label: 'no runtime declared' -> 'no-runtime-declared'."""
    return re.sub(r"[^a-z0-9]+", "-", reason.lower()).strip("-") or "none"


def of_case(frame: pd.DataFrame | None, case: str) -> pd.DataFrame | None:
    """A table's rows of one case (None for a run without the table)."""
    if frame is None or "case" not in frame.columns:
        return None
    return frame[frame["case"] == case]


def scores_by_case(tables: contract.Tables) -> dict[str, Scores]:
    """Every case of the run that read estimates -> its scores."""
    estimates, workloads = tables.get(tabulating.ESTIMATES_TABLE), tables.get(tabulating.WORKLOADS_TABLE)
    if estimates is None or estimates.empty or workloads is None or "case" not in estimates.columns:
        return {}
    out = {}
    for case in estimates["case"].unique():
        scores = score(estimates[estimates["case"] == case], workloads[workloads["case"] == case], tables.get("summary"),
                       of_case(tables.get(tabulating.ADMISSIONS_TABLE), case),
                       of_case(tables.get(tabulating.ESTIMATE_READS_TABLE), case))
        if scores is not None:
            out[str(case)] = scores
    return out


def metrics(scores: Scores | None) -> list[contract.Metric]:
    """The case's `eta.*` summary entries."""
    if scores is None:
        return []
    figures = [("eta.scored", float(scores.scored), "count", "higher"),
               ("eta.abs_error_p50_seconds", scores.abs_error_p50_seconds, "s", "lower"),
               ("eta.abs_error_p90_seconds", scores.abs_error_p90_seconds, "s", "lower"),
               ("eta.relative_error_p50", scores.relative_error_p50, "ratio", "lower"),
               (f"eta.within_{round(TOLERANCE * 100)}pct_share", scores.within_share, "ratio", "higher"),
               # the sign says which way (the report shows it); the summary's direction needs a size
               ("eta.bias_abs_seconds", None if scores.bias_seconds is None else abs(scores.bias_seconds), "s", "lower"),
               ("eta.without_time_share", scores.without_time_share, "ratio", "lower"),
               ("eta.unadmitted", float(scores.unadmitted), "count", "lower"),
               ("eta.refresh_cpu_p50_seconds", scores.refresh_cpu_p50_seconds, "s", "lower"),
               ("eta.refresh_cpu_p99_seconds", scores.refresh_cpu_p99_seconds, "s", "lower"),
               ("eta.read_latency_p50_seconds", scores.read_latency_p50_seconds, "s", "lower"),
               ("eta.read_latency_p99_seconds", scores.read_latency_p99_seconds, "s", "lower"),
               ("eta.read_bytes_per_entry", scores.read_bytes_per_entry, "B", "lower")]
    figures += [(f"eta.without_time_share[{slug(reason)}]", share, "ratio", "lower")
                for reason, share in sorted(scores.without_time_by_reason.items())]
    return [contract.Metric(name, float(value), unit, better) for name, value, unit, better in figures
            if value is not None]


def table(scores: Mapping[str, Scores]) -> pd.DataFrame:
    """The report's error table: one row per case."""
    rows = []
    for case, s in scores.items():
        rows.append({"case": case, "estimator": s.estimator, "estimates": s.estimates, "scored": s.scored,
                     "abs error p50 (s)": s.abs_error_p50_seconds, "abs error p90 (s)": s.abs_error_p90_seconds,
                     "relative error p50": s.relative_error_p50,
                     f"within ±{round(TOLERANCE * 100)}%": s.within_share, "bias (s, median signed)": s.bias_seconds,
                     "without a time": s.without_time_share,
                     "reasons": "; ".join(f"{r}: {v:.1%}" for r, v in sorted(s.without_time_by_reason.items())),
                     "unadmitted": s.unadmitted, "requeued": s.requeued,
                     "refresh CPU p50 (s)": s.refresh_cpu_p50_seconds, "refresh CPU p99 (s)": s.refresh_cpu_p99_seconds,
                     "page read p50 (s)": s.read_latency_p50_seconds, "page read p99 (s)": s.read_latency_p99_seconds,
                     "bytes per entry": s.read_bytes_per_entry})
    return pd.DataFrame(rows)
