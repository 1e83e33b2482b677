"""Readers of the visibility API through kube-apiserver, with or without churn on the queue (the I/O edge).

Readers run back to back for a fixed time; churn, when asked, creates a new pending Workload and deletes
the oldest one it created at a steady rate in the same event loop, so the queue's membership changes many
times a second and no cached page outlives a few milliseconds. Every loop ends at the arm's deadline.
"""

from __future__ import annotations

import asyncio
import itertools
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import aiohttp
import orjson

from harness.drivers.heldqueue import figures as figs

FAILED_PAUSE_SECONDS = 0.05
"""A reader whose request failed waits this long before the next: a refusing server is not hammered."""


@dataclass(slots=True)
class Churn:
    """Creates and deletes in one queue at `per_second` pairs; counts what it managed."""

    workload: Callable[[str], dict]
    """name -> the Workload to create."""
    collection: str
    """The Workloads' collection path (POST); `{collection}/{name}` deletes."""
    per_second: float
    in_flight: int = 16
    created: int = 0
    deleted: int = 0
    failed: int = 0
    names: list[str] = field(default_factory=list)

    async def run(self, session: aiohttp.ClientSession, server: str, deadline: float) -> None:
        """One create per tick, each followed by the delete of the previous one; ticks do not wait for the
        answers (up to `in_flight` at once), so the rate holds while the apiserver is slow."""
        interval, slots, tasks = 1.0 / self.per_second, asyncio.Semaphore(self.in_flight), []
        next_at = time.monotonic()
        for k in itertools.count():
            if time.monotonic() >= deadline:
                break
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            next_at = max(next_at + interval, time.monotonic())
            await slots.acquire()
            tasks.append(asyncio.ensure_future(self._change(session, server, f"churn-{k:07d}", slots)))
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _change(self, session: aiohttp.ClientSession, server: str, name: str, slots: asyncio.Semaphore) -> None:
        try:
            async with session.post(server + self.collection, data=orjson.dumps(self.workload(name)),
                                    headers={"Content-Type": "application/json"}) as response:
                await response.read()
                if response.status != 201:
                    self.failed += 1
                    return
                self.created += 1
                self.names.append(name)
            if len(self.names) > 1:  # keep one in the queue: membership changes, its size does not
                old = self.names.pop(0)
                async with session.delete(f"{server}{self.collection}/{old}") as response:
                    await response.read()
                    self.deleted += response.status in (200, 202)
                    self.failed += response.status not in (200, 202)
        except (aiohttp.ClientError, asyncio.TimeoutError):
            self.failed += 1
        finally:
            slots.release()

    def counts(self, seconds: float) -> figs.ChurnCounts:
        return figs.ChurnCounts(self.per_second, self.created, self.deleted, self.failed, seconds)


async def _read_pages(server: str, context: ssl.SSLContext | None, headers: dict[str, str], readers: int,
                      seconds: float, path: str, churn: Churn | None) -> tuple[list[float], int]:
    latencies: list[float] = []
    failures = 0
    deadline = time.monotonic() + seconds
    connector = aiohttp.TCPConnector(ssl=context, limit=readers + 4)
    timeout = aiohttp.ClientTimeout(total=max(60.0, seconds))
    async with aiohttp.ClientSession(connector=connector, headers=headers, timeout=timeout) as session:
        async def reader() -> None:
            nonlocal failures
            while time.monotonic() < deadline:
                started = time.perf_counter()
                try:
                    async with session.get(server + path) as response:
                        await response.read()
                        ok = response.status == 200
                except (aiohttp.ClientError, asyncio.TimeoutError):
                    ok = False
                if ok:
                    latencies.append(time.perf_counter() - started)
                else:
                    failures += 1
                    await asyncio.sleep(FAILED_PAUSE_SECONDS)

        tasks = [reader() for _ in range(readers)]
        if churn is not None:
            tasks.append(churn.run(session, server, deadline))
        await asyncio.gather(*tasks)
    return latencies, failures


def read_pages(server: str, context: ssl.SSLContext | None, headers: dict[str, str], readers: int, seconds: float,
               path: str, churn: Churn | None = None) -> tuple[list[float], int]:
    """`readers` concurrent readers of `path`, back to back, for `seconds` (with `churn` beside them when
    given); returns (latencies in seconds of the 200s, failed requests). A failed request counts, and its
    reader goes on. Requests started before the deadline run on past it."""
    return asyncio.run(_read_pages(server, context, headers, readers, seconds, path, churn))
