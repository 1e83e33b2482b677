"""One capacity step on a running cluster and scheduler: reset, fill, hold, judge.

1. Reset: delete every Workload, then restart the scheduler. Steps are independent this way: the
   apiserver holds no Workloads of the previous step, and the scheduler holds no debt from it (a
   broken status-field step leaves thousands of position writes queued in memory, which would
   take minutes to drain at 50 writes/s and would be charged to the next step).
2. Fill: one Locust run with churn (keeping `load` Workloads pending), position queries and
   bystanders. A watcher thread marks the hold once the scheduler reports the target pending (or
   when the fill budget is spent), so Locust is never restarted between fill and hold. With a bulk
   fill, all but the churn's own share of `load` is first written straight into etcd as a backlog,
   and the Locust run's churn keeps only that share.
3. Judge: figures from three boundary scrapes, the Locust history of the hold and process RSS.

The I/O is behind `Edges`, so the step's sequencing is unit-tested with fakes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd
import psutil

from harness.drivers.capacity import conditions, figures, searching
from harness.errors import KqbenchError
from harness.metrics import samples, summarising

REACHED = 0.9
"""Share of the target pending at which the hold starts: the churn's own count lags admissions by
its refresh period, so the scheduler's count settles a little below the target."""
FILL_SLACK = 1.3
"""Fill budget over the nominal `load / create rate`: creates queue behind the design's writes."""
FILL_FLOOR_SECONDS = 20.0
POLL_SECONDS = 2.0
RESET_SECONDS = 10.0
"""Deleting an empty namespace's Workloads and restarting the scheduler (measured: 6-10 s)."""
DELETE_PER_SECOND = 1000.0
"""Workloads kube-apiserver deletes per second in a delete-collection on this machine (estimate)."""
BULK_PER_SECOND = 2000.0
"""Bulk-loaded Workloads per second until the reference scheduler holds them (2,071/s measured at 100k,
results/bringup/workloads-bulk-and-posts)."""


@dataclass(frozen=True, slots=True)
class LoadOutcome:
    history: pd.DataFrame
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    """The Locust run as result tables (emitted with the step's phase name)."""


@dataclass(slots=True)
class Edges:
    """What a step does to the world; each replaceable in tests."""

    reset: Callable[[], None]
    """Delete every Workload and restart the scheduler (bounded; KqbenchError when it cannot)."""
    scrape: Callable[[], dict[str, samples.Scrape]]
    """The apiserver's and the scheduler's /metrics, with buckets, keyed by source."""
    processes: Callable[[], Sequence[summarising.ProcessSample]]
    pending: Callable[[], float | None]
    """Pending Workloads the scheduler reports now (None when it does not answer)."""
    run_load: Callable[[int, float, str], LoadOutcome]
    """Locust with churn at `pending`, queries and bystanders for `seconds`; raw files under the name."""
    mark_phase: Callable[[str], None]
    clock: Callable[[], float] = time.monotonic
    load_backlog: Callable[[int], float] | None = None
    """Write that many pending Workloads straight into etcd beneath the churn and wait until the
    scheduler holds them; returns the seconds it took (None: this world has no bulk path)."""
    machine_busy: Callable[[], float | None] = lambda: None
    """CPU seconds every process of the machine has used so far (None: not known in this world)."""


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy since boot, all cores (psutil's counters less idle)."""
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


@dataclass(frozen=True, slots=True)
class StepSettings:
    phase_name: str
    hold_seconds: float
    fill_timeout_seconds: float
    create_per_second: float
    query_mode: str
    thresholds: conditions.BreakThresholds
    churn_pending: int | None = None
    """Bulk fill: the churn keeps this many pending and a backlog the rest (None: the churn keeps all)."""

    def churn_of(self, load: int) -> int:
        """What the churn keeps pending of a step's `load`; the backlog is the rest."""
        return load if self.churn_pending is None else min(load, self.churn_pending)

    def fill_budget(self, load: int) -> float:
        return min(self.fill_timeout_seconds, load / self.create_per_second * FILL_SLACK + FILL_FLOOR_SECONDS)


@dataclass(slots=True)
class _Hold:
    scrape: dict[str, samples.Scrape] | None = None
    at: float | None = None
    processes: Sequence[summarising.ProcessSample] = ()
    machine_busy: float | None = None
    pending: float | None = None
    error: BaseException | None = None


class Stepper:
    """The step function of a search: `stepper(load) -> Verdict`; finished steps' tables in `on_tables`."""

    def __init__(self, settings: StepSettings, edges: Edges,
                 on_tables: Callable[[str, dict[str, pd.DataFrame]], None] = lambda phase, tables: None,
                 poll_seconds: float = POLL_SECONDS) -> None:
        self.settings = settings
        self.edges = edges
        self.on_tables = on_tables
        self.poll_seconds = poll_seconds
        self.index = 0

    def phase_of(self, index: int, part: str) -> str:
        return f"{self.settings.phase_name}-{index:02d}-{part}"

    def __call__(self, load: int) -> searching.Verdict:
        index, self.index = self.index, self.index + 1
        edges = self.edges
        edges.reset()
        edges.mark_phase(self.phase_of(index, "fill"))
        start, started_processes = edges.scrape(), list(edges.processes())
        churn = self.settings.churn_of(load)
        if churn < load:
            if edges.load_backlog is None:
                raise KqbenchError("a bulk fill needs a cluster whose etcd the harness can write to")
            edges.load_backlog(load - churn)
        budget = self.settings.fill_budget(churn)
        hold = _Hold()
        stop = threading.Event()
        launched = edges.clock()
        watcher = threading.Thread(target=self._watch, args=(load, launched + budget, index, hold, stop),
                                   name="kqbench-capacity-hold", daemon=True)
        watcher.start()
        try:
            outcome = edges.run_load(churn, budget + self.settings.hold_seconds, self.phase_of(index, "load"))
        finally:
            stop.set()
            watcher.join(timeout=60)
        if hold.error is not None:
            raise KqbenchError(f"marking the hold of step {index} failed: {hold.error}")
        if hold.scrape is None:
            raise KqbenchError(f"step {index}: the load ended before its hold began (fill budget {budget:.0f}s)")
        self.on_tables(self.phase_of(index, "load"), outcome.tables)
        end, ended_processes, ended_busy = edges.scrape(), list(edges.processes()), edges.machine_busy()
        held_seconds = (ended_processes[0].t - hold.processes[0].t) if ended_processes and hold.processes else 0.0
        busy = None if ended_busy is None or hold.machine_busy is None else ended_busy - hold.machine_busy
        measured = figures.combine(
            figures.cores_over_hold(hold.processes, ended_processes, busy, held_seconds),
            {"cores_available": float(psutil.cpu_count() or 0) or None},
            figures.from_scrapes(figures.Boundaries(start, hold.scrape, end)),
            figures.from_history(outcome.history, hold.at - launched, self.settings.query_mode),
            figures.from_processes([*started_processes, *hold.processes, *ended_processes]),
            {"fill_share": None if hold.pending is None else hold.pending / load},
        )
        return conditions.verdict(self.settings.thresholds, measured)

    def _watch(self, load: int, deadline: float, index: int, hold: _Hold, stop: threading.Event) -> None:
        """Mark the hold when pending reaches the target or the fill budget is spent (whichever first)."""
        try:
            while not stop.wait(self.poll_seconds):
                pending = self.edges.pending()
                reached = pending is not None and pending >= REACHED * load
                if reached or self.edges.clock() >= deadline:
                    self.edges.mark_phase(self.phase_of(index, "hold"))
                    hold.scrape, hold.at = self.edges.scrape(), self.edges.clock()
                    hold.processes = list(self.edges.processes())
                    hold.machine_busy = self.edges.machine_busy()
                    hold.pending = pending
                    return
        except BaseException as error:  # reported by the step, not lost in a thread
            hold.error = error


def estimate_seconds(settings: StepSettings, loads: Sequence[int]) -> float:
    """A dry estimate of a search's duration over `loads` (reset + backlog + fill budget + hold per step)."""
    return sum(RESET_SECONDS + load / DELETE_PER_SECOND + (load - settings.churn_of(load)) / BULK_PER_SECOND
               + settings.fill_budget(settings.churn_of(load)) + settings.hold_seconds for load in loads)
