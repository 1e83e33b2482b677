"""A scheduler dies with the process that started it, however that one dies (SIGKILL included), and a
second scheduler on a cluster is recognised by its command line.

The real mechanisms run on tiny real processes (a starter that is SIGKILLed, its child); the
cluster-level test is tests/integration/test_scheduler_lifetime.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest

from harness.clusters import processes
from harness.implementations.kueue import starting
from harness.implementations.reference import process as schedulerproc
from scheduler import parentwatching, settings as scheduler_settings

GONE_WITHIN_SECONDS = 10.0


def _gone(pid: int) -> bool:
    return processes.describe(pid) is None  # a zombie nobody reaped yet counts as gone


def _wait_gone(pid: int, timeout: float = GONE_WITHIN_SECONDS) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _gone(pid):
            return True
        time.sleep(0.1)
    return _gone(pid)


def _kill_quietly(pid: int | None) -> None:
    try:
        if pid:
            psutil.Process(pid).kill()
    except psutil.NoSuchProcess:
        pass


def _orphan_after_sigkill(starter_code: str, timeout: float = GONE_WITHIN_SECONDS) -> tuple[bool, float]:
    """Run a starter (Python code that starts one child and prints its pid), SIGKILL the starter, and
    say whether the child was gone within the bound, and after how long."""
    starter = subprocess.Popen([sys.executable, "-c", textwrap.dedent(starter_code)], stdout=subprocess.PIPE,
                               text=True, cwd=Path(__file__).resolve().parents[3])
    child = None
    try:
        line = starter.stdout.readline().strip()
        assert line.isdigit(), f"the starter printed {line!r}"
        child = int(line)
        assert not _gone(child)
        starter.kill()
        starter.wait(timeout=10)
        killed = time.monotonic()
        return _wait_gone(child, timeout), time.monotonic() - killed
    finally:
        processes.terminate(starter, 5.0)
        _kill_quietly(child)


def test_a_child_started_dying_with_us_is_killed_when_its_starter_is_sigkilled():
    gone, _ = _orphan_after_sigkill("""
        import subprocess, sys, time
        from harness.clusters import processes
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                 preexec_fn=processes.dying_with_this_process(), start_new_session=True)
        print(child.pid, flush=True)
        time.sleep(60)
    """)
    assert gone


def test_without_it_the_child_outlives_its_starter():
    """The control: the same starter without the parent-death signal leaves its child running (the defect)."""
    gone, _ = _orphan_after_sigkill("""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
        print(child.pid, flush=True)
        time.sleep(60)
    """, timeout=2.0)
    assert not gone


def test_dying_with_us_is_not_offered_off_the_main_thread():
    """PR_SET_PDEATHSIG follows the forking thread: a worker thread's child would die with the thread."""
    found = []
    thread = threading.Thread(target=lambda: found.append(processes.dying_with_this_process()))
    thread.start()
    thread.join(timeout=10)
    assert found == [None]
    assert processes.dying_with_this_process() is not None or not sys.platform.startswith("linux")


def test_a_watching_scheduler_process_stops_when_its_starter_is_sigkilled():
    gone, _ = _orphan_after_sigkill("""
        import os, subprocess, sys, time
        code = ("import time; from scheduler import parentwatching; "
                f"parentwatching.watch({os.getpid()}); time.sleep(60)")
        child = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
        print(child.pid, flush=True)
        time.sleep(60)
    """)
    assert gone


def test_a_watcher_whose_starter_died_before_it_looked_stops_at_once():
    """The race: the starter is gone before the watch starts; the first look sees another parent."""
    not_our_parent = os.getppid()  # pytest's parent: alive, and not the child's parent
    child = subprocess.Popen([sys.executable, "-c", "import time; from scheduler import parentwatching; "
                              f"parentwatching.watch({not_our_parent}); time.sleep(60)"],
                             cwd=Path(__file__).resolve().parents[3])
    try:
        assert child.wait(timeout=GONE_WITHIN_SECONDS) == -signal.SIGTERM
    finally:
        processes.terminate(child, 5.0)


class _Script:
    """getppid answers from a list; sleeps, stops and exits are recorded, never slept."""

    def __init__(self, parents: list[int]) -> None:
        self.parents, self.calls = list(parents), []

    def getppid(self) -> int:
        return self.parents.pop(0) if len(self.parents) > 1 else self.parents[0]


@pytest.mark.parametrize("parents, polls", [
    ([7, 7, 7, 1], 3),  # re-parented to init after three polls
    ([1], 0),           # gone before the first look
    ([7, 42], 1),       # re-parented to a subreaper
])
def test_follow_stops_then_exits_once_the_starter_is_gone(parents, polls):
    script = _Script(parents)
    parentwatching.follow(7, stop=lambda: script.calls.append("stop"), exit_now=lambda: script.calls.append("exit"),
                          sleep=lambda s: script.calls.append(s), getppid=script.getppid, poll_seconds=0.5,
                          grace_seconds=15.0)
    assert script.calls == [0.5] * polls + ["stop", 15.0, "exit"]


def test_no_starter_pid_means_no_watch():
    assert not parentwatching.orphaned(0, getppid=lambda: 1)
    assert parentwatching.watch(0) is None


def test_the_harness_passes_its_pid_to_the_scheduler_it_starts():
    settings = scheduler_settings.SchedulerSettings(kubeconfig="/k/kubeconfig.yaml", parent_pid=4242)
    argv = schedulerproc.command_of(settings)
    assert argv[1:4] == ["-m", "scheduler", scheduler_settings.RECORD_FLAG]
    assert scheduler_settings.from_record(argv[4]).parent_pid == 4242


KUBECONFIG = "/state/kwok/clusters/c1/kubeconfig.yaml"


@pytest.mark.parametrize("argv, reference, kueue", [
    (schedulerproc.command_of(scheduler_settings.SchedulerSettings(kubeconfig=KUBECONFIG)), True, False),
    (["/venv/bin/python", "-m", "scheduler", "--settings", "{not a record"], False, False),
    (schedulerproc.command_of(scheduler_settings.SchedulerSettings(kubeconfig=KUBECONFIG + ".other")), False, False),
    (starting.command_of(Path("/cache/kueue/v0.17.0/kueue"), Path("/c/config.yaml"), KUBECONFIG), False, True),
    (starting.command_of(Path("/cache/kueue/v0.17.0/kueue"), Path("/c/config.yaml"), "/other/kubeconfig"), False, False),
    # the cluster's own components name the same kubeconfig: not schedulers
    (["/state/kwok/clusters/c1/bin/kube-controller-manager", f"--kubeconfig={KUBECONFIG}"], False, False),
    (["/state/kwok/clusters/c1/bin/kwok-controller", f"--kubeconfig={KUBECONFIG}"], False, False),
    (["/usr/bin/vi", KUBECONFIG], False, False),
    ([], False, False),
], ids=["reference", "reference-bad-record", "reference-elsewhere", "kueue", "kueue-elsewhere", "controller-manager",
        "kwok", "an-editor", "no-cmdline"])
def test_schedulers_on_a_cluster_are_told_by_their_command_line(argv, reference, kueue):
    assert schedulerproc.is_scheduler_on(argv, KUBECONFIG) is reference
    assert starting.is_manager_on(argv, KUBECONFIG) is kueue


def test_a_scheduler_of_another_version_is_still_found_by_its_kubeconfig():
    argv = ["/venv/bin/python", "-m", "scheduler", "--settings",
            json.dumps({"kubeconfig": KUBECONFIG, "a_setting_from_a_newer_version": 1})]
    assert schedulerproc.is_scheduler_on(argv, KUBECONFIG)
