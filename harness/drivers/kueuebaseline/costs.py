"""What each kueue-baseline case's scheduler cost the machine and the API (pure).

From the run's `summary` table (each phase's deltas of the scrapes) and the driver's figures table,
per case and phase, in the figures table's shape so that ours / Kueue's ratios come out the same way:

- `cycle_seconds_mean`: the scheduler's mean cycle. Ours: kqbench_scheduler_cycle_duration_seconds;
  Kueue: kueue_admission_attempt_duration_seconds, observed once per `schedule()` call (a cycle).
- `admissions_per_second`: admissions the scheduler counted itself (re-admissions after an eviction
  too) over the wall time.
- `writes_per_admission`: kube-apiserver's writes in the phase less the generator's own (one creation
  and one Finished per Workload, its retries and eviction releases), per admission: what deciding
  cost the API, events and queue statuses included.
- `scheduler_cpu_seconds`, `scheduler_rss_max_bytes`: the scheduler process over the phase.
"""

from __future__ import annotations

import orjson
import pandas as pd

from harness.metrics import catalog
from harness.results import headlines

CYCLE = {"kqbench_scheduler_cycle_duration_seconds", "kueue_admission_attempt_duration_seconds"}
ADMITTED = set(catalog.ADMITTED.values())
GENERATOR_WRITES = ("workloads", "finished", "finish_failures", "create_failures", "generator_released_evictions")
"""Figures-table rows that count the generator's own writes (creations, Finished, retries, releases)."""
UNITS = {"cycle_seconds_mean": "s", "admissions_per_second": "1/s", "writes_per_admission": "ratio",
         "scheduler_cpu_seconds": "s", "scheduler_rss_max_bytes": "B"}
BETTER = {"cycle_seconds_mean": "lower", "admissions_per_second": "higher", "writes_per_admission": "lower",
          "scheduler_cpu_seconds": "lower", "scheduler_rss_max_bytes": "lower"}


def _label(labels: str, key: str) -> str:
    return str(orjson.loads(labels).get(key, "")) if labels else ""


def case_costs(summary: pd.DataFrame, figures: pd.DataFrame, case: str, phase: str) -> dict[str, float]:
    """The figures above for one case's phase (only those its tables hold)."""
    rows = summary[(summary["case"] == case) & (summary["phase"] == phase)]
    own = figures[(figures["case"] == case) & (figures["phase"] == phase)].drop_duplicates("metric")
    figure = dict(zip(own["metric"], own["kqbench"]))
    out: dict[str, float] = {}
    cycles = rows[rows["metric"].isin(CYCLE)]
    count = cycles[cycles["stat"] == "count"]["value"].sum()
    if count > 0:
        out["cycle_seconds_mean"] = float(cycles[cycles["stat"] == "sum"]["value"].sum() / count)
    admissions = float(rows[rows["metric"].isin(ADMITTED) & (rows["stat"] == "delta")]["value"].sum())
    wall = figure.get("wall_seconds")
    if admissions > 0 and wall:
        out["admissions_per_second"] = admissions / float(wall)
    requests = rows[(rows["metric"] == "apiserver_request_total") & (rows["stat"] == "delta")]
    if admissions > 0 and not requests.empty:
        writes = float(requests[requests["labels"].map(lambda text: _label(text, "verb")).isin(headlines.WRITE_VERBS)]["value"].sum())
        generator = sum(float(figure.get(name) or 0.0) for name in GENERATOR_WRITES)
        out["writes_per_admission"] = max(0.0, writes - generator) / admissions
    process = rows[(rows["source"] == "process") & (rows["labels"].map(lambda text: _label(text, "component")) == "scheduler")]
    cpu = process[(process["metric"] == "cpu_seconds") & (process["stat"] == "delta")]["value"]
    if not cpu.empty:
        out["scheduler_cpu_seconds"] = float(cpu.sum())
    rss = process[(process["metric"] == "rss_bytes") & (process["stat"] == "max")]["value"]
    if not rss.empty:
        out["scheduler_rss_max_bytes"] = float(rss.max())
    return out


def costs_frame(summary: pd.DataFrame | None, figures: pd.DataFrame) -> pd.DataFrame:
    """Every case's costs as figures-table rows (case, phase, implementation, metric, unit, kqbench)."""
    columns = ["case", "phase", "implementation", "metric", "unit", "kqbench"]
    if summary is None or summary.empty or "case" not in summary.columns or figures.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for (case, phase), group in figures.groupby(["case", "phase"], sort=False):
        implementation = group["implementation"].iloc[0] if "implementation" in group.columns else None
        for metric, value in case_costs(summary, figures, str(case), str(phase)).items():
            rows.append({"case": case, "phase": phase, "implementation": implementation, "metric": metric,
                         "unit": UNITS[metric], "kqbench": value})
    return pd.DataFrame(rows, columns=columns)
