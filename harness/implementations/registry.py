"""The scheduler implementations under test, keyed by name (scenario field `scheduler.implementation`).

An implementation starts its scheduler from the scenario's scheduler section (installing the Kueue
API it needs), one way for the runner and `kqbench scheduler run` alike, says which position
strategies it can publish, and finds its schedulers already running on a cluster.
A running scheduler is a SchedulerHandle: its pid (sampled by the measurements), its /metrics
endpoint (scraped into the run's tables under the implementation's own source name), alive() and stop().

Adding an implementation: a module or folder exporting `IMPLEMENTATION`, and one line in
`_IMPLEMENTATIONS` below. Like the drivers, implementation modules import
`harness.scenarios.models` for annotations only: models validates names against this registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from harness.clusters import state
    from harness.scenarios import models


@dataclass(frozen=True, slots=True)
class MetricsEndpoint:
    """Where a scheduler's Prometheus /metrics is on 127.0.0.1, and how to read it."""

    source: str
    """The tables' source name (harness.metrics.catalog: `scheduler` for ours, `kueue` for Kueue's)."""
    url: str
    bearer_token: str = ""
    """Empty: plain HTTP without credentials; else HTTPS with this token (self-signed, not verified)."""


class SchedulerHandle(Protocol):
    """A running scheduler."""

    def metrics_url(self) -> str | None:
        """Its Prometheus /metrics URL on 127.0.0.1 (None when it serves none)."""

    def metrics_endpoint(self) -> MetricsEndpoint | None:
        """Its /metrics as the run's collector scrapes it (None when it serves none)."""

    def pid(self) -> int | None:
        """Its process id, sampled by the measurements (None when not a local process)."""

    def alive(self) -> bool:
        """Whether it still runs."""

    def stop(self) -> object:
        """Stop it; safe to call twice."""


class Starter(Protocol):
    def __call__(self, cluster: state.ClusterInfo, scheduler: models.SchedulerSection, log_dir: Path) -> SchedulerHandle:
        """Install what the strategy needs (CRDs, APIService) and start the scheduler; KqbenchError if it can't."""


class Finder(Protocol):
    def __call__(self, cluster: state.ClusterInfo) -> list[int]:
        """Pids of this implementation's schedulers live on the cluster, whoever started them."""


@dataclass(frozen=True, slots=True)
class Implementation:
    name: str
    start: Starter
    strategies: tuple[str, ...]
    """The position strategies it can publish (scheduler.publishing.strategies names)."""
    running: Finder
    """Its schedulers already on a cluster (`kqbench scheduler run` refuses to start a second one)."""


# -- the registry: one line per implementation --------------------------------------------------
# Imported after the types above, which the implementation modules build their IMPLEMENTATION from.
from harness.implementations import kueue, reference  # noqa: E402

_IMPLEMENTATIONS = (
    reference,
    kueue,
)


@cache
def implementations() -> dict[str, Implementation]:
    return {module.IMPLEMENTATION.name: module.IMPLEMENTATION for module in _IMPLEMENTATIONS}


def running_on(cluster: state.ClusterInfo) -> list[tuple[str, int]]:
    """(implementation, pid) of every scheduler live on the cluster."""
    return [(name, pid) for name, implementation in implementations().items() for pid in implementation.running(cluster)]


def get(name: str) -> Implementation:
    try:
        return implementations()[name]
    except KeyError:
        raise KeyError(f"scheduler implementation {name!r} is unknown: use one of "
                       f"{', '.join(implementations())}") from None
