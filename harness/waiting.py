"""Bounded waiting and retrying, on tenacity: poll until something holds or a deadline passes, and
retry a request with exponential backoff while the server says "later" (429, 5xx).

Every wait here has a deadline or an attempt limit; a wait that runs out is a one-line KqbenchError.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection
from typing import TypeVar

import tenacity

from harness.errors import KqbenchError

T = TypeVar("T")

RETRIED_STATUSES = (429, 500, 503, 504)
"""HTTP statuses that mean "try again later" for our own set-up traffic."""
BACKOFF = tenacity.wait_exponential(multiplier=0.05, max=2.0)
"""0.05 s, 0.1 s, 0.2 s ... at most 2 s between attempts."""


def poll(check: Callable[[], T], timeout: float, interval: float, failure: Callable[[], str]) -> T:
    """Call check() every `interval` seconds until it returns something truthy (returned), for at most
    `timeout` seconds; then KqbenchError(failure()). An exception from check() ends the wait at once."""
    retrying = tenacity.Retrying(stop=tenacity.stop_after_delay(timeout), wait=tenacity.wait_fixed(interval),
                                 retry=tenacity.retry_if_result(lambda result: not result))
    try:
        return retrying(check)
    except tenacity.RetryError:
        raise KqbenchError(failure()) from None


async def retry_status(send: Callable[[], Awaitable[int]], attempts: int,
                       retried: Collection[int] = RETRIED_STATUSES) -> int:
    """await send() (which returns an HTTP status) again with backoff while the status is in `retried`,
    at most `attempts` times; returns the last status (the caller decides what a failure means)."""
    retrying = tenacity.AsyncRetrying(stop=tenacity.stop_after_attempt(attempts), wait=BACKOFF,
                                      retry=tenacity.retry_if_result(lambda status: status in retried),
                                      retry_error_callback=lambda state: state.outcome.result())

    async def attempt() -> int:  # a coroutine function, so that tenacity awaits it (send may be a lambda)
        return await send()

    return await retrying(attempt)


async def cancel(*tasks: asyncio.Task | None) -> None:
    """Cancel every task that was started (None: never started) and wait until each has ended, so that
    nothing outlives a generator's run; their exceptions are the cancellation itself and are dropped."""
    started = [task for task in tasks if task is not None]
    for task in started:
        task.cancel()
    await asyncio.gather(*started, return_exceptions=True)
