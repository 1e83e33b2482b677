"""Bounded waits and retries: what they return, when they give up, what they say."""

from __future__ import annotations

import asyncio

import pytest

from harness import waiting
from harness.errors import KqbenchError


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

    with pytest.raises(KqbenchError, match="died"):
        waiting.poll(check, timeout=10, interval=0, failure=lambda: "timeout")
    assert len(calls) == 1


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
