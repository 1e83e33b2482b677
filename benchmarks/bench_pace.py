"""Benchmark (no cluster): how many evictions Kueue's baseline makes at each scheduler pace, with the
decisions held fixed (the reference core) and only the pace changed.

For each scenario and each cycle time in --cycles, `harness.drivers.kueuebaseline.pacing` runs the
baseline in process (arrivals on Kueue's schedule, run times, batched retries, Kueue's 1-10 ms
slow-down) and counts admissions, evictions and cycles. One more point per scenario writes the
reasons of turned-away heads in the cycle (--write-seconds each), as Kueue does. Writes pace.json
(every point, the command, the git sha) and pace.png into --out.

    .venv/bin/python benchmarks/bench_pace.py --out results/peer/pace
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from harness.drivers.kueuebaseline import pacing  # noqa: E402
from harness.results import runs  # noqa: E402
from harness.scenarios import loading  # noqa: E402

SCENARIOS = ("results/peer/kueue-baseline-1cohort-peers.yaml", "results/peer/kueue-baseline-peers.yaml")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", help="kueue-baseline scenarios (default: one cohort, full size)")
    parser.add_argument("--cycles", default="0.001,0.003,0.01,0.02,0.05,0.1,0.15,0.3",
                        help="cycle times to sweep, seconds, comma-separated")
    parser.add_argument("--write-seconds", type=float, default=0.004,
                        help="one pending-reason write for the Kueue-writes point")
    parser.add_argument("--out", type=Path, default=Path("results/peer/pace"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    points = []
    for path in args.scenario or SCENARIOS:
        scenario = loading.load(path).scenario
        paces = [pacing.Pace(cycle_seconds=float(c)) for c in args.cycles.split(",")]
        paces.append(pacing.Pace(cycle_seconds=0.003, write_seconds=args.write_seconds, release_seconds=0.05))
        for pace in paces:
            started = time.perf_counter()
            outcome = pacing.run(scenario, pace)
            point = {"scenario": path, "pace": dataclasses.asdict(pace),
                     "wall_seconds": round(outcome.wall_seconds, 2), "cycles": outcome.cycles,
                     "admissions": outcome.admissions, "evictions": outcome.evictions,
                     "evictions_by_class": outcome.evictions_by_class, "pending_writes": outcome.pending_writes,
                     "complete": outcome.complete}
            points.append(point)
            print(f"{Path(path).stem} {point['pace']}: evictions {outcome.evictions}, cycles {outcome.cycles}, "
                  f"wall {outcome.wall_seconds:.0f} s ({time.perf_counter() - started:.0f} s)", flush=True)
    record = {"command": " ".join(["benchmarks/bench_pace.py", *sys.argv[1:]]), "git": runs.git_sha(), "points": points}
    (args.out / "pace.json").write_text(json.dumps(record, indent=1) + "\n")
    _plot(points, args.out / "pace.png")
    return 0


def _plot(points: list[dict], path: Path) -> None:
    figure, axis = plt.subplots(figsize=(7, 4))
    for scenario in dict.fromkeys(p["scenario"] for p in points):
        swept = [p for p in points if p["scenario"] == scenario and not p["pace"]["write_seconds"]]
        axis.plot([p["pace"]["cycle_seconds"] * 1000 for p in swept], [p["evictions"] for p in swept], marker="o",
                  label=Path(scenario).stem)
    axis.set_xscale("log")
    axis.set_yscale("symlog")
    axis.set_xlabel("cycle time, ms (the same decisions, the core)")
    axis.set_ylabel("evictions in the run")
    axis.set_title("Kueue's baseline: evictions against the scheduler's pace")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
