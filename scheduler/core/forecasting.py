"""``simulator``: forecast admissions forward from a snapshot with the core's own scheduling cycle (pure).

The world of the snapshot is rebuilt in a fresh ``QueueManager`` (``worlds``), never the live one, and
driven as the controller drives the live one, with simulated time::

    t = now
    repeat: run cycles at t (``scheduling.run_cycle``) while some ClusterQueue has a head to decide;
            then jump t to the next end of a running Workload and finish it there
            (``mark_finished``), which frees its quota and returns parked Workloads
    until nothing is left to end, or the budget (cycles, CPU seconds) runs out.

An admission at time t is the estimate. Order, flavor assignment, borrowing and cohorts, StrictFIFO
and BestEffortFIFO, fair sharing and preemption are the core's; a preemption's targets are evicted in
the same instant (no eviction latency) and queue again, to run their whole runtime once readmitted.

Runtimes come from ``runtimes.RuntimeBook``. A Workload that no runtime is known for, once admitted,
never ends in the forecast; every later admission in its cohort tree could have come earlier, so those
get no time (``NO_RUNTIME``), as does, by default, a Workload whose own runtime is unknown.

Omitted: Topology-aware scheduling (nodes are not copied: a TAS flavor's queue admits nothing here),
admission checks, eviction and requeue latency, the requeue batch period, PodsReady timeouts,
maximum-execution-time deactivations (the limit is taken as the runtime), and Workloads that arrive
after the snapshot.

Cost: each end returns every parked Workload of its cohort tree and the core parks them again one head
(with ``park_equal_shapes``, one shape) per cycle, so a deep BestEffortFIFO queue costs about its parked
shapes times the ends. When the budget runs out, Workloads not reached get their previous estimate
served again with its age, or ``BEYOND_BUDGET`` when there is none.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass

from scheduler.core import estimates, scheduling, worlds
from scheduler.core.decisions import Admit, Decision, Preempt
from scheduler.core.estimates import Estimate, Snapshot
from scheduler.core.queues import QueueManager
from scheduler.core.runtimes import RuntimeBook
from scheduler.core.workloads import Workload, WorkloadKey

NAME = "simulator"
PREEMPTED = "Preempted"


@dataclass(frozen=True, slots=True)
class SimulatorSettings:
    max_cycles: int = 10_000
    """Scheduling cycles per refresh. A cycle decides one head per ClusterQueue, so a queue of n pending
    Workloads needs n cycles at the least and more as parked ones return; the CPU budget is the bound
    that matters to the live scheduler, this one keeps a forecast finite whatever the clock says."""
    max_cpu_seconds: float = 1.0
    """CPU seconds per refresh (the injected clock's): a refresh must not starve the live scheduler."""
    require_own_runtime: bool = True
    """Give no time to a Workload whose own runtime is unknown. Its admission does not depend on it, but
    nothing after it can be forecast, so by default it is marked alike; False gives it its time."""
    park_equal_shapes: bool = True
    """Park every pending Workload of a parked head's shape in the same cycle (Kueue's
    SchedulingEquivalenceHashing, on from v0.18), whatever the live scheduler does: Workloads of one shape
    fit or not alike, and each end returns every parked Workload of the cohort tree, which the core
    otherwise parks again one head per cycle."""

    def __post_init__(self) -> None:
        if self.max_cycles < 1 or self.max_cpu_seconds <= 0:
            raise ValueError("max_cycles must be >= 1 and max_cpu_seconds > 0")


@dataclass(slots=True)
class Forecast:
    """What one run of the forecast found."""

    admitted_at: dict[WorkloadKey, float]
    """Simulated admission time of each pending Workload that got one."""
    unknown_since: dict[frozenset[str], float]
    """Per cohort tree (its ClusterQueues), since when a Workload with no runtime holds quota in it."""
    tree_of: dict[WorkloadKey, frozenset[str]]
    """The cohort tree of each pending Workload's ClusterQueue."""
    cycles: int
    exhausted: bool
    """The budget ran out before the forecast did."""


class _Run:
    """One forecast: the rebuilt manager, the clock of simulated time and the ends still to come."""

    def __init__(self, world: worlds.World, now: float, book: RuntimeBook, park_equal_shapes: bool) -> None:
        self.manager: QueueManager = worlds.manager_from(world)
        if park_equal_shapes:
            self.manager.scheduling_equivalence_hashing = True
        self.book = book
        self.now = now
        self.ends: list[tuple[float, int, WorkloadKey]] = []
        self.turn: dict[WorkloadKey, int] = {}  # bumped when a Workload is evicted: its end is void
        quotas = self.manager.cache.quotas
        self.tree = {name: frozenset(quotas.neighbours(name)) for name in quotas.cluster_queues}
        self.forecast = Forecast({}, {}, {}, 0, False)
        for workload in world.workloads:
            if workload.admission is not None:
                self._running(workload, workload.admission.cluster_queue, self.book.end(workload))
            elif workload.active:
                cq_name = self.manager.pending_lists.cluster_queue_of(workload)
                self.forecast.tree_of[workload.key] = self.tree.get(cq_name, frozenset((cq_name,)))

    def _running(self, workload: Workload, cq_name: str, end: float | None) -> None:
        if end is None:
            tree = self.tree.get(cq_name, frozenset((cq_name,)))
            since = self.forecast.unknown_since
            since[tree] = min(since.get(tree, self.now), self.now)
            return
        turn = self.turn.get(workload.key, 0)
        # One overdue at the snapshot ends then: it is not known to run on.
        heapq.heappush(self.ends, (max(end, self.now), turn, workload.key))

    def run(self, settings: SimulatorSettings, clock: Callable[[], float]) -> Forecast:
        stop = clock() + settings.max_cpu_seconds
        forecast = self.forecast
        while True:
            # At least one cycle after each end: it returns the parked Workloads the freed quota may fit.
            while True:
                if forecast.cycles >= settings.max_cycles or clock() > stop:
                    forecast.exhausted = True
                    return forecast
                decisions = scheduling.run_cycle(self.manager, self.now)
                forecast.cycles += 1
                self._apply(decisions)
                # No decision at all: the heads left are a TAS queue's, which the forecast cannot place.
                if not decisions or not self.manager.has_work():
                    break
            if not self._finish_next():
                return forecast

    def _apply(self, decisions: list[Decision]) -> None:
        """Record a cycle's admissions and carry out its evictions at once."""
        for decision in decisions:
            if isinstance(decision, Admit):
                key = decision.workload.key
                admitted = self.manager.workload(key)
                if admitted is None or admitted.admission is None:
                    continue  # stale: apply_decisions skipped it
                self.forecast.admitted_at.setdefault(key, self.now)
                runtime = self.book.runtime(admitted)
                self._running(admitted, decision.cluster_queue, None if runtime is None else self.now + runtime)
            elif isinstance(decision, Preempt):
                for target in decision.to_evict():
                    key = target.workload.key
                    self.turn[key] = self.turn.get(key, 0) + 1
                    self.manager.mark_evicted(key, PREEMPTED, self.now)

    def _finish_next(self) -> bool:
        """Jump to the next end and finish every Workload ending then; False when none is left."""
        while self.ends:
            end, turn, key = heapq.heappop(self.ends)
            if turn != self.turn.get(key, 0):
                continue  # evicted since: this end is void
            self.now = max(self.now, end)
            self.manager.mark_finished(key)
            while self.ends and self.ends[0][0] <= self.now:
                _, turn, key = heapq.heappop(self.ends)
                if turn == self.turn.get(key, 0):
                    self.manager.mark_finished(key)
            return True
        return False


def forecast(world: worlds.World, now: float, book: RuntimeBook, settings: SimulatorSettings,
             clock: Callable[[], float] = time.process_time) -> Forecast:
    """Run the forecast of ``world`` from ``now`` (POSIX seconds) within ``settings``' budget."""
    return _Run(world, now, book, settings.park_equal_shapes).run(settings, clock)


class Simulator:
    """The ``simulator`` estimator; keeps its last estimates to serve again when a refresh runs out of budget."""

    name = NAME

    def __init__(self, settings: SimulatorSettings | None = None, book: RuntimeBook | None = None,
                 clock: Callable[[], float] = time.process_time) -> None:
        self.settings = settings or SimulatorSettings()
        self.book = book or RuntimeBook()
        self.clock = clock
        self._previous: dict[WorkloadKey, Estimate] = {}

    def estimate(self, snapshot: Snapshot) -> dict[WorkloadKey, Estimate]:
        if snapshot.world is None:
            raise ValueError("the simulator needs a snapshot with its world (snapshot_of(..., with_world=True))")
        now = snapshot.now
        run = forecast(snapshot.world, now, self.book, self.settings, self.clock)
        pending = {w.key: w for w in snapshot.world.workloads if w.admission is None and w.active}
        result = {key: self._one(workload, run, now) for key, workload in pending.items()}
        self._previous = {key: e for key, e in result.items() if e.admission_at is not None}
        return result

    def _one(self, workload: Workload, run: Forecast, now: float) -> Estimate:
        key = workload.key
        unknown_since = run.unknown_since.get(run.tree_of.get(key, frozenset()))
        admitted_at = run.admitted_at.get(key)
        if admitted_at is not None:
            if unknown_since is not None and unknown_since < admitted_at:
                return estimates.unknown(key, NAME, estimates.NO_RUNTIME, now)
            if self.settings.require_own_runtime and self.book.runtime(workload) is None:
                return estimates.unknown(key, NAME, estimates.NO_RUNTIME, now)
            return estimates.at(key, NAME, admitted_at, now)
        if run.exhausted:
            previous = self._previous.get(key)
            return previous.served(now) if previous is not None else estimates.unknown(
                key, NAME, estimates.BEYOND_BUDGET, now)
        reason = estimates.NO_RUNTIME if unknown_since is not None else estimates.NOT_ADMITTED
        return estimates.unknown(key, NAME, reason, now)
