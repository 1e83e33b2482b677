"""CPU seconds of one `simulator` refresh (scheduler.core.forecasting) over a deep queue, by its depth.

One ClusterQueue of 100 CPUs preempting lower priorities, 10 LocalQueues, N pending Workloads of four
sizes and ten priorities (scheduler_core_fixtures.single_queue_world: 40 shapes), each declaring a
runtime drawn once from a fixed seed (60-600 s); the forecast runs until every Workload has its time (no
budget). Each depth is measured --repeat times in fresh processes' worth of state (the world is rebuilt);
the figure is the process CPU time of `Simulator.estimate`.

What a refresh costs the API: the refresh reads the scheduler's own state and writes nothing; what readers
pay is the fields each pendingworkloads entry gains (scheduler.visibility.estimatefields). Per depth, the
JSON bytes of the whole ClusterQueue's pendingworkloads body as the server encodes it, with and without
those fields (deterministic: measured once).

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
import orjson  # noqa: E402

from scheduler.controller import estimating  # noqa: E402
from scheduler.core import estimates, forecasting, positions, runtimes  # noqa: E402
from scheduler.visibility import documents, estimatefields  # noqa: E402

SCHEMA_VERSION = 2
"""2: the page's bytes without and with the estimate fields."""
NOW = 1_700_100_000.0


def page_bytes(snapshot: estimates.Snapshot, result: dict) -> tuple[int, int]:
    """(bytes without, bytes with the estimate fields) of every ClusterQueue's whole pendingworkloads body."""
    without = with_fields = 0
    board = estimating.Board(forecasting.NAME, 1, result)
    for pending in snapshot.pending.values():
        in_local: dict[tuple[str, str], int] = {}
        items = []
        for position, workload in enumerate(pending):
            key = (workload.namespace, workload.queue_name)
            items.append(positions.make_item(workload, position, in_local.get(key, 0)))
            in_local[key] = in_local.get(key, 0) + 1
        without += len(orjson.dumps(documents.pending_workloads_summary("v1beta2", estimatefields.entries(items, None))))
        with_fields += len(orjson.dumps(documents.pending_workloads_summary("v1beta2",
                                                                           estimatefields.entries(items, board))))
    return without, with_fields


def refresh_seconds(pending: int, measure_bytes: bool = False) -> tuple[float, int, tuple[int, int] | None]:
    """(CPU seconds of one unbounded refresh, Workloads given a time, the page's bytes without and with the
    estimate fields when asked) for a queue ``pending`` deep."""
    manager = fixtures.single_queue_world(pending, positions="indexed")
    rng = random.Random(fixtures.SEED)
    declared = {w.key: rng.uniform(60, 600) for w in fixtures.make_workloads(pending)}
    unbounded = forecasting.SimulatorSettings(max_cycles=100_000_000, max_cpu_seconds=3600)
    simulator = forecasting.Simulator(unbounded, runtimes.RuntimeBook(declared=declared))
    snapshot = estimates.snapshot_of(manager, (), NOW)
    started = time.process_time()
    result = simulator.estimate(snapshot)
    seconds = time.process_time() - started
    return (seconds, sum(1 for e in result.values() if e.admission_at is not None),
            page_bytes(snapshot, result) if measure_bytes else None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pending", default="1000,3000,10000", help="Queue depths, comma-separated.")
    parser.add_argument("--repeat", type=int, default=3, help="Refreshes measured per depth.")
    parser.add_argument("--out", type=Path, default=None, help="Write the figures here as JSON.")
    args = parser.parse_args()
    core = Path(scheduler.__file__).resolve().parents[1]
    rows = []
    for pending in (int(p) for p in args.pending.split(",")):
        measured = [refresh_seconds(pending, measure_bytes=n == 0) for n in range(args.repeat)]
        seconds = [s for s, _, _ in measured]
        without, with_fields = measured[0][2]
        rows.append({"pending": pending, "estimated": measured[0][1], "cpu_seconds_median": statistics.median(seconds),
                     "cpu_seconds_low": min(seconds), "cpu_seconds_high": max(seconds),
                     "page_bytes_without": without, "page_bytes_with": with_fields,
                     "bytes_added_per_entry": (with_fields - without) / pending})
        print(f"{pending:>7,} pending: {rows[-1]['cpu_seconds_median']:.2f} s CPU "
              f"[{min(seconds):.2f}, {max(seconds):.2f}], {measured[0][1]:,} given a time; the whole page "
              f"{without:,} -> {with_fields:,} bytes with the estimates", flush=True)
    record = {"schema_version": SCHEMA_VERSION, "command": " ".join(["python", *sys.argv]),
              "core_git_sha": runs.git_sha(core) or "unknown", "core": str(core), "python": platform.python_version(),
              "machine": platform.processor() or platform.machine(), "repeat": args.repeat, "depths": rows}
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
