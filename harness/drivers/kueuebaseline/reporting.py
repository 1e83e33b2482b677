"""The report's kueue-baseline section: our figures next to Kueue's published ones, and a figure.

None unless the run has the kueue_baseline table.
"""

from __future__ import annotations

import html
import io

import pandas as pd
from matplotlib.figure import Figure

from harness.drivers import contract
from harness.drivers.kueuebaseline import etareporting, summarising, tabulating
from harness.implementations import names

TITLE = "kueue-baseline: admissions over time and time to admission per class (first case of each implementation)"
CLASSES = ("small", "medium", "large")
NOTE = ("Ours: the kqbench reference scheduler (Python, one process) against a real kube-apiserver + etcd with KWOK "
        "nodes, all on this {cpus}-CPU machine together with the generator. Kueue's: minimalkueue in envtest on "
        "Kueue's CI (5 trial runs; the rangespec column is the average its rangespec.yaml comments give). Same "
        "workload and definitions (see harness/drivers/kueuebaseline/figures.py); different scheduler and machine, so the "
        "comparison is of shape, not of speed. Times are from the generator's clock (sub-second); the kqbench_api_1s "
        "column recomputes them from API timestamps, which have 1 s resolution.")
PEER_NOTE = ("Both implementations ran in this run (a sweep over scheduler.implementation), one after the other on "
             "this machine with the same generator: ours / Kueue's below is the like-for-like comparison. CQ usage is "
             "read from ClusterQueue status.flavorsUsage for both, as Kueue's recorder reads it.")


def ratio_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per reference case that has a Kueue counterpart: each figure, ours, Kueue's, ours / Kueue's."""
    if not {"implementation", "case"} <= set(frame.columns):
        return pd.DataFrame()
    rows = []
    kueue = frame[frame["implementation"] == names.KUEUE].drop_duplicates("metric").set_index("metric")["kqbench"]
    for case in frame.loc[frame["implementation"] == names.REFERENCE, "case"].unique():
        ours = frame[frame["case"] == case].drop_duplicates("metric").set_index("metric")["kqbench"]
        rows += [{"case": case, "metric": m, "ours": ours.get(m), "kueue": kueue.get(m), "ours_over_kueue": r}
                 for m, r in summarising.ratios_to_kueue(frame, case).items()]
    return pd.DataFrame(rows)


def _first_case_each(workloads: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(label, rows) for the first case of each implementation (one run's curves, not repeats summed)."""
    if "case" not in workloads.columns:
        return [("", workloads)]
    by = "implementation" if "implementation" in workloads.columns else "case"
    out = []
    for label, rows in workloads.groupby(by, sort=False):
        first = rows["case"].iloc[0]
        out.append((f"{label} " if by == "implementation" else f"{first} ", rows[rows["case"] == first]))
    return out


def figure(workloads: pd.DataFrame) -> bytes:
    fig = Figure(figsize=(12, 4))
    left, right = fig.subplots(1, 2)
    present = [c for c in CLASSES if c in set(workloads["class"])] + sorted(set(workloads["class"]) - set(CLASSES))
    waits, labels = [], []
    for (label, rows), style in zip(_first_case_each(workloads), ("-", "--", ":", "-.")):
        for name in present:
            times = rows.loc[rows["class"] == name, "admitted_s"].dropna().sort_values()
            left.step(times, range(1, len(times) + 1), where="post", linestyle=style, label=f"{label}{name} admitted")
            waits.append((rows.loc[rows["class"] == name, "admitted_s"] - rows.loc[rows["class"] == name, "created_s"])
                         .dropna())
            labels.append(f"{label}{name}")
        finished = rows["finished_s"].dropna().sort_values()
        left.step(finished, range(1, len(finished) + 1), where="post", label=f"{label}all finished", color="black",
                  linestyle=style)
    left.set_xlabel("seconds after the start of generation")
    left.set_ylabel("workloads (cumulative)")
    left.legend(fontsize="small")
    right.boxplot(waits, tick_labels=labels, showfliers=False)
    right.tick_params(axis="x", labelrotation=30)
    right.set_ylabel("time to admission (s)")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    return buffer.getvalue()


EVICTIONS_NOTE = ("Every eviction the generator's informer saw, by the Preempted condition's reason and the classes of "
                  "the preemptor and the victim (the preemptor read from the condition's message), per case on "
                  "average. A preemption InClusterQueue takes from the preemptor's own ClusterQueue; "
                  "InCohortReclamation from a queue of the cohort that borrows. \"(victim had finished)\": the scheduler chose a "
                  "target whose Finished write it had not yet seen, so no quota was taken back; the generator's "
                  "eviction count leaves these out.")
PACE_TITLE = "kueue-baseline: evictions against wall time, per case"


def evictions_table(evictions: pd.DataFrame, figures: pd.DataFrame | None = None) -> pd.DataFrame:
    """Evictions per (reason, preemptor class, victim class), one column per implementation, averaged over its cases:
    every case of the figures table when given (a case that evicted nothing counts), else those that evicted."""
    if evictions is None or evictions.empty or "implementation" not in evictions.columns:
        return pd.DataFrame()
    source = figures if figures is not None and {"case", "implementation"} <= set(figures.columns) else evictions
    cases = source.groupby("implementation")["case"].nunique() if "case" in source.columns else 1
    if "victim_had_finished" in evictions.columns:
        evictions = evictions.assign(reason=evictions["reason"].where(~evictions["victim_had_finished"].astype(bool),
                                                                     evictions["reason"] + " (victim had finished)"))
    counts = evictions.groupby(["reason", "preemptor_class", "victim_class", "implementation"]).size().unstack("implementation")
    counts.columns.name = None
    counts = counts.fillna(0)
    return (counts / cases.reindex(counts.columns) if isinstance(cases, pd.Series) else counts / cases).reset_index()


def pace_figure(frame: pd.DataFrame) -> bytes | None:
    """Each case's evictions against its wall time, by implementation; None with fewer than two cases."""
    if "case" not in frame.columns:
        return None
    per_case = frame[frame["metric"].isin(["wall_seconds", "evictions"])].pivot_table(
        index=["case", "implementation"], columns="metric", values="kqbench").dropna().reset_index()
    if len(per_case) < 2:
        return None
    fig = Figure(figsize=(6, 4))
    axes = fig.subplots()
    for implementation, group in per_case.groupby("implementation"):
        axes.scatter(group["wall_seconds"], group["evictions"], label=implementation)
    axes.set_xlabel("wall time (s)")
    axes.set_ylabel("evictions")
    axes.set_ylim(bottom=0)
    axes.legend()
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    return buffer.getvalue()


def section(tables: contract.Tables, cpus: int | str = "?") -> contract.ReportSection | None:
    """The section with its figure; None when the run has no kueue-baseline figures."""
    frame = tables.get(tabulating.FIGURES_TABLE)
    if frame is None or frame.empty:
        return None
    shown = frame.drop(columns=[c for c in ("phase",) if c in frame.columns])
    classes = tables.get(tabulating.CLASSES_TABLE)
    parts = [f"<h2>kueue-baseline: ours vs Kueue's published figures</h2><p>{html.escape(NOTE.format(cpus=cpus))}</p>",
             shown.to_html(index=False, escape=True, classes="data", float_format=lambda v: f"{v:.4g}", na_rep="")]
    ratios = ratio_table(frame)
    if not ratios.empty:
        parts.append(f"<h3>ours / Kueue, same run, same machine</h3><p>{html.escape(PEER_NOTE)}</p>")
        parts.append(ratios.to_html(index=False, escape=True, classes="data", float_format=lambda v: f"{v:.4g}",
                                    na_rep=""))
    if classes is not None and not classes.empty:
        parts.append(classes.drop(columns=[c for c in ("phase",) if c in classes.columns])
                     .to_html(index=False, escape=True, classes="data", float_format=lambda v: f"{v:.4g}", na_rep=""))
    who = evictions_table(tables.get(tabulating.EVICTIONS_TABLE), frame)
    if not who.empty:
        parts.append(f"<h3>who preempted whom</h3><p>{html.escape(EVICTIONS_NOTE)}</p>")
        parts.append(who.to_html(index=False, escape=True, classes="data", float_format=lambda v: f"{v:.4g}", na_rep=""))
    eta_html, eta_figures = etareporting.part(tables)
    parts.append(eta_html)
    workloads = tables.get(tabulating.WORKLOADS_TABLE)
    figures = ((TITLE, figure(workloads)),) if workloads is not None and not workloads.empty else ()
    figures += eta_figures
    pace = pace_figure(frame)
    if pace is not None:
        figures += ((PACE_TITLE, pace),)
    return contract.ReportSection("".join(parts), figures)
