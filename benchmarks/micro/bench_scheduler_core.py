"""pyperf micro-benchmarks of scheduler.core (issue 3).

Run (modest, the machine is shared):

    .venv/bin/python benchmarks/micro/bench_scheduler_core.py --fast \
        -o results/benchmarks/scheduler-core/bench_scheduler_core.json

Worlds are built lazily inside each worker and only the timed loop is measured, so the
numbers are per operation and exclude set-up. Snapshot and indexed run in the same
invocation, so their ratio is measured under the same load.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pyperf

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scheduler_core_fixtures as fixtures  # noqa: E402

from scheduler.core.queues import QueueManager  # noqa: E402
from scheduler.core.scheduling import decide_cycle  # noqa: E402

SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000}
_worlds: dict[tuple, QueueManager] = {}


def _world(key: tuple, build: Callable[[], QueueManager]) -> QueueManager:
    if key not in _worlds:
        _worlds.clear()  # one world per worker process is enough; keep memory flat
        _worlds[key] = build()
    return _worlds[key]


def bench_cq_page(loops: int, positions: str, pending: int, limit: int) -> float:
    manager = _world(("single", positions, pending), lambda: fixtures.single_queue_world(pending, positions))
    start = time.perf_counter()
    for _ in range(loops):
        manager.summary_for_cluster_queue("cq-0", 0, limit)
    return time.perf_counter() - start


def bench_lq_page(loops: int, positions: str, pending: int, limit: int) -> float:
    manager = _world(("single", positions, pending), lambda: fixtures.single_queue_world(pending, positions))
    start = time.perf_counter()
    for _ in range(loops):
        manager.summary_for_local_queue("team-0", "lq-3", 0, limit)
    return time.perf_counter() - start


def bench_position_of(loops: int, positions: str, pending: int) -> float:
    manager = _world(("single", positions, pending), lambda: fixtures.single_queue_world(pending, positions))
    key = ("team-0", f"job-0-{pending // 2}")
    start = time.perf_counter()
    for _ in range(loops):
        manager.position_of(key)
    return time.perf_counter() - start


def bench_add_remove(loops: int, positions: str, pending: int) -> float:
    """One add_workload plus one delete_workload of a fresh workload, at ``pending`` pending."""
    manager = _world(("single", positions, pending), lambda: fixtures.single_queue_world(pending, positions))
    extra = fixtures.make_workloads(1, cluster_queue_index=0)[0]
    probe = replace(extra, name="probe", uid="probe-uid")
    start = time.perf_counter()
    for _ in range(loops):
        manager.add_workload(probe)
        manager.delete_workload(probe.key)
    return time.perf_counter() - start


def bench_cycle(loops: int, pending: int) -> float:
    """decide_cycle is pure, so the same world is decided again each loop."""
    manager = _world(("cohorts", pending), lambda: fixtures.cohort_world(pending))
    start = time.perf_counter()
    for _ in range(loops):
        decide_cycle(manager)
    return time.perf_counter() - start


def main() -> None:
    runner = pyperf.Runner()
    runner.metadata["description"] = "scheduler.core micro-benchmarks (issue 3)"
    for size_name, pending in SIZES.items():
        for limit in (100, 1000):
            for positions in ("snapshot", "indexed"):
                runner.bench_time_func(
                    f"cq-page{limit}-{size_name}-{positions}", bench_cq_page, positions, pending, limit
                )
    for positions in ("snapshot", "indexed"):
        runner.bench_time_func(f"lq-page100-100k-{positions}", bench_lq_page, positions, 100_000, 100)
        runner.bench_time_func(f"position-of-100k-{positions}", bench_position_of, positions, 100_000)
        runner.bench_time_func(f"add-remove-100k-{positions}", bench_add_remove, positions, 100_000)
    runner.bench_time_func("cycle-100cq-10cohorts-100k", bench_cycle, 100_000)


if __name__ == "__main__":
    main()
