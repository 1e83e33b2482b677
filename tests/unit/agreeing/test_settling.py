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
    """A clock that advances only when the loop sleeps, and threads whose run-queue wait grows with it:
    each share is the part of the wall time one thread spends waiting."""

    def __init__(self, *waiting_shares: float):
        self.now, self.waiting_shares = 0.0, waiting_shares

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def waits(self) -> dict:
        return {(1, tid): self.now * share for tid, share in enumerate(self.waiting_shares)}


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


def test_the_longest_wait_is_one_threads_not_the_sum_of_all():
    before = {(1, 1): 5.0, (1, 2): 1.0}
    after = {(1, 1): 5.3, (1, 2): 1.4, (2, 7): 0.2}  # (2, 7) started since
    assert observing.longest_wait(before, after) == pytest.approx(0.4)
    assert observing.longest_wait({}, {}) == 0.0


def test_many_threads_each_waiting_a_little_still_settle(monkeypatch):
    _states(monkeypatch, ["a", "b", "b"])
    t = FakeTime(*[0.1] * 40)  # a busy machine: every thread of three Go processes waits 10%
    observing.settled(None, lambda: True, quiet=5.0, timeout=60.0, clock=t.clock, sleep=t.sleep, waits=t.waits)
    assert t.now == pytest.approx(7.0)  # 0.9 s of credit a round: six rounds after the change, not 5 / 0.1


def test_an_idle_machine_settles_after_the_quiet_window(monkeypatch):
    _states(monkeypatch, ["a", "b", "b"])
    t = FakeTime()
    state = observing.settled(None, lambda: True, quiet=5.0, timeout=60.0, clock=t.clock, sleep=t.sleep,
                              waits=t.waits)
    assert state.cluster_queues[0]["metadata"]["name"] == "b"
    assert t.now == pytest.approx(6.0)  # the change at 1 s, then 5 s unchanged


def test_a_starved_scheduler_makes_settling_slower_not_early(monkeypatch):
    _states(monkeypatch, ["a", "b", "b"])
    t = FakeTime(0.5, 0.1)  # one thread spends half of every second on a run queue
    observing.settled(None, lambda: True, quiet=5.0, timeout=60.0, clock=t.clock, sleep=t.sleep, waits=t.waits)
    assert t.now == pytest.approx(11.0)


def test_deciders_that_never_get_a_cpu_never_settle(monkeypatch):
    _states(monkeypatch, ["a"])
    t = FakeTime(1.0, 0.2)  # one thread waiting all the time
    with pytest.raises(observing.NotSettled, match="waited 30s for a CPU"):
        observing.settled(None, lambda: True, quiet=5.0, timeout=30.0, clock=t.clock, sleep=t.sleep, waits=t.waits)
    assert t.now == pytest.approx(30.0)


def test_a_change_starts_the_window_again(monkeypatch):
    _states(monkeypatch, ["a", "a", "a", "b", "b"])
    t = FakeTime()
    observing.settled(None, lambda: True, quiet=3.0, timeout=60.0, clock=t.clock, sleep=t.sleep, waits=t.waits)
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
        before = sampling.thread_waits(pids)
        time.sleep(0.6)
        after = sampling.thread_waits(pids)
    finally:
        for process in spinners:
            process.join(timeout=10)
    assert set(after) == {(pid, pid) for pid in pids}  # one thread each, its tid the pid
    assert observing.longest_wait(before, after) > 0.1  # more spinners than CPUs: most of them wait
    assert sampling.thread_waits(pids) == {}  # exited processes have no threads
