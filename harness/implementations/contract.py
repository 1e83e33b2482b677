"""The types an implementation under test provides: the only module of harness.implementations an
implementation imports (`registry`, the list, imports the implementations).

An implementation starts its scheduler from the scenario's scheduler section (installing the Kueue
API it needs; the fields only it reads are its own model, which the section is assembled from), one way
for the runner, `kqbench scheduler run`, the differential tester and the tests alike
(harness.scenarios.schedulers makes the section from keyword fields), says which position
strategies it can publish, and finds its schedulers already running on a cluster.
A running scheduler is a SchedulerHandle: its pid (sampled by the measurements), its /metrics
endpoint (scraped into the run's tables under the implementation's own source name), the client-side
write limits it runs with (recorded per case: API rates across Kueue versions differ by them), alive() and stop().
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel

from harness.toolchain import components as toolchain

if TYPE_CHECKING:
    from harness.clusters import state
    from harness.scenarios import sections


@dataclass(frozen=True, slots=True)
class MetricsEndpoint:
    """Where a scheduler's Prometheus /metrics is on 127.0.0.1, and how to read it."""

    source: str
    """The tables' source name (harness.metrics.catalog: `scheduler` for ours, `kueue` for Kueue's)."""
    url: str
    bearer_token: str = ""
    """Empty: plain HTTP without credentials; else HTTPS with this token (self-signed, not verified)."""


@dataclass(frozen=True, slots=True)
class ClientLimits:
    """The client-side rate limit a scheduler sends its API requests under (client-go's QPS and burst)."""

    qps: float | None
    """None: no limit (client-go's QPS -1, which also makes burst moot)."""
    burst: int

    def as_record(self) -> dict:
        return {"qps": self.qps, "burst": None if self.qps is None else self.burst}


class SchedulerHandle(Protocol):
    """A running scheduler."""

    client_limits: ClientLimits
    """What it was started with: the scenario's limits, else what the implementation ships."""

    def metrics_url(self) -> str | None:
        """Its Prometheus /metrics URL on 127.0.0.1 (None when it serves none)."""

    def metrics_endpoint(self) -> MetricsEndpoint | None:
        """Its /metrics as the run's collector scrapes it (None when it serves none)."""

    def pid(self) -> int | None:
        """Its process id, sampled by the measurements (None when not a local process)."""

    def alive(self) -> bool:
        """Whether it still runs."""

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of its log (what a failure quotes); empty when it writes none here."""

    def stop(self) -> object:
        """Stop it; safe to call twice."""


class Starter(Protocol):
    def __call__(self, cluster: state.ClusterInfo, scheduler: sections.SchedulerFields, log_dir: Path) -> SchedulerHandle:
        """Install what the strategy needs (CRDs, APIService) and start the scheduler; KqbenchError if it can't."""


class Restarter(Protocol):
    def __call__(self, cluster: state.ClusterInfo, scheduler: sections.SchedulerFields, log_dir: Path,
                 metrics_port: int) -> SchedulerHandle:
        """Start a new scheduler of the section (the previous one stopped) whose /metrics is on this port, where
        the run's collector scrapes (0: a free one); ready to serve as start() leaves it."""


class Needs(Protocol):
    def __call__(self, scheduler: sections.SchedulerFields) -> tuple[toolchain.Component, ...]:
        """The built components it starts for this scheduler section, beyond the cluster's own."""


def needs_nothing(scheduler: sections.SchedulerFields) -> tuple[toolchain.Component, ...]:
    """An implementation that runs from this checkout alone (the reference scheduler is Python)."""
    return ()


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
    scheduler_fields: type[BaseModel] | None = None
    """The scenario's scheduler fields only it reads (a model on harness.scenarios.base): the section is
    assembled from every implementation's and the fields they share."""
    needs: Needs = needs_nothing
    restart: Restarter | None = None
    """Its start on a given /metrics port (a capacity search's fresh scheduler per step); None: it has none."""
    """What it starts that the toolchain builds (a scenario needs its cluster's control plane and this)."""
