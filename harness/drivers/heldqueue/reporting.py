"""The report's held-queue section: each case's headline figures side by side, ours / Kueue's with the
goals, and a figure of the page reads. None unless the run has held-queue figures."""

from __future__ import annotations

import html
import io

import pandas as pd
from matplotlib.figure import Figure

from harness.drivers import contract
from harness.drivers.heldqueue import figures as figs, summarising, tabulating as tab
from harness.implementations import names

TITLE = "held-queue: a page of the queue through kube-apiserver, idle, under churn and beside the proxy ceiling"
HEADLINES = (
    ("page of 100, idle queue: p99 ms", "page_p99_ms[cq_page_idle]"),
    ("page of 100, under churn: p99 ms", "page_p99_ms[cq_page_churn]"),
    ("pages/s under churn", "pages_per_second[cq_page_churn]"),
    ("proxy ceiling (aggregated discovery): p99 ms", "page_p99_ms[proxy_ceiling]"),
    ("under churn over the proxy ceiling (p99)", "churn_p99_over_proxy_ceiling"),
    ("every Workload processed: s from the fill's start (estimate if not reached)", "processed_seconds"),
    ("  reached within the bound (1 = yes)", "processed_reached"),
    ("scheduler RSS: bytes per pending Workload", "rss_bytes_per_pending"),
    ("scheduler CPU: ms per pending Workload", "cpu_ms_per_pending"),
    ("apiserver writes per pending Workload", "apiserver_writes_per_pending"),
    ("etcd bytes per Workload", "etcd_bytes_per_workload"),
    ("admissions/s", "admissions_per_second"),
    ("apiserver writes per admission", "apiserver_writes_per_admission"),
)
NOTE = ("Each case on a fresh cluster of this machine, one after the other: N pending Workloads in a ClusterQueue of "
        "zero quota, read through kube-apiserver by back-to-back readers (a p99 needs 100 requests: fewer show none), "
        "then the quota raised to all of them. The proxy ceiling is aggregated discovery, which the scheduler answers "
        "without work: what the kube-apiserver hop alone costs. Kueue's \"processed\" counts its Pending condition "
        "writes where its version writes one per Workload.")


def _label(row: pd.Series) -> str:
    return f"{tab.design(row['implementation'], bool(row['page_cache']))} ({row['case']})"


def headline_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per headline figure, one column per case (labelled by its design)."""
    if frame.empty:
        return pd.DataFrame()
    cases = frame.drop_duplicates("case")
    columns = {case: _label(row) for case, row in zip(cases["case"], cases.to_dict("records"))}
    by = frame.drop_duplicates(["case", "metric"], keep="last").set_index(["case", "metric"])["value"]
    rows = [{"figure": label, **{column: by.get((case, metric)) for case, column in columns.items()}}
            for label, metric in HEADLINES]
    return pd.DataFrame(rows)


def ratio_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per reference case: each figure of RATIOS over Kueue's (with a Kueue case beside it) and its goal, and the
    churn arm's p99 over the proxy ceiling's of the same case."""
    rows = []
    for case, group in frame.groupby("case", sort=False):
        first = group.iloc[0]
        for metric, value in summarising.ratios_to_kueue(frame, str(case)).items():
            goal = figs.GOALS.get(metric)
            rows.append({"case": tab.design(first["implementation"], bool(first["page_cache"])), "figure": metric,
                         "ratio": value, "goal": "" if goal is None else f"{goal[0]} {goal[1]}",
                         "met": None if goal is None else figs.met(value, goal)})
        over = group[group["metric"] == "churn_p99_over_proxy_ceiling"]["value"]
        if not over.empty and first["implementation"] == names.REFERENCE:
            goal = figs.PROXY_GOAL
            rows.append({"case": tab.design(first["implementation"], bool(first["page_cache"])),
                         "figure": "churn_p99_over_proxy_ceiling (same case)", "ratio": float(over.iloc[-1]),
                         "goal": f"{goal[0]} {goal[1]}", "met": figs.met(float(over.iloc[-1]), goal)})
    return pd.DataFrame(rows)


def figure(reads: pd.DataFrame) -> bytes:
    """p99 and pages per second of every read arm, one bar per case (log scale: designs differ by 100x)."""
    labelled = reads.assign(design=[_label(row) for row in reads.to_dict("records")])
    fig = Figure(figsize=(12, 4))
    axes = fig.subplots(1, 2)
    for ax, column, label in ((axes[0], "p99_ms", "p99 of one page (ms)"), (axes[1], "per_second", "pages per second")):
        pivot = labelled.pivot_table(index="arm", columns="design", values=column, aggfunc="last", sort=False)
        pivot = pivot.reindex([arm for arm in tab.ARMS if arm in pivot.index])
        if pivot.isna().all().all():
            ax.text(0.5, 0.5, "not measured in this run", ha="center", va="center", color="gray", transform=ax.transAxes)
        else:
            pivot.astype(float).plot.bar(ax=ax, rot=0, logy=True, legend=False)
        ax.set_ylabel(label)
        ax.set_xlabel("read arm")
    handles, names_ = axes[0].get_legend_handles_labels()
    # below both panels: case ids are long, and a legend inside would hide the bars
    fig.legend(handles, names_, loc="lower center", fontsize="small", frameon=False)
    fig.tight_layout(rect=(0, min(0.5, 0.07 * (len(names_) + 1)), 1, 1))
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80, bbox_inches="tight")
    return buffer.getvalue()


def _html(frame: pd.DataFrame) -> str:
    return frame.to_html(index=False, escape=True, classes="data", na_rep="–", float_format=lambda v: f"{v:.4g}")


def section(tables: contract.Tables) -> contract.ReportSection | None:
    frame = summarising.case_figures(tables)
    if frame.empty:
        return None
    parts = [f"<h2>{html.escape(TITLE)}</h2><p class='muted'>{html.escape(NOTE)}</p>", _html(headline_table(frame))]
    ratios = ratio_table(frame)
    if not ratios.empty:
        parts += ["<h3>ours / Kueue (same run, same machine) and ours / the proxy ceiling</h3>", _html(ratios)]
    milestones = tab.rows_of(tables, tab.MILESTONES_TABLE)
    if not milestones.empty:
        parts += ["<h3>bounded waits</h3>", _html(milestones)]
    reads = tab.rows_of(tables, tab.READS_TABLE)
    shown = () if reads.empty or "case" not in reads.columns else ((TITLE, figure(reads)),)
    return contract.ReportSection("".join(parts), shown)
