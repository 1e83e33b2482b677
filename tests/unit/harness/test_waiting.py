"""Bounded waits and retries: what they return, when they give up, what they say."""

from __future__ import annotations

import asyncio

import pytest

from harness.errors import KqbenchError
from harness.kube import waiting
from tests.unit.harness.faketime import FakeTime


def test_poll_returns_the_first_truthy_answer():
    answers = iter([None, False, 0, "ready", "later"])
    assert waiting.poll(lambda: next(answers), timeout=10, interval=0, failure=lambda: "never") == "ready"


def test_poll_gives_up_with_the_failure_message():
    calls = []
    with pytest.raises(KqbenchError, match="still 3 pending"):
        waiting.poll(lambda: calls.append(1), timeout=0.05, interval=0.01, failure=lambda: f"still {3} pending")
    assert len(calls) >= 1


def test_poll_stops_at_once_on_an_error_of_the_check():
    calls = []

    def check():
        calls.append(1)
        raise KqbenchError("died")

    with pytest.raises(KqbenchError, match="died") as raised:
        waiting.poll(check, timeout=10, interval=0, failure=lambda: "timeout")
    assert len(calls) == 1 and not isinstance(raised.value, waiting.TimedOut)


@pytest.mark.parametrize("statuses, attempts, expected, sent", [
    ([201], 8, 201, 1),
    ([503, 429, 201], 8, 201, 3),
    ([503, 503, 503, 503], 3, 503, 3),   # gives up after `attempts`, returns the last status
    ([400, 201], 8, 400, 1),             # not a "later": no retry
])
def test_retry_status(statuses, attempts, expected, sent):
    answers, calls = iter(statuses), []

    async def send() -> int:
        calls.append(1)
        return next(answers)

    assert asyncio.run(waiting.retry_status(send, attempts)) == expected
    assert len(calls) == sent


def test_retry_status_awaits_what_a_lambda_returns():
    async def post(status: int) -> int:
        return status

    assert asyncio.run(waiting.retry_status(lambda: post(201), 3)) == 201


def test_cancel_ends_every_started_task_and_skips_the_ones_never_started():
    async def scenario():
        forever = asyncio.create_task(asyncio.sleep(3600))
        done = asyncio.create_task(asyncio.sleep(0))
        await done
        await waiting.cancel(forever, None, done)
        return forever, done

    forever, done = asyncio.run(scenario())
    assert forever.cancelled() and done.done() and not done.cancelled()


def test_poll_ends_its_error_with_the_last_reason_the_check_gave():
    reasons = iter(["503 starting", "503 etcd not ready"])

    def check():
        raise waiting.NotYet(next(reasons, "503 etcd not ready"))

    time = FakeTime()
    with pytest.raises(waiting.TimedOut, match=r"^not ready after 2s \(last answer: 503 etcd not ready\)$"):
        waiting.poll(check, timeout=2, interval=0.5, failure=lambda: "not ready after 2s", clock=time.clock,
                     sleep=time.sleep)
    assert time.now == pytest.approx(2.0)


def test_poll_asks_again_after_an_error_it_was_told_to_retry_and_names_it():
    answers = iter([ConnectionRefusedError("refused"), TimeoutError("timed out"), "up"])

    def check():
        answer = next(answers)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    time = FakeTime()
    assert waiting.poll(check, timeout=5, interval=1, failure=lambda: "never", retry_on=(OSError,), clock=time.clock,
                        sleep=time.sleep) == "up"
    assert time.now == pytest.approx(2.0)
    with pytest.raises(KqbenchError, match=r"\(last answer: TimeoutError: timed out\)$"):
        waiting.poll(lambda: (_ for _ in ()).throw(TimeoutError("timed out")), timeout=1, interval=1, failure=lambda: "down",
                     retry_on=(OSError,), clock=time.clock, sleep=time.sleep)


def test_a_falsy_answer_is_not_a_reason():
    time = FakeTime()
    with pytest.raises(KqbenchError, match=r"^still 3 pending$"):
        waiting.poll(lambda: 0, timeout=1, interval=1, failure=lambda: "still 3 pending", clock=time.clock,
                     sleep=time.sleep)


def test_poll_async_returns_when_the_coroutine_holds_and_names_the_last_reason_when_not():
    counts = iter([3, 7, 10])

    async def all_ready():
        ready = next(counts)
        if ready < 10:
            raise waiting.NotYet(f"{ready} of 10 Ready")
        return ready

    assert asyncio.run(waiting.poll_async(all_ready, timeout=10, interval=0, failure=lambda: "never")) == 10

    async def stuck():
        raise waiting.NotYet("7 of 10 Ready")

    with pytest.raises(KqbenchError, match=r"^nodes not Ready \(last answer: 7 of 10 Ready\)$"):
        asyncio.run(waiting.poll_async(stuck, timeout=0.05, interval=0.01, failure=lambda: "nodes not Ready"))
