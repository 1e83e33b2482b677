"""The report's part on expected admission times: the error table per case and a scatter of estimated
against real wait (matplotlib; imported by `reporting`, which only the report imports)."""

from __future__ import annotations

import html
import io
from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from harness.drivers import contract
from harness.drivers.kueuebaseline import etascoring, tabulating

TITLE = "expected admission times: estimated against real wait from each read, per sweep point (its repeats together)"
NOTE = ("Each row scores every expected admission time the case's pending Workloads carried when the generator read "
        "their ClusterQueues' pendingworkloads (every estimates_every_seconds), against the Workload's real "
        "admission (its first QuotaReserved time after the read). Error: estimated less real admission, in seconds (positive: "
        "expected later than it came); relative to the real wait from the read (at least {resolution:g} s: both "
        "times are whole seconds). A Workload read pending many times counts many times. Without a time: the "
        "estimator gave a reason instead (share of all estimates). Unadmitted: estimates with a time whose Workload "
        "was not admitted before the run ended; requeued: read after its last admission (evicted, queued again and not "
        "admitted again before the run ended), not scored. Refresh CPU: the scheduler's kqbench_scheduler_estimate_refresh_cpu_seconds per refresh. Page read: "
        "one pendingworkloads GET through kube-apiserver, as the reader timed it; bytes per entry: the pages' JSON "
        "bodies over their entries.")
POINTS_PER_CASE = 4000
"""Points drawn per panel at most (a fixed-seed sample of the scored estimates): a readable scatter."""
PANELS_PER_ROW = 4


def point_of(case: str) -> str:
    """A case id without its repeat (`estimator=rate,r2` -> `estimator=rate`): the repeats of a point share a panel."""
    head, _, last = case.rpartition(",")
    return head if head and last[:1] == "r" and last[1:].isdigit() else case


def scatter(tables: contract.Tables, scores: Mapping[str, etascoring.Scores]) -> bytes | None:
    """One panel per sweep point, its repeats together: real wait (x) against estimated wait (y) from each read,
    at most PANELS_PER_ROW to a row; None with nothing scored."""
    estimates, workloads = tables.get(tabulating.ESTIMATES_TABLE), tables.get(tabulating.WORKLOADS_TABLE)
    if estimates is None or workloads is None or not scores:
        return None
    by_point: dict[str, list] = {}
    for case, s in scores.items():
        rows = etascoring.joined(estimates[(estimates["case"] == case) & (estimates["estimator"].fillna("") != "")],
                                 workloads[workloads["case"] == case],
                                 etascoring.of_case(tables.get(tabulating.ADMISSIONS_TABLE), case))
        by_point.setdefault(point_of(case), []).append((s.estimator, rows[rows["scored"]]))
    panels = []
    for point, parts in by_point.items():
        rows = pd.concat([rows for _, rows in parts], ignore_index=True)
        if len(rows) > POINTS_PER_CASE:
            rows = rows.sample(POINTS_PER_CASE, random_state=0)
        repeats = f", {len(parts)} repeats" if len(parts) > 1 else ""
        panels.append((f"{parts[0][0]} ({point}{repeats})", rows))
    if not any(len(rows) for _, rows in panels):
        return None
    columns = min(PANELS_PER_ROW, len(panels))
    lines = -(-len(panels) // columns)
    fig = Figure(figsize=(4.2 * columns, 4 * lines))
    axes = fig.subplots(lines, columns, squeeze=False).ravel()
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    for ax, (label, rows) in zip(axes, panels):
        ax.scatter(rows["real_wait_s"], rows["estimated_wait_s"], s=4, alpha=0.3)
        top = max(1.0, float(np.nanmax([rows["real_wait_s"].max(), rows["estimated_wait_s"].max(), 1.0])))
        ax.plot([0, top], [0, top], color="black", linewidth=0.8)
        ax.fill_between([0, top], [0, top * (1 - etascoring.TOLERANCE)], [0, top * (1 + etascoring.TOLERANCE)],
                        color="grey", alpha=0.15, linewidth=0)
        ax.set_title(label, fontsize="small")
        ax.set_xlabel("real wait from the read (s)")
        ax.set_ylabel("estimated wait from the read (s)")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    return buffer.getvalue()


def part(tables: contract.Tables) -> tuple[str, tuple[tuple[str, bytes], ...]]:
    """(HTML, figures) of the run's scored estimates; ("", ()) when it read none."""
    scores = etascoring.scores_by_case(tables)
    if not scores:
        return "", ()
    shown = etascoring.table(scores)
    text = (f"<h3>expected admission times against real admissions</h3>"
            f"<p>{html.escape(NOTE.format(resolution=etascoring.RESOLUTION_SECONDS))}</p>"
            + shown.to_html(index=False, escape=True, classes="data", float_format=lambda v: f"{v:.4g}", na_rep=""))
    picture = scatter(tables, scores)
    return text, (((TITLE, picture),) if picture is not None else ())
