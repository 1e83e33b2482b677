"""The jobs driver's summary metrics (pure); with real Kueue in the same run, ours / Kueue's."""

from __future__ import annotations

import pandas as pd

from harness.drivers import contract, peers
from harness.drivers.jobs import tabulating

BETTER = {
    "complete": "higher", "wall_seconds": "lower", "suspensions": "lower",
    "time_to_admission_p50_seconds": "lower", "time_to_admission_p99_seconds": "lower",
    "time_to_first_pod_running_p50_seconds": "lower", "time_to_first_pod_running_p99_seconds": "lower",
    "time_to_complete_p50_seconds": "lower", "time_to_complete_p99_seconds": "lower",
    "pod_create_to_bound_p99_seconds": "lower",
    "pods_bound_per_second_sustained": "higher", "pods_running_per_second_sustained": "higher",
    "pods_succeeded_per_second_sustained": "higher",
}
"""Rows of the jobs_figures table (all classes) that become summary entries, and which way is better."""
RATIOS = ("wall_seconds", "time_to_admission_p50_seconds", "time_to_first_pod_running_p50_seconds",
          "time_to_complete_p50_seconds", "pods_bound_per_second_sustained")


def _overall(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["job_class"].fillna("") == ""] if "job_class" in frame.columns else frame


def metrics(tables: contract.Tables, case: str) -> list[contract.Metric]:
    frame = tables.get(tabulating.FIGURES_TABLE)
    if frame is None or frame.empty or "case" not in frame.columns:
        return []
    mine = _overall(frame[frame["case"] == case])
    out = [contract.Metric(f"jobs.{row.metric}", float(row.value), str(row.unit), BETTER[row.metric])
           for row in mine.itertuples() if row.metric in BETTER and pd.notna(row.value)]
    out += [contract.Metric(f"jobs.ratio_to_kueue.{metric}", value, "ratio", BETTER[metric])
            for metric, value in ratios_to_kueue(frame, case).items()]
    return out


def ratios_to_kueue(frame: pd.DataFrame, case: str) -> dict[str, float]:
    """Ours / Kueue's per figure (all classes together) for a reference case of a run that also ran Kueue."""
    return peers.ratios_to_kueue(_overall(frame), case, RATIOS)
