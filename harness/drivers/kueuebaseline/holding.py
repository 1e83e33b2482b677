"""How long a Workload held its quota, as the scheduler counts it and as the generator saw it (pure).

The ClusterQueue usage Kueue's recorder reads (status.flavorsUsage) counts a Workload from the scheduler's
decision until the scheduler has taken in its Finished; the generator's own figure
(`cq_usage_percent_from_workloads`) counts it from when the generator saw the admission until it wrote
Finished. The API records the ends of the first: both implementations stamp QuotaReserved's
lastTransitionTime at the decision, and the generator stamps Finished when it writes it. Per Workload
admitted once and finished:

- ``decided_to_finished_seconds``: Finished time less QuotaReserved time (the API's 1 s resolution on each,
  so one Workload is off by up to a second, their mean is not);
- ``seen_seconds``: the generator's admitted interval (its clock, sub-second);
- ``decision_to_seen_seconds``: the difference, the time from the decision until the generator saw it
  (the write, the watch and the generator's turn): what the status-based usage counts and the
  generator's does not.

Each is a mean weighted by the Workload's cpu, as the usage weighs it.
"""

from __future__ import annotations

import pandas as pd

FIGURES = ("decided_to_finished_seconds", "seen_seconds", "decision_to_seen_seconds")
TABLE = "kueue_holds"
"""The three figures per case (case, figure, value) for runs whose summary predates them: small, kept in git
where the Workloads table they come from is in the results store."""


def holds_frame(workloads: pd.DataFrame) -> pd.DataFrame:
    """hold_figures as a table: one row per case and figure."""
    rows = [{"case": case, "figure": figure, "value": value}
            for case, figures in hold_figures(workloads).items() for figure, value in figures.items()]
    return pd.DataFrame(rows, columns=["case", "figure", "value"])


def from_holds_frame(frame: pd.DataFrame) -> dict[str, dict[str, float]]:
    """hold_figures again from its table."""
    return {str(case): dict(zip(rows["figure"], rows["value"])) for case, rows in frame.groupby("case", sort=False)}


def hold_figures(workloads: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Per case (the frame's `case` column), the three figures; cases without such Workloads are left out."""
    needed = {"case", "cpu_milli", "evictions", "admitted_seconds", "api_quota_reserved", "api_finished"}
    if workloads is None or workloads.empty or not needed <= set(workloads.columns):
        return {}
    once = workloads[(workloads["evictions"] == 0) & workloads["admitted_seconds"].notna()]
    reserved = pd.to_datetime(once["api_quota_reserved"].replace("", None), utc=True, errors="coerce")
    finished = pd.to_datetime(once["api_finished"].replace("", None), utc=True, errors="coerce")
    held = (finished - reserved).dt.total_seconds()
    frame = pd.DataFrame({"case": once["case"], "weight": once["cpu_milli"].astype(float),
                          "api": held, "seen": once["admitted_seconds"].astype(float)}).dropna()
    frame = frame[frame["weight"] > 0]
    out = {}
    for case, rows in frame.groupby("case", sort=False):
        weight = rows["weight"].sum()
        api = float((rows["api"] * rows["weight"]).sum() / weight)
        seen = float((rows["seen"] * rows["weight"]).sum() / weight)
        out[str(case)] = {"decided_to_finished_seconds": api, "seen_seconds": seen,
                          "decision_to_seen_seconds": api - seen}
    return out
