"""`kqbench scheduler run` on a real cluster, as a user runs it: a second one on the same cluster is
refused naming the first one's pid, and `kill -9` of the command takes its scheduler with it (the
reference scheduler and Kueue's manager alike), within a bounded wait."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from harness.clusters import processes
from harness.implementations import registry as implementations
from harness.progress import LineProgress
from harness.toolchain import building

from .conftest import kwok_cluster, run_cli

pytestmark = pytest.mark.integration

STARTED_TIMEOUT = {"reference": 120.0, "kueue": 420.0}
"""Until `scheduler run` says the scheduler is ready: Kueue's own readiness wait is 300 s on a busy machine."""
GONE_TIMEOUT = 45.0
"""From the SIGKILL to the scheduler gone: our scheduler notices within 0.5 s and stops cleanly within its
15 s grace (scheduler.parentwatching); Kueue's manager gets SIGKILL from the kernel at once."""
STARTED = re.compile(r"scheduler (\S+) \(.*pid (\d+),")


@pytest.fixture(scope="module", params=["reference", "kueue"])
def cluster(request, binaries, state_dir):
    """One small cluster per implementation (Kueue replaces the reference scheduler's CRDs with its own)."""
    if request.param == "kueue":
        building.ensure_kueue(LineProgress(interval=10.0))
    with kwok_cluster(f"life-{request.param[:3]}") as info:
        yield request.param, info


def _wait_for_start(command: subprocess.Popen, log: Path, timeout: float) -> int:
    """The scheduler's pid once `scheduler run` says it runs; fails with the command's output."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = STARTED.search(log.read_text(errors="replace"))
        if found:
            return int(found.group(2))
        assert command.poll() is None, f"`scheduler run` exited {command.returncode}: {log.read_text()[-2000:]}"
        time.sleep(0.5)
    raise AssertionError(f"`scheduler run` did not start within {timeout:.0f}s: {log.read_text()[-2000:]}")


def _wait_gone(pid: int, timeout: float) -> float | None:
    """Seconds until the process was gone (a zombie counts as gone), or None."""
    began = time.monotonic()
    while time.monotonic() - began < timeout:
        if processes.describe(pid) is None:
            return time.monotonic() - began
        time.sleep(0.1)
    return None


def test_a_second_start_is_refused_and_kill_9_takes_the_scheduler_along(cluster, tmp_path):
    implementation, info = cluster
    output = tmp_path / "scheduler-run.err"
    scheduler_pid = None
    with output.open("w") as err:
        command = subprocess.Popen(
            [sys.executable, "-m", "harness", "scheduler", "run", "--name", info.name,
             "--implementation", implementation, "--log-dir", str(tmp_path / "logs")],
            stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL, env=dict(os.environ),
            start_new_session=True)
    try:
        scheduler_pid = _wait_for_start(command, output, STARTED_TIMEOUT[implementation])
        assert scheduler_pid in {p.pid for p in psutil.Process(command.pid).children()}
        assert implementations.running_on(info) == [(implementation, scheduler_pid)]

        second = run_cli("scheduler", "run", "--name", info.name, timeout=120)
        assert second.returncode == 2
        assert second.stderr.strip() == (f"error: cluster {info.name} already has a scheduler running "
                                         f"({implementation} pid {scheduler_pid}): stop it first"), second.stderr
        assert implementations.running_on(info) == [(implementation, scheduler_pid)]

        command.send_signal(signal.SIGKILL)
        command.wait(timeout=30)
        took = _wait_gone(scheduler_pid, GONE_TIMEOUT)
        assert took is not None, f"{implementation} pid {scheduler_pid} outlived its starter by {GONE_TIMEOUT:.0f}s"
        print(f"{implementation}: gone {took:.1f}s after `kill -9` of `scheduler run`")
        assert implementations.running_on(info) == []
    finally:
        if command.poll() is None:
            os.killpg(command.pid, signal.SIGKILL)
            command.wait(timeout=30)
        for pid in [scheduler_pid, *(pid for _, pid in implementations.running_on(info))]:
            try:
                if pid:
                    psutil.Process(pid).kill()
            except psutil.NoSuchProcess:
                pass
