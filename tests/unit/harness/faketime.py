"""A clock that moves only when the code under test sleeps: waits and retries run in no time."""

from __future__ import annotations

import asyncio


class FakeTime:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class AsyncFakeTime:
    """The same for asyncio code: a sleep moves the clock and lets the other tasks run once."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += max(0.0, seconds)
        await asyncio.sleep(0)
