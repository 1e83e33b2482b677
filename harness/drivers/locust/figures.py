"""The Locust driver's figures in the report: position-query p99 per design, bystander latency over time."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from harness.drivers import contract
from harness.load import results
from harness.reporting import plotting
from loadtests import naming, settings as load_settings


def query_latency(tables, cases: pd.DataFrame, colours: Mapping[str, str]) -> bytes | None:
    title = "position query p99"
    totals = plotting.rows_of(tables, results.TOTALS_TABLE)
    if totals.empty:
        return None
    modes = totals["name"].map(lambda n: naming.parse(n).mode)
    picked = totals[modes.isin(load_settings.QUERY_MODES) & (totals["requests"] > 0)]
    per_case = picked.groupby("case", as_index=False)["p99_ms"].max()
    return plotting.by_design(plotting.case_points(cases, per_case, "p99_ms"), cases, colours, "p99_ms", title,
                              "p99 (ms)")


def bystander_latency(tables, cases: pd.DataFrame, colours: Mapping[str, str]) -> bytes | None:
    title = "bystander latency over time (p50 solid, p99 dashed; phases shaded)"
    history = plotting.rows_of(tables, results.HISTORY_TABLE)
    picked = history[history["name"].map(lambda n: naming.parse(n).mode == "bystander")] if not history.empty else history
    if picked.empty:
        return None
    spans = plotting.phase_spans(tables)
    # load_history restarts t at every load phase: place each phase where the measurements saw it
    starts = {(s.case, s.phase): s.start for s in spans.itertuples()}
    picked = picked.assign(t=picked["t"] + [starts.get((c, p), 0.0) for c, p in zip(picked["case"], picked["phase"])])
    joined = picked.merge(cases[["id", "column"]], left_on="case", right_on="id")
    order = [c for c in dict.fromkeys(cases["column"]) if c in set(joined["column"])]
    fig, axes = plotting.panels(len(order), title, "ms")
    for ax, column in zip(axes, order):
        rows = joined[joined["column"] == column]
        colour = colours.get(column)
        plotting.shade(ax, spans[spans["case"] == rows["case"].iloc[0]])
        for _, group in rows.groupby("case"):
            series = group.groupby("t", as_index=False)[["p50_ms", "p99_ms"]].max().sort_values("t")
            ax.plot(series["t"], series["p50_ms"], color=colour, linewidth=1)
            ax.plot(series["t"], series["p99_ms"], color=colour, linewidth=1, linestyle="--")
        plotting.panel_title(ax, column, colour)
        ax.set_xlabel("s")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return plotting.png(fig)


FIGURES = (
    contract.Figure("Position query p99 per design", query_latency, place=20),
    contract.Figure("Bystander latency over time, one panel per design", bystander_latency, wide=True, place=40),
)
