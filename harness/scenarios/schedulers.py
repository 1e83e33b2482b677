"""A scheduler under test started from keyword fields of a scenario's `scheduler:` section.

The same door as a scenario run's (the section, validated, handed to its implementation's start),
for the callers that have no scenario file: the differential tester (handed this function by its
CLI), the tests and the benchmarks. `start(cluster, implementation="kueue", kueue_version="v0.17.0",
fair_sharing=True)` starts what a scenario with those `scheduler:` fields would.
"""

from __future__ import annotations

from pathlib import Path

from harness.clusters import state
from harness.errors import KqbenchError
from harness.implementations import contract, registry as implementations
from harness.scenarios import models


def section(**fields) -> models.SchedulerSection:
    """The validated section (pydantic's ValidationError names a wrong field)."""
    return models.SchedulerSection(**fields)


def start(cluster: state.ClusterInfo, log_dir: Path | None = None, **fields) -> contract.SchedulerHandle:
    """Start the scheduler these section fields describe (`log_dir` None: the state folder's logs/)."""
    chosen = section(**fields)
    return implementations.get(chosen.implementation).start(cluster, chosen, _log_dir(log_dir))


def restart(cluster: state.ClusterInfo, log_dir: Path | None = None, *, metrics_port: int = 0,
            **fields) -> contract.SchedulerHandle:
    """Its implementation's restart (a scheduler taking over from one that stopped or died)."""
    chosen = section(**fields)
    implementation = implementations.get(chosen.implementation)
    if implementation.restart is None:
        raise KqbenchError(f"implementation {chosen.implementation} has no restart: start it anew")
    return implementation.restart(cluster, chosen, _log_dir(log_dir), metrics_port)


def _log_dir(log_dir: Path | None) -> Path:
    return state.state_root() / "logs" if log_dir is None else Path(log_dir)
