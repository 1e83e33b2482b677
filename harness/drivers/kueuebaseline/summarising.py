"""The kueue-baseline driver's summary metrics: Kueue's figures by Kueue's names (pure).

When the run holds the same phase for the reference scheduler and for real Kueue (a sweep over
`scheduler.implementation`), the reference case also gets `kueue.ratio_to_kueue.<figure>`: ours /
Kueue's, measured in the same run on the same machine.
"""

from __future__ import annotations

import pandas as pd

from harness.drivers import contract, peers
from harness.drivers.kueuebaseline import costs, etascoring, holding, tabulating
from harness.stats import fairness

BETTER = {"wall_seconds": "lower", "cq_usage_percent": "higher", "time_to_admission_seconds[small]": "lower",
          "time_to_admission_seconds[medium]": "lower", "time_to_admission_seconds[large]": "lower",
          "complete": "higher", "evictions": "lower"}
"""Rows of the kueue_baseline table that become summary entries, and which direction is better."""
RATIOS = ("wall_seconds", "cq_usage_percent", "time_to_admission_seconds[small]",
          "time_to_admission_seconds[medium]", "time_to_admission_seconds[large]")
"""Figures whose ours / Kueue's ratio is summarised (the goals: wall and time to admission <= 1)."""
FAIRNESS_RATIOS = {"jain_index": "higher", "share_error": "lower"}
"""Fairness figures set beside Kueue's as a ratio too (the goal: within 5% where the decisions agree)."""


def metrics(tables: contract.Tables, case: str) -> list[contract.Metric]:
    frame = tables.get(tabulating.FIGURES_TABLE)
    if frame is None or frame.empty or "case" not in frame.columns:
        return []
    out = []
    mine = frame[frame["case"] == case]
    for _, row in mine.iterrows():
        metric = str(row["metric"])
        if metric in BETTER and pd.notna(row["kqbench"]):
            out.append(contract.Metric(f"kueue.{metric}", float(row["kqbench"]), str(row["unit"]), BETTER[metric]))
    for metric, value in ratios_to_kueue(frame, case).items():
        out.append(contract.Metric(f"kueue.ratio_to_kueue.{metric}", value, "ratio", BETTER[metric]))
    spent = costs.costs_frame(tables.get("summary"), frame)
    for _, row in spent[spent["case"] == case].iterrows():
        out.append(contract.Metric(f"kueue.{row['metric']}", float(row["kqbench"]), str(row["unit"]),
                                   costs.BETTER[row["metric"]]))
    for metric, value in peers.ratios_to_kueue(spent, case, costs.BETTER, value="kqbench").items():
        out.append(contract.Metric(f"kueue.ratio_to_kueue.{metric}", value, "ratio", costs.BETTER[metric]))
    if "within_rangespec" in mine.columns and mine["within_rangespec"].notna().any():
        # Kueue's checker: how many of its rangespec's bounds the run breaks (0 passes)
        failed = int((~mine["within_rangespec"].dropna().astype(bool)).sum())
        out.append(contract.Metric("kueue.rangespec_failures", float(failed), "count", "lower"))
    workloads = tables.get(tabulating.WORKLOADS_TABLE)
    return (out + fairness_metrics(workloads, case) + fairness_ratios(workloads, frame, case) + hold_metrics(workloads, case)
            + eta_metrics(tables, workloads, case))


def eta_metrics(tables: contract.Tables, workloads: pd.DataFrame | None, case: str) -> list[contract.Metric]:
    """The case's expected admission times scored against its real admissions (``etascoring``), when it read them."""
    estimates = tables.get(tabulating.ESTIMATES_TABLE)
    if estimates is None or estimates.empty or workloads is None or "case" not in estimates.columns:
        return []
    return etascoring.metrics(etascoring.score(estimates[estimates["case"] == case], workloads[workloads["case"] == case],
                                               tables.get("summary"),
                                               etascoring.of_case(tables.get(tabulating.ADMISSIONS_TABLE), case),
                                               etascoring.of_case(tables.get(tabulating.ESTIMATE_READS_TABLE), case)))


def hold_metrics(workloads: pd.DataFrame | None, case: str) -> list[contract.Metric]:
    """How long quota was held, decision to Finished and as the generator saw it (``holding``): why the
    status-based usage reads more than the Workloads' own."""
    if workloads is None or workloads.empty or "case" not in workloads.columns:
        return []
    figures = holding.hold_figures(workloads[workloads["case"] == case]).get(case, {})
    return [contract.Metric(f"kueue.hold.{name}", value, "s", "lower") for name, value in figures.items()]


def fairness_metrics(workloads: pd.DataFrame | None, case: str) -> list[contract.Metric]:
    """Jain's index, share error and longest starvation over the case's ClusterQueues (harness.stats.fairness),
    within each cohort and by each queue's entitlement (tabulating.with_entitlements); tables written
    before those columns: one pool, every queue alike (Kueue's configurations give each the same quota)."""
    if workloads is None or workloads.empty or "case" not in workloads.columns:
        return []
    rows = workloads[workloads["case"] == case]
    spans = [fairness.WorkloadSpan(str(r.cluster_queue), int(r.cpu_milli), float(r.created_s), _seconds(r.admitted_s),
                                   _seconds(r.finished_s))
             for r in rows.itertuples(index=False) if pd.notna(r.created_s)]
    queues = rows.drop_duplicates("cluster_queue")
    pools = dict(zip(queues["cluster_queue"], queues["cohort"])) if "cohort" in rows.columns else None
    entitlements = dict(zip(queues["cluster_queue"], queues["entitlement"])) if "entitlement" in rows.columns else {}
    result = fairness.fairness(spans, entitlements, pools=pools)
    figures = (("jain_index", result.jain_index, "ratio", "higher"),
               ("share_error", result.share_error, "ratio", "lower"),
               ("longest_starvation_seconds", result.longest_starvation_seconds if spans else None, "s", "lower"))
    return [contract.Metric(f"kueue.fairness.{name}", float(value), unit, better)
            for name, value, unit, better in figures if value is not None]


def fairness_ratios(workloads: pd.DataFrame | None, frame: pd.DataFrame, case: str) -> list[contract.Metric]:
    """Ours / Kueue's Jain index and share error, for a reference case whose Kueue twin ran."""
    if workloads is None or workloads.empty or "implementation" not in frame.columns:
        return []
    if "implementation=reference" not in case:
        return []
    kueue_cases = frame.loc[frame["implementation"] == "kueue", "case"]
    twin = peers.kueue_case(kueue_cases, case)
    if twin is None or not (workloads["case"] == twin).any():
        return []
    ours, theirs = ({m.name.removeprefix("kueue.fairness."): m.value for m in fairness_metrics(workloads, c)}
                    for c in (case, twin))
    return [contract.Metric(f"kueue.ratio_to_kueue.fairness.{name}", ours[name] / theirs[name], "ratio", better)
            for name, better in FAIRNESS_RATIOS.items() if name in ours and theirs.get(name)]


def _seconds(value: object) -> float | None:
    return None if pd.isna(value) else float(value)  # type: ignore[arg-type]


def ratios_to_kueue(frame: pd.DataFrame, case: str) -> dict[str, float]:
    """Ours / Kueue's per figure, for a reference case of a run that also ran Kueue (else empty)."""
    return peers.ratios_to_kueue(frame, case, RATIOS, value="kqbench")
