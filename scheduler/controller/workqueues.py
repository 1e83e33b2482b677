"""A keyed work queue in client-go's manner, for asyncio: a key waits at most once, is never
handled by two workers at once, and a key added while it is being handled comes back after."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Hashable

log = logging.getLogger(__name__)


class WorkQueue:
    def __init__(self) -> None:
        self._order: deque[Hashable] = deque()
        self._waiting: set[Hashable] = set()
        self._processing: set[Hashable] = set()
        self._dirty: set[Hashable] = set()
        self._ready = asyncio.Event()
        self._timers: set[asyncio.TimerHandle] = set()

    def __len__(self) -> int:
        return len(self._waiting)

    def add(self, key: Hashable) -> None:
        if key in self._processing:
            self._dirty.add(key)
        elif key not in self._waiting:
            self._waiting.add(key)
            self._order.append(key)
            self._ready.set()

    def add_after(self, key: Hashable, seconds: float) -> None:
        """Add ``key`` once ``seconds`` have passed (a retry after a failed write)."""
        loop = asyncio.get_running_loop()

        def fire() -> None:
            self._timers.discard(handle)
            self.add(key)
        handle = loop.call_later(seconds, fire)
        self._timers.add(handle)

    async def get(self) -> Hashable:
        """The next key; the caller must call ``done(key)`` when finished with it."""
        while not self._order:
            self._ready.clear()
            await self._ready.wait()
        key = self._order.popleft()
        self._waiting.discard(key)
        self._processing.add(key)
        return key

    def done(self, key: Hashable) -> None:
        self._processing.discard(key)
        if key in self._dirty:
            self._dirty.discard(key)
            self.add(key)

    def close(self) -> None:
        """Cancel pending retries."""
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()


def backoff(failures: int, first: float, most: float) -> float:
    """The wait before the next try after ``failures`` failures in a row: doubling from ``first``, at most ``most``."""
    return min(first * 2 ** (failures - 1), most)


async def _work(queue: WorkQueue, handle: Callable[[Hashable], Awaitable[None]], what: str) -> None:
    while True:
        key = await queue.get()
        try:
            await handle(key)
        except Exception:  # one key's surprise must not stop the others
            log.exception("%s %s: failed", what, key)
        finally:
            queue.done(key)


async def run_workers(stop: asyncio.Event, queue: WorkQueue, handle: Callable[[Hashable], Awaitable[None]],
                      workers: int, what: str, *beside: Coroutine) -> None:
    """``workers`` workers take keys off ``queue`` one at a time (``what`` names a key in logs), beside the
    given coroutines (informers, resyncs), until stop is set; then pending retries and every task end."""
    tasks = [asyncio.create_task(c) for c in beside]
    tasks += [asyncio.create_task(_work(queue, handle, what)) for _ in range(workers)]
    try:
        await stop.wait()
    finally:
        queue.close()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
