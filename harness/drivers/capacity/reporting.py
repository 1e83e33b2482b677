"""The report's capacity section: the capacity table, the paper model beside it, and curves
against pending (one line per design, its first broken step marked with an x).

Also writes capacity.csv and capacity-model.csv next to report.html: the small files a reference
run commits instead of its parquet tables.
"""

from __future__ import annotations

import html
import io
import math
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from harness.drivers.capacity import extrapolating, tabulating
from harness.reporting import palettes

TITLE = "Capacity: where each position design breaks"
MODEL_CSV = "capacity-model.csv"
CURVES = (
    ("position_writes_demanded_per_second", "position writes/s demanded (dashed) and delivered", 1.0),
    ("staleness_p99_seconds", "position staleness p99 (s)", 1.0),
    ("bystander_p99_seconds", "bystander p99 (s)", 1.0),
    ("query_p99_seconds", "position query p99 (s)", 1.0),
    ("largest_object_bytes", "largest position object (MB)", 1e-6),
    ("apiserver_rss_bytes", "kube-apiserver RSS (MB)", 1e-6),
    ("etcd_rss_bytes", "etcd RSS (MB)", 1e-6),
    ("admissions_per_second", "admissions/s", 1.0),
    ("visibility_server_p99_seconds", "scheduler's own time per visibility request, p99 (s)", 1.0),
    ("apiserver_cores", "kube-apiserver cores over the hold", 1.0),
    ("scheduler_cores", "scheduler cores over the hold", 1.0),
    ("machine_cores", "whole machine cores over the hold", 1.0),
)
SHOWN = ("design", "conclusion", "max_held", "first_broken", "broke_on", "detail", "steps",
         "at_step_admissions_per_second", "at_step_position_writes_demanded_per_second",
         "at_step_position_writes_per_second", "at_step_staleness_p99_seconds", "at_step_query_p99_seconds",
         "at_step_bystander_p99_seconds", "at_step_largest_object_bytes")


def figure(steps: pd.DataFrame) -> bytes:
    # the report's colours: a strategy has one colour in every figure (designs in the order they ran)
    designs = dict.fromkeys(zip(steps["design"], steps["strategy"]))
    colours = palettes.colours(list(designs))
    fig = Figure(figsize=(16, 8))
    axes = fig.subplots(2, 4).flatten()
    for ax, (column, label, scale) in zip(axes, CURVES):
        drawn = False
        for name, rows in steps.sort_values("load").groupby("design", sort=False):
            color = colours[name]
            values = rows[column].astype(float) * scale
            if values.isna().all():
                continue
            drawn = True
            if column == "position_writes_demanded_per_second":
                ax.plot(rows["load"], values, color=color, linestyle="--")
                values = rows["position_writes_per_second"].astype(float)
            ax.plot(rows["load"], values, marker=".", color=color, label=name)
            broken = rows[~rows["held"].astype(bool)]
            if not broken.empty:
                first = broken.nsmallest(1, "load")
                marked = "position_writes_per_second" if column == "position_writes_demanded_per_second" else column
                ax.plot(first["load"], first[marked].astype(float) * scale, marker="x", markersize=12, color=color,
                        linestyle="none")
        if not drawn:
            ax.text(0.5, 0.5, "not measured in this run", ha="center", va="center", color="gray", transform=ax.transAxes)
        ax.set_xscale("log")
        ax.set_xlabel("pending Workloads")
        ax.set_ylabel(label)
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="upper center", ncol=min(6, len(labels)))
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80, bbox_inches="tight")
    return buffer.getvalue()


def section(tables: Mapping[str, pd.DataFrame], out_dir: Path | None = None):
    """(html, [(title, png)]) or None when the run searched nothing."""
    capacity = tabulating.capacity(tables)
    if capacity.empty:
        return None
    steps = tabulating.judged_steps(tables)
    model = extrapolating.predict(steps, capacity)
    if out_dir is not None:
        capacity.to_csv(Path(out_dir) / tabulating.CAPACITY_CSV, index=False)
        model.to_csv(Path(out_dir) / MODEL_CSV, index=False)
    writes, saturated = extrapolating.write_capacity(steps)
    shown = capacity[[c for c in SHOWN if c in capacity.columns]].to_html(
        index=False, escape=True, classes="data", na_rep="–", float_format=lambda v: f"{v:.4g}")
    modelled = model.to_html(index=False, escape=True, classes="data", na_rep="–",
                             float_format=lambda v: "never" if math.isinf(v) else f"{v:.4g}")
    capacity_note = ("not measured" if math.isnan(writes) else
                     f"{writes:.0f} writes/s ({'at saturation' if saturated else 'largest seen, a lower bound'})")
    body = (f"<h2>{html.escape(TITLE)}</h2>"
            f"<p>Each design's load is raised step by step ({html.escape(capacity['search'].iloc[0])}); "
            "a step breaks when any condition holds. The admissions condition compares with aggregated-indexed "
            "at the same load and is applied after all designs ran.</p>"
            f"{shown}<h3>Paper model vs measurement</h3>"
            f"<p>Apiserver write capacity on this machine: {html.escape(capacity_note)}. Large cluster: "
            f"{extrapolating.LARGE_PENDING} pending at {extrapolating.LARGE_ADMISSIONS_PER_SECOND:g} admissions/s.</p>"
            f"{modelled}")
    return body, (("Capacity: figures against pending (x: first broken step)", figure(steps)),)
