"""The interfaces the runner calls; each piece (scheduler, metrics, load) plugs in behind one.

The runner only knows these protocols. `adapters` holds the default implementations; tests pass
fakes. Every `start`-like call has a matching `stop` the runner registers as a teardown at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

import pandas as pd

from harness.clusters import state
from harness.scenarios import models

Tables = dict[str, pd.DataFrame]
"""Named tidy tables a piece hands back; the runner adds the `case` column and writes them."""


class SchedulerHandle(Protocol):
    """A running scheduler with one position strategy."""

    def pid(self) -> int | None:
        """Its process id, sampled by the measurements (None when not a local process)."""

    def metrics_url(self) -> str | None:
        """Its /metrics, scraped with the apiserver's (None when it serves none)."""

    def stop(self) -> None:
        """Stop it; safe to call twice."""


class SchedulerStarter(Protocol):
    def __call__(self, cluster: state.ClusterInfo, scheduler: models.SchedulerSection, log_dir: Path) -> SchedulerHandle:
        """Install what the strategy needs (CRDs, APIService) and start the scheduler; raise KqbenchError if it can't."""


class Measurements(Protocol):
    """What the control plane did: one instance per case."""

    def start(self, phase: str) -> None: ...

    def watch_process(self, component: str, pid: int) -> None: ...

    def watch_metrics(self, source: str, url: str) -> None: ...

    def mark_phase(self, name: str) -> None: ...

    def stop(self) -> Tables:
        """Stop and return the tables (observations-shaped `samples`, `summary`, `slo`, `census`, ...)."""


class MeasurementsFactory(Protocol):
    def __call__(self, cluster: state.ClusterInfo, measurements: models.MeasurementsSection) -> Measurements: ...


class LoadDriver(Protocol):
    """Drives one phase's load and returns its tables (`load_history`, `load_totals`, `load_failures`)."""

    def __call__(self, cluster: state.ClusterInfo, scenario: models.Scenario, phase_name: str,
                 phase: models.Phase, out_dir: Path) -> Tables: ...


@dataclass(slots=True)
class Hooks:
    """The pieces a run uses; None leaves that piece out (the run says so in its record)."""

    scheduler: SchedulerStarter | None = None
    measurements: MeasurementsFactory | None = None
    load: LoadDriver | None = None
    install_queues: Callable[[state.ClusterInfo, models.QueuesSection], None] | None = None
    notes: list[str] = field(default_factory=list)
    """Why a piece is missing, for run.json and the terminal."""
