"""Expected admission times, served: a periodic refresh that snapshots what the chosen estimator
(scheduler.core.estimators) reads from the core and keeps the latest Estimate per pending Workload.

One refresh every ``refresh_seconds`` once the informers have listed:

1. on the controller's event loop (the core is not thread-safe), a snapshot: the pending Workloads per
   ClusterQueue in queue order, the recent admissions seen on Workload objects (``History``), and for an
   estimator that reads them (the simulator) a copy of the world and the runtimes: declared on the Workload
   (``RUNTIME_ANNOTATION``), else spec.maximumExecutionTimeSeconds (the core's ``RuntimeBook`` reads it),
   else learned per LocalQueue from the Workloads seen finishing;
2. on a thread of its own, the estimate and the metrics: the snapshot holds only objects the core replaces
   and never changes in place (scheduler.core.worlds), so the live core goes on meanwhile;
3. back on the loop, a new ``Board`` replaces the old one in one assignment; the visibility server
   (scheduler.visibility.estimatefields) reads whichever is current.

Times come from the objects, as the core decodes them: an admission's from its QuotaReserved condition, a
finish from its Finished condition, never from when an event happened to arrive. CPU is counted per thread
(``time.thread_time``): process time would also count what the controller does on the loop while the
estimate runs beside it.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry

from scheduler.controller import metering
from scheduler.core import conversion, estimates, estimators, forecasting, runtimes
from scheduler.core.estimates import AdmissionRecord, Estimate, Estimator, Snapshot
from scheduler.core.queues import QueueManager
from scheduler.core.workloads import Workload, WorkloadKey

log = logging.getLogger(__name__)

NONE = "none"
"""The ``estimator`` setting that serves no estimates (the default)."""
NAMES = (NONE, *estimators.MEMBERS)
"""What the ``estimator`` setting may be."""
RUNTIME_ANNOTATION = "kqbench.io/runtime-seconds"
"""Seconds a Workload runs once admitted, declared on it: the annotation the load generator's churn users
write and finish their Workloads by (loadtests.workloads; a unit test holds the two names equal)."""
NOT_ESTIMATED = "not estimated yet"
"""A pending Workload the last refresh did not see: it arrived since, or the estimator leaves it out (the
simulator's world omits the Workloads a stopped queue holds)."""
DEFAULT_REFRESH_SECONDS = 10.0
DEFAULT_MAX_CPU_SECONDS = forecasting.SimulatorSettings().max_cpu_seconds
DEFAULT_MAX_CYCLES = forecasting.SimulatorSettings().max_cycles
ADMISSIONS_KEPT = 100_000
"""Admission records kept at most, whatever the window: a burst of admissions costs bounded memory."""
RUNTIMES_KEPT = 100
"""Runtimes of finished Workloads kept per class; the learned runtime is the mean of these."""


def declared_runtime(obj: Mapping) -> float | None:
    """The seconds a Workload object declares it runs (``RUNTIME_ANNOTATION``); None when absent or not a
    non-negative number."""
    text = ((obj.get("metadata") or {}).get("annotations") or {}).get(RUNTIME_ANNOTATION)
    try:
        seconds = float(text)
    except (TypeError, ValueError):
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def finished_at(obj: Mapping) -> float | None:
    """When a Workload object's Finished condition turned True (POSIX seconds); None when it has none."""
    for condition in (obj.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Finished" and condition.get("status") == "True":
            try:
                return conversion.parse_timestamp(condition.get("lastTransitionTime")) or None
            except ValueError:
                return None
    return None


class History:
    """What the estimators need from Workload objects as the controller takes them in: each admission (queue
    entry and admission time), declared runtimes, and the runtimes of finished Workloads per class."""

    def __init__(self, window_seconds: float, kept: int = ADMISSIONS_KEPT, runtimes_kept: int = RUNTIMES_KEPT,
                 class_of: Callable[[Workload], str] = runtimes.local_queue_class) -> None:
        self.window_seconds = window_seconds
        self.kept = kept
        self.runtimes_kept = runtimes_kept
        self.class_of = class_of
        # (Workload, admitted_at) -> its record: one per admission, a readmission after an eviction is another.
        self._admissions: OrderedDict[tuple[WorkloadKey, float], AdmissionRecord] = OrderedDict()
        self._admitted_at: dict[WorkloadKey, float] = {}
        self._counted: set[WorkloadKey] = set()  # finished Workloads whose runtime was learned
        self._runtimes: dict[str, deque[float]] = {}
        self.declared: dict[WorkloadKey, float] = {}
        """Seconds per Workload not finished, from ``RUNTIME_ANNOTATION``."""

    def observe(self, obj: Mapping, workload: Workload) -> None:
        """Take in a Workload the core took in (its object and its decoded form)."""
        key = workload.key
        if workload.admission is not None and workload.admitted_at > 0:
            self._admitted_at[key] = workload.admitted_at
            mark = (key, workload.admitted_at)
            if mark not in self._admissions:
                self._admissions[mark] = estimates.record_of(workload)
                if len(self._admissions) > self.kept:
                    self._admissions.popitem(last=False)
        if not workload.finished:
            runtime = declared_runtime(obj)
            if runtime is None:
                self.declared.pop(key, None)
            else:
                self.declared[key] = runtime
            return
        self.declared.pop(key, None)
        if key in self._counted:
            return
        self._counted.add(key)
        admitted, ended = self._admitted_at.get(key), finished_at(obj)
        if admitted and ended is not None and ended >= admitted:
            runs = self._runtimes.setdefault(self.class_of(workload), deque(maxlen=self.runtimes_kept))
            runs.append(ended - admitted)

    def forget(self, key: WorkloadKey) -> None:
        """The Workload is gone (its admissions stay counted until they leave the window)."""
        self._admitted_at.pop(key, None)
        self._counted.discard(key)
        self.declared.pop(key, None)

    def admissions(self, now: float) -> tuple[AdmissionRecord, ...]:
        """The admissions in the window before ``now``; older ones are dropped for good."""
        horizon = now - self.window_seconds
        for mark in [m for m, record in self._admissions.items() if record.admitted_at <= horizon]:
            del self._admissions[mark]
        return tuple(self._admissions.values())

    def learned(self) -> dict[str, float]:
        """Mean runtime per class of the finished Workloads kept."""
        return runtimes.learn((name, seconds) for name, runs in self._runtimes.items() for seconds in runs)


@dataclass(frozen=True, slots=True)
class Board:
    """The estimates of one refresh, as the visibility server reads them (replaced whole, never changed)."""

    estimator: str
    generation: int
    """0 before the first refresh, one more at each: a page cached with another one is stale."""
    estimates: Mapping[WorkloadKey, Estimate] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Tally:
    """One refresh's estimates as the metrics count them."""

    waits: dict[str, list[float]]
    """Per ClusterQueue, seconds from the snapshot to each expected admission (never below 0)."""
    without_time: dict[tuple[str, str], int]
    """Per (ClusterQueue, reason), the pending Workloads with no time."""


def tally(snapshot: Snapshot, results: Mapping[WorkloadKey, Estimate]) -> Tally:
    """Count a refresh's estimates per ClusterQueue of the snapshot (``NOT_ESTIMATED`` for a pending Workload
    the estimator gave nothing)."""
    waits: dict[str, list[float]] = {}
    without: dict[tuple[str, str], int] = {}
    for cq_name, pending in snapshot.pending.items():
        for workload in pending:
            estimate = results.get(workload.key)
            if estimate is not None and estimate.admission_at is not None:
                waits.setdefault(cq_name, []).append(max(0.0, estimate.admission_at - snapshot.now))
            else:
                reason = estimate.reason if estimate is not None else NOT_ESTIMATED
                without[(cq_name, reason)] = without.get((cq_name, reason), 0) + 1
    return Tally(waits, without)


class EstimateRefresher:
    """The periodic refresh of one estimator's estimates (see the module's docstring)."""

    def __init__(self, manager: QueueManager, estimator: Estimator, metrics: metering.EstimateMetrics,
                 refresh_seconds: float, history: History, needs_world: bool = False,
                 book: runtimes.RuntimeBook | None = None, clock: Callable[[], float] = time.time,
                 cpu_clock: Callable[[], float] = time.thread_time) -> None:
        self.manager = manager
        self.estimator = estimator
        self.metrics = metrics
        self.refresh_seconds = refresh_seconds
        self.history = history
        self.needs_world = needs_world
        # The book the estimator was made with: its mappings are refilled on the refresh's thread before each
        # estimate, the one thread that reads them.
        self.book = book
        self.clock = clock
        self.cpu_clock = cpu_clock
        self.board = Board(estimator.name, 0)
        self._without_labels: set[tuple[str, str]] = set()

    # -- on the loop ---------------------------------------------------------------------------
    def observe_workload(self, obj: Mapping, workload: Workload) -> None:
        self.history.observe(obj, workload)

    def forget(self, key: WorkloadKey) -> None:
        self.history.forget(key)

    def take(self) -> tuple[Snapshot, dict[WorkloadKey, float], dict[str, float]]:
        """The snapshot, with the declared and learned runtimes when the estimator reads them."""
        now = self.clock()
        snapshot = estimates.snapshot_of(self.manager, self.history.admissions(now), now, self.needs_world)
        if not self.needs_world:
            return snapshot, {}, {}
        return snapshot, dict(self.history.declared), self.history.learned()

    # -- on the refresh's thread -----------------------------------------------------------------
    def compute(self, snapshot: Snapshot, declared: dict[WorkloadKey, float],
                learned: dict[str, float]) -> tuple[dict[WorkloadKey, Estimate], float]:
        """The estimates, their metrics recorded; with the CPU seconds this thread spent on them."""
        started = self.cpu_clock()
        if self.book is not None:
            for mapping, values in ((self.book.declared, declared), (self.book.learned, learned)):
                mapping.clear()  # type: ignore[attr-defined]
                mapping.update(values)  # type: ignore[attr-defined]
        results = self.estimator.estimate(snapshot)
        self.record(tally(snapshot, results))
        return results, self.cpu_clock() - started

    def record(self, counted: Tally) -> None:
        """Observe each wait; the counts without a time replace the last refresh's."""
        for cq_name, waits in counted.waits.items():
            child = self.metrics.waits.labels(cq_name)
            for wait in waits:
                child.observe(wait)
        for labels in self._without_labels - set(counted.without_time):
            self.metrics.without_time.remove(*labels)
        for labels, count in counted.without_time.items():
            self.metrics.without_time.labels(*labels).set(count)
        self._without_labels = set(counted.without_time)

    # -- the loop ----------------------------------------------------------------------------------
    async def refresh(self, pool: ThreadPoolExecutor) -> Board:
        """One refresh: snapshot here, estimate on ``pool``, then the new board."""
        started = self.cpu_clock()
        snapshot, declared, learned = self.take()
        taken = self.cpu_clock() - started
        results, computed = await asyncio.get_running_loop().run_in_executor(
            pool, self.compute, snapshot, declared, learned)
        self.board = Board(self.board.estimator, self.board.generation + 1, results)
        self.metrics.refresh_cpu.observe(taken + computed)
        return self.board

    async def run(self, stop: asyncio.Event) -> None:
        """Refresh every ``refresh_seconds`` until ``stop``; a failed refresh is logged and the last board stays."""
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kqbench-estimates")
        try:
            while not stop.is_set():
                try:
                    await self.refresh(pool)
                except Exception:  # a bug in an estimator must not stop the scheduler
                    self.metrics.refresh_failures.inc()
                    log.exception("estimate refresh (%s) failed", self.board.estimator)
                try:
                    await asyncio.wait_for(stop.wait(), timeout=self.refresh_seconds)
                except asyncio.TimeoutError:
                    pass
        finally:
            # A refresh under way ends within its budget (the simulator's) or one pass over the queues.
            pool.shutdown(wait=True, cancel_futures=True)


def create(manager: QueueManager, estimator: str, refresh_seconds: float, max_cpu_seconds: float,
           max_cycles: int, registry: CollectorRegistry,
           clock: Callable[[], float] = time.time) -> EstimateRefresher | None:
    """The refresher of the named estimator (``NAMES``); None for ``NONE``. ValueError for an unknown name."""
    if estimator == NONE:
        return None
    settings = estimators.EstimatorSettings(
        simulator=forecasting.SimulatorSettings(max_cycles=max_cycles, max_cpu_seconds=max_cpu_seconds))
    book = runtimes.RuntimeBook(declared={}, learned={})
    chosen = estimators.create(estimator, settings, book, time.thread_time)
    window = max(settings.moving_average.window_seconds, settings.rate.window_seconds)
    return EstimateRefresher(manager, chosen, metering.EstimateMetrics(registry), refresh_seconds, History(window),
                             needs_world=estimators.MEMBERS[estimator].needs_world, book=book, clock=clock)
