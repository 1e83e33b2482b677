"""The report's figures, each from run tables to PNG bytes, or None when the run did not measure what
it draws (the report lists those by name instead of showing empty panels; a partial run still renders).

Every figure takes `cases` (id, column, pending: one row per case) and `colours` (column -> colour),
so a design has one colour in every figure. A per-design number is a curve against pending only when
the sweep varied pending; otherwise one bar per design. Time series are small multiples, one panel
per design with a shared y axis, the run's phases shaded behind them.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping

import orjson
import pandas as pd
from matplotlib.figure import Figure  # no pyplot: no backend to choose, no global figure state

from harness.drivers import contract
from harness.results import headlines
from harness.reporting import palettes

ETCD_LIMIT_BYTES = 1.5 * 1024 * 1024
"""etcd's default --max-request-bytes: an object larger than this cannot be written."""
NOT_MEASURED = "not measured in this run"
UNPHASED = ("bringup", "setup")
"""Phases before the measured load: not shaded (they would squeeze the load phases)."""
PANEL_WIDTH, PANEL_HEIGHT, MAX_PANELS_PER_ROW = 2.9, 2.5, 5
MAX_NAMED_PHASES = 6
"""More phases than this (a capacity search's steps) are shaded without their names, which would overlap."""


def png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    return buffer.getvalue()


def rows_of(tables: Mapping[str, pd.DataFrame], name: str) -> pd.DataFrame:
    frame = tables.get(name)
    return frame if frame is not None and not frame.empty else pd.DataFrame()


def _label(frame: pd.DataFrame, key: str) -> pd.Series:
    return frame["labels"].map(lambda text: orjson.loads(text).get(key, ""))


# -- one number per design -----------------------------------------------------------------------


def case_points(cases: pd.DataFrame, per_case: pd.DataFrame, value: str) -> pd.DataFrame:
    """Per-case values joined with each case's column and pending; the median over repeats."""
    if per_case.empty or cases.empty:
        return pd.DataFrame(columns=["column", "pending", value])
    joined = per_case.merge(cases, left_on="case", right_on="id")
    return joined.groupby(["column", "pending"], as_index=False, sort=False)[value].median()


def varies_pending(points: pd.DataFrame) -> bool:
    """True when some design was measured at more than one pending count (a curve, not a dot)."""
    return not points.empty and int(points.groupby("column")["pending"].nunique().max()) > 1


def by_design(points: pd.DataFrame, cases: pd.DataFrame, colours: Mapping[str, str], value: str, title: str,
              ylabel: str, limit: tuple[float, str] | None = None) -> bytes | None:
    """Curves against pending when the sweep varied it, otherwise one bar per design."""
    if points.empty:
        return None
    order = [c for c in dict.fromkeys(cases["column"]) if c in set(points["column"])]
    if varies_pending(points):
        fig = Figure(figsize=(6.5, 3.6))
        ax = fig.subplots()
        for column in order:
            group = points[points["column"] == column].sort_values("pending")
            ax.plot(group["pending"], group[value], marker="o", color=colours.get(column), label=column)
        ax.set_xlabel("pending Workloads")
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)
        if limit is not None:
            ax.axhline(limit[0], color="red", linestyle="--", linewidth=1)
    else:
        pending = sorted(set(points["pending"]))
        fig = Figure(figsize=(6.5, 0.8 + 0.42 * len(order)))
        ax = fig.subplots()
        values = [float(points[points["column"] == c][value].iloc[0]) for c in order]
        bars = ax.barh(range(len(order)), values, color=[colours.get(c, "gray") for c in order])
        ax.set_yticks(range(len(order)), order, fontsize=9)
        ax.invert_yaxis()
        ax.bar_label(bars, labels=[f"{v:,.4g}" for v in values], padding=3, fontsize=8)
        ax.set_xlabel(ylabel)
        ax.margins(x=0.18)
        if pending and pending != [0]:
            title = f"{title} ({', '.join(f'{p:,}' for p in pending)} pending)"
        if limit is not None and limit[0] <= 1.3 * max(values):
            ax.axvline(limit[0], color="red", linestyle="--", linewidth=1, label=limit[1])
            ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    return png(fig)


def write_qps(tables, cases: pd.DataFrame, colours: Mapping[str, str]) -> bytes | None:
    title = "apiserver writes/s, busiest load phase"
    summary = rows_of(tables, "summary")
    if summary.empty:
        return None
    rates = summary[(summary["metric"] == "apiserver_request_total") & (summary["stat"] == "rate")]
    rates = rates[_label(rates, "verb").isin(headlines.WRITE_VERBS)] if not rates.empty else rates
    steady = rates[~rates["phase"].isin(UNPHASED)]
    if steady.empty:
        return None
    per_case = steady.groupby(["case", "phase"], as_index=False)["value"].sum().groupby("case", as_index=False)["value"].max()
    return by_design(case_points(cases, per_case, "value"), cases, colours, "value", title, "writes/s")


def largest_object(tables, cases: pd.DataFrame, colours: Mapping[str, str]) -> bytes | None:
    title = "largest etcd object"
    census = rows_of(tables, "census")
    if census.empty:
        return None
    per_case = census.groupby("case", as_index=False)["max_bytes"].max()
    points = case_points(cases, per_case, "max_bytes")
    points = points.assign(max_bytes=points["max_bytes"] / 2**10)
    return by_design(points, cases, colours, "max_bytes", title, "KiB",
                     limit=(ETCD_LIMIT_BYTES / 2**10, "etcd limit 1.5 MiB"))


# -- time series: one panel per design -----------------------------------------------------------


def phase_spans(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """case, phase, start, end (s since the case's measurements started) of the measured phases."""
    obs = rows_of(tables, "observations")
    if obs.empty:
        return pd.DataFrame(columns=["case", "phase", "start", "end"])
    spans = obs[~obs["phase"].isin(UNPHASED)].groupby(["case", "phase"], as_index=False, sort=False)["t"].agg(
        start="min", end="max")
    return spans[spans["end"] > spans["start"]].sort_values(["case", "start"])


def panels(count: int, title: str, ylabel: str):
    per_row = min(count, MAX_PANELS_PER_ROW)
    rows = math.ceil(count / per_row)
    fig = Figure(figsize=(PANEL_WIDTH * per_row + 0.6, PANEL_HEIGHT * rows + 0.7))
    axes = fig.subplots(rows, per_row, sharey=True, squeeze=False).flatten()
    for ax in axes[count:]:
        ax.set_axis_off()
    for ax in axes[::per_row]:
        ax.set_ylabel(ylabel)
    fig.suptitle(title, fontsize=11)
    return fig, axes


def shade(ax, spans: pd.DataFrame) -> None:
    """Alternate grey bands per phase; the phase's name on top where the band is wide enough."""
    if spans.empty:
        return
    total = float(spans["end"].max() - spans["start"].min()) or 1.0
    named = len(spans) <= MAX_NAMED_PHASES
    for index, span in enumerate(spans.itertuples()):
        ax.axvspan(span.start, span.end, color="0.88" if index % 2 == 0 else "0.95", zorder=0, linewidth=0)
        if named and (span.end - span.start) / total > 0.12:
            ax.text((span.start + span.end) / 2, 0.98, span.phase, transform=ax.get_xaxis_transform(),
                    ha="center", va="top", fontsize=7, color="0.35")


def panel_title(ax, column: str, colour: str | None) -> None:
    ax.set_title(column, fontsize=9, color=colour or "black", fontweight="bold")


def rss_over_time(tables, cases: pd.DataFrame, colours: Mapping[str, str]) -> bytes | None:
    title = "RSS over time per process (phases shaded)"
    obs = rows_of(tables, "observations")
    rss = obs[(obs["source"] == "process") & (obs["metric"] == "rss_bytes")] if not obs.empty else obs
    if rss.empty:
        return None
    rss = rss.assign(component=_label(rss, "component"))
    rss = rss[rss["component"].isin(["kube-apiserver", "etcd", "scheduler", "kueue"])]
    joined = rss.merge(cases[["id", "column"]], left_on="case", right_on="id")
    if joined.empty:
        return None
    spans = phase_spans(tables)
    order = [c for c in dict.fromkeys(cases["column"]) if c in set(joined["column"])]
    components = sorted(set(joined["component"]))
    fig, axes = panels(len(order), title, "MiB")
    for ax, column in zip(axes, order):
        rows = joined[joined["column"] == column]
        shade(ax, spans[spans["case"] == rows["case"].iloc[0]])
        for index, component in enumerate(components):
            for _, group in rows[rows["component"] == component].groupby("case"):
                group = group.sort_values("t")
                ax.plot(group["t"], group["value"] / 2**20, color=palettes.component_colour(component, index),
                        linewidth=1.2, label=component)
        panel_title(ax, column, colours.get(column))
        ax.set_xlabel("s")
        ax.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    fig.legend(unique.values(), unique.keys(), loc="lower center", ncol=len(unique), fontsize=8,
               bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return png(fig)


FIGURES = (
    contract.Figure("apiserver writes/s per design", write_qps, place=10),
    contract.Figure("Largest etcd object per design", largest_object, place=30),
    contract.Figure("Memory over time, one panel per design", rss_over_time, wide=True, place=50),
)
"""The report's own figures, of the measurements every run takes; the drivers add theirs by `place`."""
