"""The report's SLO section (pure): failures first with their sample counts, checks over too few
requests apart ("insufficient samples", neither PASS nor FAIL), and a compact count per phase."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from harness.metrics import slo as slo_rules

PASS, FAIL, INSUFFICIENT = "PASS", "FAIL", "insufficient samples"
SHOWN = ("column", "phase", "verb", "resource", "subresource", "scope", "count", "p99_seconds", "threshold_seconds")


@dataclass(frozen=True, slots=True)
class SloView:
    min_count: int
    failures: pd.DataFrame
    """FAIL checks, worst p99/threshold first."""
    thin_over: pd.DataFrame
    """Insufficient checks whose p99 is over the threshold: what would have failed on more requests."""
    per_phase: pd.DataFrame
    """phase, PASS, FAIL, insufficient samples: counts over every column."""
    total: int


def verdict(count: float, passed: bool, min_count: int = slo_rules.MIN_COUNT) -> str:
    if not slo_rules.sufficient(count, min_count):
        return INSUFFICIENT
    return PASS if passed else FAIL


def judge(slo: pd.DataFrame | None, column_of: dict[str, str], min_count: int = slo_rules.MIN_COUNT) -> SloView | None:
    """The SLO table grouped for reading; `column_of` names each case's column. None when nothing was checked."""
    if slo is None or slo.empty:
        return None
    frame = slo.assign(column=slo["case"].map(lambda case: column_of.get(case, case)),
                       count=slo["count"].astype(float) if "count" in slo.columns else float(min_count))
    frame = frame.assign(verdict=[verdict(c, bool(p), min_count) for c, p in zip(frame["count"], frame["passed"])],
                         over=frame["p99_seconds"].astype(float) / frame["threshold_seconds"].astype(float))
    shown = [c for c in SHOWN if c in frame.columns]
    failures = frame[frame["verdict"] == FAIL].sort_values("over", ascending=False)[shown]
    thin = frame[(frame["verdict"] == INSUFFICIENT) & (frame["over"] > 1.0)].sort_values("over", ascending=False)[shown]
    order = list(dict.fromkeys(frame["phase"]))
    counts = frame.groupby(["phase", "verdict"]).size().unstack(fill_value=0)
    counts = counts.reindex(index=order, columns=[PASS, FAIL, INSUFFICIENT], fill_value=0)
    counts = counts.rename_axis(index="phase", columns=None).reset_index()
    return SloView(min_count, failures.reset_index(drop=True), thin.reset_index(drop=True), counts, len(frame))
