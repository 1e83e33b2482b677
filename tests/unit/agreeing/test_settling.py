"""When a batch's decisions count as settled: no change for a while, and no credit for a while in
which the deciding processes were waiting for a CPU."""

from __future__ import annotations

import multiprocessing
import os
import time

import pytest

from harness.agreeing import observing
from harness.metrics import sampling


class FakeTime:
    """A clock that advances only when the loop sleeps, and a run-queue wait that grows with it."""

    def __init__(self, waiting_share: float = 0.0):
        self.now, self.waiting_share = 0.0, waiting_share

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def waited(self) -> float:
        return self.now * self.waiting_share


def _states(monkeypatch, signatures):
    """observing.look returns states whose signature is the next of ``signatures`` (the last repeats)."""
    rounds = iter(signatures)
    last = [None]

    def look(_creds):
        last[0] = next(rounds, last[0])
        return observing.State([], [{"metadata": {"name": last[0]}}])

    monkeypatch.setattr(observing, "look", look)


def test_credit_is_the_round_less_its_wait_and_never_negative():
    assert observing.quiet_credit(1.0, 0.0) == 1.0
    assert observing.quiet_credit(1.0, 0.25) == 0.75
    assert observing.quiet_credit(1.0, 3.0) == 0.0
    assert observing.quiet_credit(1.0, -1.0) == 1.0


def test_an_idle_machine_settles_after_the_quiet_window(monkeypatch):
    _states(monkeypatch, ["a", "b", "b"])
    t = FakeTime()
    state = observing.settled(None, lambda: True, quiet=5.0, timeout=60.0, clock=t.clock, sleep=t.sleep,
                              waited=t.waited)
    assert state.cluster_queues[0]["metadata"]["name"] == "b"
    assert t.now == pytest.approx(6.0)  # the change at 1 s, then 5 s unchanged


def test_a_starved_scheduler_makes_settling_slower_not_early(monkeypatch):
    _states(monkeypatch, ["a", "b", "b"])
    t = FakeTime(waiting_share=0.5)  # half of every second spent on a run queue
    observing.settled(None, lambda: True, quiet=5.0, timeout=60.0, clock=t.clock, sleep=t.sleep, waited=t.waited)
    assert t.now == pytest.approx(11.0)


def test_deciders_that_never_get_a_cpu_never_settle(monkeypatch):
    _states(monkeypatch, ["a"])
    t = FakeTime(waiting_share=2.0)  # two threads waiting all the time
    with pytest.raises(observing.NotSettled, match="waiting"):
        observing.settled(None, lambda: True, quiet=5.0, timeout=30.0, clock=t.clock, sleep=t.sleep, waited=t.waited)
    assert t.now == pytest.approx(30.0)


def test_a_change_starts_the_window_again(monkeypatch):
    _states(monkeypatch, ["a", "a", "a", "b", "b"])
    t = FakeTime()
    observing.settled(None, lambda: True, quiet=3.0, timeout=60.0, clock=t.clock, sleep=t.sleep, waited=t.waited)
    assert t.now == pytest.approx(6.0)


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_run_queue_wait_grows_for_processes_that_outnumber_the_cpus():
    spinners = [multiprocessing.get_context("fork").Process(target=_spin, args=(1.0,))
                for _ in range(2 * (os.cpu_count() or 1) + 1)]
    for process in spinners:
        process.start()
    try:
        pids = [process.pid for process in spinners]
        before = sampling.waited_seconds(pids)
        time.sleep(0.6)
        grown = sampling.waited_seconds(pids) - before
    finally:
        for process in spinners:
            process.join(timeout=10)
    assert grown > 0.2  # more spinners than CPUs: most of them wait at any moment
    assert sampling.waited_seconds(pids) == 0.0  # exited processes count nothing
