"""Kueue's readiness steps: in order, one deadline, slow answers tolerated, an exit fails at once."""

from __future__ import annotations

import urllib.error

import pytest

from harness.errors import KqbenchError
from harness.implementations.kueue import readiness
from tests.unit.harness.faketime import FakeTime


def answers(*values):
    """A probe that gives these answers in turn (an exception instance is raised), then the last forever."""
    queue = list(values)

    def probe():
        value = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(value, BaseException):
            raise value
        return value
    return probe


def test_steps_are_waited_for_in_order_and_transient_errors_are_asked_again():
    seen = []
    steps = [readiness.Step("readyz", answers(urllib.error.URLError("refused"), "503 not ready", None)),
             readiness.Step("available", answers(TimeoutError("timed out"), KqbenchError("GET answered 503"), None)),
             readiness.Step("proxied", lambda: seen.append("proxied"))]
    time = FakeTime()
    readiness.wait(steps, lambda: None, timeout=60, clock=time.clock, sleep=time.sleep)
    assert seen == ["proxied"]
    assert time.now == pytest.approx(4 * readiness.POLL_SECONDS)


def test_the_deadline_is_shared_and_the_error_names_the_step_and_its_last_answer():
    steps = [readiness.Step("readyz answers", answers("503", None)),
             readiness.Step("the APIServices are Available", answers("v1beta2: FailedDiscoveryCheck"))]
    time = FakeTime()
    with pytest.raises(KqbenchError, match=r"within 10s: still waiting until the APIServices are Available "
                                           r"\(last answer: v1beta2: FailedDiscoveryCheck\)"):
        readiness.wait(steps, lambda: None, timeout=10, clock=time.clock, sleep=time.sleep)
    assert time.now == pytest.approx(10.0)


def test_a_manager_that_exits_fails_the_wait_at_once():
    codes = iter([None, None, 1])
    time = FakeTime()
    with pytest.raises(KqbenchError, match="exited with code 1 while waiting until readyz answers"):
        readiness.wait([readiness.Step("readyz answers", answers("connection refused"))], lambda: next(codes),
                       timeout=300, clock=time.clock, sleep=time.sleep)
    assert time.now == pytest.approx(2 * readiness.POLL_SECONDS)


def test_a_programming_error_in_a_probe_is_not_taken_for_a_slow_answer():
    time = FakeTime()
    with pytest.raises(KeyError):
        readiness.wait([readiness.Step("x", answers(KeyError("type")))], lambda: None, timeout=300,
                       clock=time.clock, sleep=time.sleep)
