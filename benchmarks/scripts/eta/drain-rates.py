"""Admissions per scheduling cycle and per second in a deep-queue run (kubernetes-sigs/kueue#14477's shape).

    .venv/bin/python benchmarks/scripts/eta/drain-rates.py results/eta/deep-queue-RUN

Reads the run's `tables/summary.csv` (its drain phase) and `summary.json`. A cycle: the reference
scheduler's `kqbench_scheduler_cycle_duration_seconds` count, Kueue's `kueue_admission_attempts_total`
(every result: one attempt per scheduling cycle that had heads); admissions: each one's admissions counter.
The drain: from the first Workload's creation to the last one's admission (`tables/kueue_workloads`, the
driver's own clock); admissions and cycles per second are over it, and with the mean cycle time
(`kueue.cycle_seconds_mean`) they give the share of the drain the cycles took (near 1: the cycle time is
the ceiling; far below it: something else paces the cycles). Writes `drain.json` into the run folder: per implementation the median over
the run's repeats, with the lowest and highest, which the README's table reads.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import pandas as pd

CYCLES = {"scheduler": ("kqbench_scheduler_cycle_duration_seconds", "count"),
          "kueue": ("kueue_admission_attempts_total", "delta")}
ADMITTED = {"scheduler": ("kqbench_scheduler_admitted_total", "delta"),
            "kueue": ("kueue_admitted_workloads_total", "delta")}
PHASE = "drain"


def _sum(frame: pd.DataFrame, case: str, source: str, metric: str, stat: str) -> float:
    rows = frame[(frame["case"] == case) & (frame["source"] == source) & (frame["metric"] == metric)
                 & (frame["stat"] == stat) & (frame["phase"] == PHASE)]
    return float(rows["value"].sum())


def _sample(metrics: dict, name: str, point: str, repeat: int) -> float:
    """One repeat's value of a summary metric (its samples go by repeat)."""
    entry = metrics[f"{name} @ {point}"]
    return entry["samples"][repeat] if len(entry["samples"]) > repeat else entry["value"]


def per_case(folder: Path) -> dict[str, dict]:
    frame = pd.read_csv(folder / "tables" / "summary.csv", keep_default_na=False)
    workloads = pd.read_csv(folder / "tables" / "kueue_workloads.csv")
    metrics = json.loads((folder / "summary.json").read_text())["metrics"]
    out = {}
    for case in sorted(frame["case"].unique()):
        source = "kueue" if "implementation=kueue" in case else "scheduler"
        cycles = _sum(frame, case, source, *CYCLES[source])
        admitted = _sum(frame, case, source, *ADMITTED[source])
        point, _, repeat = case.rpartition(",r")
        cycle_seconds = _sample(metrics, "kueue.cycle_seconds_mean", point, int(repeat))
        mine = workloads[workloads["case"] == case]
        drain = float(mine["admitted_s"].max() - mine["created_s"].min())
        per_second = admitted / drain
        out[case] = {"implementation": "kueue" if source == "kueue" else "reference", "cycles": cycles,
                     "admitted": admitted, "drain_seconds": drain, "admissions_per_cycle": admitted / cycles if cycles else None,
                     "admissions_per_second": per_second,
                     "cycles_per_second": per_second * cycles / admitted if admitted else None,
                     "cycle_ms_mean": cycle_seconds * 1000,
                     # the share of the drain its cycles took: near 1, the cycle time is the ceiling
                     "busy_share": per_second * cycles / admitted * cycle_seconds if admitted else None}
    return out


def summarise(cases: dict[str, dict]) -> dict[str, dict]:
    """Median, lowest and highest over the repeats of each implementation."""
    out: dict[str, dict] = {}
    for implementation in sorted({c["implementation"] for c in cases.values()}):
        rows = [c for c in cases.values() if c["implementation"] == implementation]
        out[implementation] = {"repeats": len(rows)}
        for key in ("admissions_per_cycle", "admissions_per_second", "cycles_per_second", "cycle_ms_mean",
                    "busy_share", "drain_seconds", "cycles", "admitted"):
            values = [r[key] for r in rows if r[key] is not None]
            out[implementation][key] = {"median": statistics.median(values), "low": min(values), "high": max(values)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a deep-queue run folder")
    args = parser.parse_args()
    cases = per_case(args.run)
    record = {"cases": cases, "implementations": summarise(cases)}
    (args.run / "drain.json").write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record["implementations"], indent=2))


if __name__ == "__main__":
    main()
