"""CPU seconds of one `simulator` refresh (scheduler.core.forecasting) over a deep queue, by its depth.

One ClusterQueue of 100 CPUs preempting lower priorities, 10 LocalQueues, N pending Workloads of four
sizes and ten priorities (scheduler_core_fixtures.single_queue_world: 40 shapes), each declaring a
runtime drawn once from a fixed seed (60-600 s); the forecast runs until every Workload has its time (no
budget). Each depth is measured --repeat times in fresh processes' worth of state (the world is rebuilt);
the figure is the process CPU time of `Simulator.estimate`.

    .venv/bin/python benchmarks/micro/bench_simulator_refresh.py --out results/eta/simulator-refresh.json

Another checkout's core (to compare before and after a change): PYTHONPATH=<checkout> before the command
(its `scheduler` package is then imported instead of this one's).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scheduler_core_fixtures as fixtures  # noqa: E402

import scheduler  # noqa: E402
from harness.results import runs  # noqa: E402
from scheduler.core import estimates, forecasting, runtimes  # noqa: E402

SCHEMA_VERSION = 1
NOW = 1_700_100_000.0


def refresh_seconds(pending: int) -> tuple[float, int]:
    """(CPU seconds of one unbounded refresh, Workloads given a time) for a queue ``pending`` deep."""
    manager = fixtures.single_queue_world(pending, positions="indexed")
    rng = random.Random(fixtures.SEED)
    declared = {w.key: rng.uniform(60, 600) for w in fixtures.make_workloads(pending)}
    unbounded = forecasting.SimulatorSettings(max_cycles=100_000_000, max_cpu_seconds=3600)
    simulator = forecasting.Simulator(unbounded, runtimes.RuntimeBook(declared=declared))
    snapshot = estimates.snapshot_of(manager, (), NOW)
    started = time.process_time()
    result = simulator.estimate(snapshot)
    return time.process_time() - started, sum(1 for e in result.values() if e.admission_at is not None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pending", default="1000,3000,10000", help="Queue depths, comma-separated.")
    parser.add_argument("--repeat", type=int, default=3, help="Refreshes measured per depth.")
    parser.add_argument("--out", type=Path, default=None, help="Write the figures here as JSON.")
    args = parser.parse_args()
    core = Path(scheduler.__file__).resolve().parents[1]
    rows = []
    for pending in (int(p) for p in args.pending.split(",")):
        measured = [refresh_seconds(pending) for _ in range(args.repeat)]
        seconds = [s for s, _ in measured]
        rows.append({"pending": pending, "estimated": measured[0][1], "cpu_seconds_median": statistics.median(seconds),
                     "cpu_seconds_low": min(seconds), "cpu_seconds_high": max(seconds)})
        print(f"{pending:>7,} pending: {rows[-1]['cpu_seconds_median']:.2f} s CPU "
              f"[{min(seconds):.2f}, {max(seconds):.2f}], {measured[0][1]:,} given a time", flush=True)
    record = {"schema_version": SCHEMA_VERSION, "command": " ".join(["python", *sys.argv]),
              "core_git_sha": runs.git_sha(core) or "unknown", "core": str(core), "python": platform.python_version(),
              "machine": platform.processor() or platform.machine(), "repeat": args.repeat, "depths": rows}
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
