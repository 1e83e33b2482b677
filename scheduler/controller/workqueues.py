"""A keyed work queue in client-go's manner, for asyncio: a key waits at most once, is never
handled by two workers at once, and a key added while it is being handled comes back after."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Hashable


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
