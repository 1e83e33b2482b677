"""Fixtures that start real processes: the Go-built binaries and a kwok cluster, always torn down."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from harness import cli
from harness.clusters import bringup, kwok, processes, spec as specs
from harness.nodes import pools
from harness.progress import LineProgress
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


@pytest.fixture(scope="module")
def cluster_200(binaries, state_dir):
    """A kwok cluster with 200 Ready nodes; stopped after the module, also when a test fails."""
    name = unique_name("it")
    spec = specs.ClusterSpec(name=name)
    info = report = None
    try:
        info, report = bringup.up(spec, [pools.NodePool(count=200)], LineProgress(interval=10.0))
        yield info, report
    finally:
        bringup.down(name)
        assert leftover_processes(name) == [], "cluster processes outlived `down`"
