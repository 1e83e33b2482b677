"""The interfaces the runner calls; each piece (scheduler, metrics, phase drivers) plugs in behind one.

The runner only knows these protocols. `adapters` holds the default implementations; tests pass
fakes. Every `start`-like call has a matching `stop` the runner registers as a teardown at once.
Phases are run by the drivers of `harness.drivers.registry`, which the runner asks by phase kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

import pandas as pd

from harness.clusters import state
from harness.drivers import contract, registry as driverregistry
from harness.implementations import contract as implementations
from harness.invariants import reading as invariantreading
from harness.scenarios import sections

Tables = dict[str, pd.DataFrame]
"""Named tidy tables a piece hands back; the runner adds the `case` column and writes them."""


SchedulerHandle = implementations.SchedulerHandle
SchedulerStarter = implementations.Starter


@dataclass(frozen=True, slots=True)
class Measured:
    tables: Tables
    meta: dict = field(default_factory=dict)
    """What the tables need to be read right (schema version, phase edges, flagged etcd keys); JSON-able."""


class Measurements(Protocol):
    """What the control plane did: one instance per case."""

    def start(self, phase: str) -> None: ...

    def watch_process(self, component: str, pid: int) -> None: ...

    def watch_metrics(self, source: str, url: str, bearer_token: str = "") -> None:
        """Also scrape this /metrics as `source` (a token: HTTPS with a bearer token, as Kueue serves it)."""

    def mark_phase(self, name: str) -> None: ...

    def stop(self) -> Measured:
        """Stop and return the tables (observations-shaped `samples`, `summary`, `slo`, `census`, ...) and their meta."""


class InvariantChecker(Protocol):
    last_cost: invariantreading.ReadCost | None
    """What the last check took (reads of every object, seconds)."""

    def check(self, phase: str) -> pd.DataFrame:
        """The `invariants` table rows of the checks after `phase` (never raises for an unreadable API)."""


class FaultSession(Protocol):
    """The faults of one phase (harness.faults): started with the phase, stopped when it ends."""

    def start(self) -> None: ...

    def stop(self) -> Tables:
        """Bring back whatever is still down; the `faults` table (and invariants checked after each fault)."""

    def close(self) -> None:
        """Stop processes the faults started again (a teardown of the case)."""


class MeasurementsFactory(Protocol):
    def __call__(self, cluster: state.ClusterInfo, measurements: sections.MeasurementsSection) -> Measurements: ...


@dataclass(slots=True)
class Hooks:
    """The pieces a run uses; None leaves that piece out (the run says so in its record)."""

    scheduler: SchedulerStarter | None = None
    restart_scheduler: implementations.Restarter | None = None
    """Its implementation's restart (a phase that wants a fresh scheduler: PhaseContext.restart_scheduler)."""
    measurements: MeasurementsFactory | None = None
    drivers: driverregistry.Registry | None = None
    """Who runs each phase kind; None: phases only mark their time (the measurements still split at them)."""
    install_queues: Callable[[state.ClusterInfo, sections.QueuesSection], None] | None = None
    """Installs the scenario's queue objects (and the Kueue CRDs when no scheduler installed any)."""
    invariants: Callable[[state.ClusterInfo], InvariantChecker] | None = None
    """Checks the queueing objects after every phase (one checker per case: it keeps their history)."""
    faults: Callable[[contract.PhaseContext, list, Callable[[str], pd.DataFrame | None]], FaultSession] | None = None
    """Starts the faults a scenario plans for a phase (with the invariant check to run after each)."""
    calibrate: Callable[[state.ClusterInfo], pd.DataFrame] | None = None
    """Measures the machine on the fresh cluster before anything else runs (the `calibration` table's row)."""
    notes: list[str] = field(default_factory=list)
    """Why a piece is missing, for run.json and the terminal."""
