"""The spread of `apiserver.writes_per_admission[<phase>]` over the committed quick runs that kept their raw
tables (results/baselines/*/tables/summary.parquet and load_totals.parquet), per phase and design: where the
provenance comments of its rules in ci/thresholds.yaml come from. Also the same figure with the load
generator's own writes counted (no load_totals), which spreads two to three times as wide, and the rules'
verdicts run against run: every ordered pair of these runs compared on this metric as `kqbench compare`
would across two machines (counts judged, timings unchecked).

    .venv/bin/python benchmarks/scripts/baselines/writes-per-admission/spread.py

Runs without a machine fingerprint in summary.json predate it and ran on the development machine (AMD EPYC:
results/baselines/README.md, "The false-alarm rate on a fresh machine").
"""

from __future__ import annotations

import itertools
import json
from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd

from harness.load import results as load_results
from harness.reporting import comparing
from harness.results import headlines, runs, summaries

ROOT = Path(__file__).resolve().parents[4]
BASELINES = ROOT / "results" / "baselines"
NO_FINGERPRINT = "AMD EPYC"


def figures() -> pd.DataFrame:
    """One row per run, case and phase: the metric without and with the load's own writes."""
    rows = []
    for table in sorted(BASELINES.glob("*/tables/summary.parquet")):
        folder = table.parents[1]
        summary = pd.read_parquet(table)
        totals = pd.read_parquet(folder / "tables" / f"{load_results.TOTALS_TABLE}.parquet")
        machine = json.loads((folder / "summary.json").read_text()).get("machine") or {}
        cpu = (machine.get("cpu_model") or NO_FINGERPRINT).split("(")[0].strip()
        for case in sorted(summary["case"].unique()):
            own = summary[summary["case"] == case]
            net = headlines.writes_per_admission(own, totals[totals["case"] == case])
            gross = {m.name: m.value for m in headlines.writes_per_admission(own, pd.DataFrame())}
            for metric in net:
                rows.append({"run": folder.name, "cpu": cpu, "design": case.split(",")[0].removeprefix("strategy="),
                             "phase": metric.name.split("[")[1].rstrip("]"), "value": metric.value,
                             "with_load": gross[metric.name]})
    return pd.DataFrame(rows)


def spread(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """Per phase and design: cases, runs, min/median/max, average and the farthest case from it, the farthest pair."""
    out = []
    for (phase, design), group in frame.groupby(["phase", "design"]):
        values = group[column]
        by_cpu = {cpu: f"{g[column].min():.2f}-{g[column].max():.2f}" for cpu, g in group.groupby("cpu")}
        out.append({"phase": phase, "design": design, "cases": len(values), "runs": group["run"].nunique(),
                    "min": values.min(), "median": values.median(), "max": values.max(), "average": values.mean(),
                    "+/- %": 100 * (values - values.mean()).abs().max() / values.mean(),
                    "farthest pair %": 100 * (values.max() / values.min() - 1), **by_cpu})
    return pd.DataFrame(out).round(2)


def run_summaries() -> dict[str, summaries.Summary]:
    """Each run's summary of this metric alone, as `kqbench run` would write it now (medians over repeats)."""
    out = {}
    for table in sorted(BASELINES.glob("*/tables/summary.parquet")):
        folder = table.parents[1]
        summary = pd.read_parquet(table)
        totals = pd.read_parquet(folder / "tables" / f"{load_results.TOTALS_TABLE}.parquet")
        measured = defaultdict(list)
        for case in runs.read_run(folder).cases:
            for metric in headlines.writes_per_admission(summary[summary["case"] == case.id],
                                                         totals[totals["case"] == case.id]):
                measured[(metric.name, case.point)].append(metric)
        entries = [summaries.estimate(name, point, repeats) for (name, point), repeats in measured.items()]
        committed = summaries.read(folder / "summary.json")
        out[folder.name] = summaries.Summary(committed.run_id, committed.scenario or "quick", "ok",
                                             {e.key: e for e in entries}, machine=committed.machine)
    return out


def verdicts(found: dict[str, summaries.Summary]) -> tuple[Counter, list[str]]:
    """(verdict, test) counts over every ordered pair of runs, and a line per regressed row."""
    rules = comparing.load_thresholds(ROOT / "ci" / "thresholds.yaml")
    counted, regressed = Counter(), []
    for base, new in itertools.permutations(found, 2):
        for row in comparing.compare(found[base], found[new], rules, other_machine=True):
            counted[(row.verdict, row.test)] += 1
            if row.verdict == "regressed":
                regressed.append(f"{base} -> {new}: {row.key} {row.base:.2f} -> {row.new:.2f} ({row.change:+.0%})")
    return counted, regressed


if __name__ == "__main__":
    found = figures()
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print("writes per admission, the load's own writes left out (the metric):")
        print(spread(found, "value").to_string(index=False))
        print("\nthe same with the load's own writes counted:")
        print(spread(found, "with_load").to_string(index=False))
    by_run = run_summaries()
    counted, regressed = verdicts(by_run)
    print(f"\n{len(by_run) * (len(by_run) - 1)} ordered pairs of {len(by_run)} runs, judged as across two machines:")
    for (verdict, test), n in sorted(counted.items()):
        print(f"  {verdict} ({test or '-'}): {n}")
    print(*regressed or ["  no regression"], sep="\n")
