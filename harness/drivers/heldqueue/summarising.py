"""The held-queue driver's summary metrics: each case's figures, and ours / Kueue's from the same run (pure).

Every figure of a case is one row of `case_figures` (case, phase, implementation, page_cache, metric,
unit, better, value), read from the driver's four tables; a reference case of a run that also ran Kueue
(a sweep over the scheduler) gets `heldqueue.ratio_to_kueue.<metric>` for the figures in RATIOS, Kueue's
case found by harness.drivers.peers (ours without its page cache is set beside the same Kueue case).
"""

from __future__ import annotations

import pandas as pd

from harness.drivers import contract, peers
from harness.drivers.heldqueue import figures as figs, tabulating as tab
from harness.stats import intervals

PREFIX = "heldqueue"
BETTER = {"processed_seconds": "lower", "processed_reached": "higher", "cpu_ms_per_pending": "lower",
          "rss_bytes_per_pending": "lower", "scheduler_rss_bytes": "lower",
          "apiserver_writes_per_pending": "lower", "etcd_bytes_per_workload": "lower",
          "admissions_per_second": "higher", "admitted_reached": "higher", "apiserver_writes_per_admission": "lower",
          "churn_p99_over_proxy_ceiling": "lower",
          **{f"page_p99_ms[{arm}]": "lower" for arm in tab.ARMS},
          **{f"pages_per_second[{arm}]": "higher" for arm in tab.ARMS}}
"""The figures that become summary entries, and which direction is better."""
UNITS = {"processed_seconds": "s", "processed_reached": "count", "admitted_reached": "count",
         "churn_p99_over_proxy_ceiling": "ratio", **{f"page_p99_ms[{arm}]": "ms" for arm in tab.ARMS},
         **{f"pages_per_second[{arm}]": "1/s" for arm in tab.ARMS}}
RATIOS = ("processed_seconds", "scheduler_rss_bytes", "cpu_ms_per_pending", "apiserver_writes_per_pending",
          "etcd_bytes_per_workload", "page_p99_ms[cq_page_idle]", "page_p99_ms[cq_page_churn]",
          "pages_per_second[cq_page_churn]", "admissions_per_second", "apiserver_writes_per_admission")
"""Figures set beside Kueue's as ours / Kueue's (the goals, figures.GOALS, are on two of them)."""
COLUMNS = ["case", *tab.LABELS, "metric", "unit", "better", "value"]


def _milestone_figures(milestones: pd.DataFrame) -> list[dict]:
    rows = []
    for row in milestones.itertuples(index=False):
        found = figs.Milestone(row.milestone, int(row.target), bool(row.reached), float(row.seconds), float(row.done),
                               float(row.rate_per_second),
                               None if pd.isna(row.estimated_seconds) else float(row.estimated_seconds))
        base = {"case": row.case, "phase": row.phase, "implementation": row.implementation, "page_cache": row.page_cache}
        rows.append({**base, "metric": f"{found.name}_reached", "value": float(found.reached)})
        if found.name == tab.PROCESSED and found.seconds_or_estimate is not None:
            rows.append({**base, "metric": "processed_seconds", "value": float(found.seconds_or_estimate)})
    return rows


def _read_figures(reads: pd.DataFrame) -> list[dict]:
    """p99 per arm where its requests are enough for one (intervals.has_quantile), pages per second, and
    the churn arm's p99 over the proxy ceiling's of the same case."""
    rows = []
    for (case, phase), arms in reads.groupby(["case", "phase"], sort=False):
        first = arms.iloc[0]
        base = {"case": case, "phase": phase, "implementation": first["implementation"],
                "page_cache": first["page_cache"]}
        p99 = {}
        for arm in arms.itertuples(index=False):
            rows.append({**base, "metric": f"pages_per_second[{arm.arm}]", "value": float(arm.per_second)})
            if intervals.has_quantile(0.99, int(arm.requests)) and pd.notna(arm.p99_ms):
                p99[arm.arm] = float(arm.p99_ms)
                rows.append({**base, "metric": f"page_p99_ms[{arm.arm}]", "value": p99[arm.arm]})
        over = figs.ratio(p99.get(tab.CHURN_ARM), p99.get(tab.CEILING_ARM))
        if over is not None:
            rows.append({**base, "metric": "churn_p99_over_proxy_ceiling", "value": over})
    return rows


def case_figures(tables: contract.Tables) -> pd.DataFrame:
    """Every case's summary figures, one row each (the driver's tables as they are in the run)."""
    rows = []
    found = tab.rows_of(tables, tab.FIGURES_TABLE)
    if not found.empty and "case" in found.columns:
        rows += found[found["metric"].isin(BETTER)][["case", *tab.LABELS, "metric", "value"]].to_dict("records")
    milestones = tab.rows_of(tables, tab.MILESTONES_TABLE)
    if not milestones.empty and "case" in milestones.columns:
        rows += _milestone_figures(milestones)
    reads = tab.rows_of(tables, tab.READS_TABLE)
    if not reads.empty and "case" in reads.columns:
        rows += _read_figures(reads)
    frame = pd.DataFrame(rows, columns=["case", *tab.LABELS, "metric", "value"])
    return frame.assign(unit=frame["metric"].map(lambda m: UNITS.get(m) or tab.unit_of(m)),
                        better=frame["metric"].map(BETTER))[COLUMNS]


def ratios_to_kueue(frame: pd.DataFrame, case: str) -> dict[str, float]:
    """Ours / Kueue's per figure of RATIOS, for a reference case of a run that also ran Kueue (else empty)."""
    return peers.ratios_to_kueue(frame, case, RATIOS)


def metrics(tables: contract.Tables, case: str) -> list[contract.Metric]:
    frame = case_figures(tables)
    mine = frame[frame["case"] == case].drop_duplicates("metric", keep="last")
    out = [contract.Metric(f"{PREFIX}.{row.metric}", float(row.value), str(row.unit), str(row.better))
           for row in mine.itertuples(index=False)]
    out += [contract.Metric(f"{PREFIX}.ratio_to_kueue.{metric}", value, "ratio", BETTER[metric])
            for metric, value in ratios_to_kueue(frame, case).items()]
    return out

