"""Fixtures that start real processes: the Go-built binaries and a kwok cluster, always torn down."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import cli
from harness.clusters import bringup, kwok, processes, spec as specs, state
from harness.implementations import contract
from harness.nodes import pools
from harness.progress import LineProgress
from harness.scenarios import schedulers
from harness.toolchain import building


def run_cli(*args: str, timeout: float = 300, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run `kqbench ARGS` as a user would, bounded in time."""
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True,
                          timeout=timeout, env=env or dict(os.environ), cwd=cwd)


@pytest.fixture(scope="session", autouse=True)
def sigterm_unwinds():
    """A SIGTERM to the test run (a CI time-out, `kill`) unwinds like Ctrl-C: the fixtures below stop their
    clusters (pytest's default handling of SIGTERM runs no teardown and leaves them running)."""
    cli.unwind_on_sigterm()
    yield


@pytest.fixture(scope="session", autouse=True)
def results_store_apart(tmp_path_factory):
    """Runs the tests make push their raw data to a store of their own, not to the user's (KQBENCH_STORE)."""
    previous = os.environ.get("KQBENCH_STORE")
    os.environ["KQBENCH_STORE"] = str(tmp_path_factory.mktemp("results-store"))
    yield Path(os.environ["KQBENCH_STORE"])
    if previous is None:
        os.environ.pop("KQBENCH_STORE", None)
    else:
        os.environ["KQBENCH_STORE"] = previous


@pytest.fixture(scope="session")
def state_dir(tmp_path_factory) -> Path:
    """Clusters started by the tests live in their own state folder, apart from a user's."""
    folder = tmp_path_factory.mktemp("kqbench-state")
    previous = os.environ.get("KQBENCH_STATE")
    os.environ["KQBENCH_STATE"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("KQBENCH_STATE", None)
    else:
        os.environ["KQBENCH_STATE"] = previous


@pytest.fixture(scope="session")
def binaries():
    """Build (first run only) and return the pinned binaries."""
    return building.ensure_binaries(None, LineProgress(interval=10.0))


def unique_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def leftover_processes(name: str) -> list:
    return processes.find_by_path(str(kwok.cluster_dir(name)) + "/")


@contextlib.contextmanager
def kwok_cluster(prefix: str, nodes: int = 1, **spec_fields) -> Iterator[state.ClusterInfo]:
    """A fresh kwok cluster with `nodes` Ready nodes (ClusterSpec fields as given), torn down on leaving,
    also when a test fails, and no process of it left running: the one way a test brings a cluster up."""
    with kwok_cluster_with_report(prefix, [pools.NodePool(count=nodes)], **spec_fields) as (info, _):
        yield info


@contextlib.contextmanager
def kwok_cluster_with_report(prefix: str, node_pools: list[pools.NodePool],
                             **spec_fields) -> Iterator[tuple[state.ClusterInfo, object]]:
    """kwok_cluster with its node pools and the bring-up's report (what the bring-up tests read)."""
    name = unique_name(prefix)
    try:
        yield bringup.up(specs.ClusterSpec(name=name, **spec_fields), node_pools, LineProgress(interval=10.0))
    finally:
        bringup.down(name)
        assert leftover_processes(name) == [], "cluster processes outlived `down`"


@contextlib.contextmanager
def running_scheduler(info: state.ClusterInfo, log_dir: Path | None = None,
                      **fields) -> Iterator[contract.SchedulerHandle]:
    """The scheduler a scenario's `scheduler:` fields describe (harness.scenarios.schedulers), stopped on
    leaving, also when a test fails."""
    handle = schedulers.start(info, log_dir, **fields)
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture(scope="module")
def cluster_200(binaries, state_dir):
    """A kwok cluster with 200 Ready nodes; stopped after the module, also when a test fails."""
    with kwok_cluster_with_report("it", [pools.NodePool(count=200)]) as (info, report):
        yield info, report
