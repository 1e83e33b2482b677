"""Bounded waiting and retrying, on tenacity: poll until something holds or a deadline passes, and
retry a request with exponential backoff while the server says "later" (429, 5xx).

Every wait here has a deadline or an attempt limit; a wait that runs out is a one-line KqbenchError.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Collection
from typing import TypeVar

import tenacity

from harness.errors import KqbenchError

T = TypeVar("T")

RETRIED_STATUSES = (429, 500, 503, 504)
"""HTTP statuses that mean "try again later" for our own set-up traffic."""
BACKOFF = tenacity.wait_exponential(multiplier=0.05, max=2.0)
"""0.05 s, 0.1 s, 0.2 s ... at most 2 s between attempts."""


class NotYet(Exception):
    """Raised by a poll's check: the condition does not hold yet, and this is why (the error quotes it)."""


class TimedOut(KqbenchError):
    """A poll whose check never held within its timeout (not an error the check raised)."""


def poll(check: Callable[[], T], timeout: float, interval: float, failure: Callable[[], str], *,
         retry_on: tuple[type[BaseException], ...] = (), clock: Callable[[], float] = time.monotonic,
         sleep: Callable[[float], None] = time.sleep) -> T:
    """Call check() every `interval` seconds until it returns something truthy (returned), for at most
    `timeout` seconds; then TimedOut (a KqbenchError): failure() followed by the last answer, when the check gave one.

    A check says "not yet" by returning something falsy or by raising NotYet(reason) or an exception of a
    `retry_on` type (a refused connection, a timeout); the last such reason ends the error as
    `(last answer: ...)`. Any other exception from check() ends the wait at once.
    """
    started = clock()
    retrying = tenacity.Retrying(stop=lambda state: clock() - started >= timeout, wait=tenacity.wait_fixed(interval),
                                 sleep=sleep, retry=_not_yet(retry_on))
    try:
        return retrying(check)
    except tenacity.RetryError as error:
        raise _gave_up(error, failure) from None


async def poll_async(check: Callable[[], Awaitable[T]], timeout: float, interval: float, failure: Callable[[], str], *,
                     retry_on: tuple[type[BaseException], ...] = ()) -> T:
    """poll() for a coroutine check, sleeping with asyncio between attempts."""
    retrying = tenacity.AsyncRetrying(stop=tenacity.stop_after_delay(timeout), wait=tenacity.wait_fixed(interval),
                                      retry=_not_yet(retry_on))
    try:
        return await retrying(check)
    except tenacity.RetryError as error:
        raise _gave_up(error, failure) from None


def _not_yet(retry_on: tuple[type[BaseException], ...]) -> tenacity.retry_base:
    return tenacity.retry_if_result(lambda result: not result) | tenacity.retry_if_exception_type((NotYet, *retry_on))


def _gave_up(error: tenacity.RetryError, failure: Callable[[], str]) -> TimedOut:
    last = _answer(error.last_attempt)
    return TimedOut(failure() + (f" (last answer: {last})" if last else ""))


def _answer(attempt: tenacity.Future) -> str:
    """What a failed attempt said: NotYet's reason, another exception's type and message, else nothing."""
    error = attempt.exception()
    if isinstance(error, NotYet):
        return str(error)
    return f"{type(error).__name__}: {error}" if error is not None else ""


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
