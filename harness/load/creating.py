"""Creating objects on a fixed schedule while informers watch what the cluster makes of them (the I/O edge).

The engine of both fixed-schedule drivers (kueue-baseline: bare Workloads; jobs: batch Jobs), one
asyncio loop in the harness process:
- each creation of the schedule (harness.load.arrivals) is POSTed at its due time, at most
  `in_flight` writes at once; its lag behind the schedule is recorded, so a run that could not keep
  the arrival pattern says so;
- the driver's informers fold what they see into its records; creating starts once they have listed;
- the run ends when the driver says every object is done, or at `max_seconds`.
What is created, what is watched and when an object is done are the driver's: its `Member`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import aiohttp

from harness.kube import waiting
from harness.load import arrivals
from scheduler.controller import informing
from scheduler.kube import client as kube

SPARE_CONNECTIONS = 8
"""The client's connections beside the writes in flight: the drivers' watches (three at most) and their lists."""
WRITE_ERRORS = (kube.ApiError, aiohttp.ClientError, asyncio.TimeoutError)
"""A write that fails so is counted, not raised: one refused create does not end a run."""
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Settings:
    max_seconds: float = 900.0
    """Bound on the whole run (the phase's `seconds`)."""
    in_flight: int = 32
    """Writes in flight at once: the creates, and the driver's own writes under `Engine.slots`."""
    progress_seconds: float = 15.0
    sync_timeout_seconds: float = 120.0
    """How long each informer may take to list before creating starts."""


@dataclass(slots=True)
class Result:
    """How the creating went, by this process's clock."""

    start: float = 0.0
    """When creating started (every informer had listed): the schedule's zero."""
    end: float = 0.0
    lags: list[float] = field(default_factory=list)
    """Seconds each create was sent after its due time."""
    failures: int = 0
    """Creates the API refused or that failed on the way (their objects leave the driver's records)."""
    first_failure: str = ""
    timed_out: bool = False


class Member(Protocol):
    """What a driver's generator tells the engine."""

    def informers(self, client: kube.KubeClient) -> list[informing.Informer]:
        """The watches that feed its records."""

    def planned(self, creation: arrivals.Creation, now: float) -> None:
        """`creation` is sent next: record it now (its events may come before the POST returns)."""

    def request(self, creation: arrivals.Creation) -> tuple[str, dict]:
        """The POST's path and body."""

    def created(self, creation: arrivals.Creation, stored: dict, now: float) -> None:
        """The POST returned `stored`."""

    def refused(self, creation: arrivals.Creation) -> None:
        """The POST failed: forget the record."""

    def done(self) -> bool:
        """Every recorded object reached its end."""

    def progress(self) -> str:
        """A few counts for the progress line."""


class Engine:
    def __init__(self, client: kube.KubeClient, member: Member, creations: Sequence[arrivals.Creation],
                 settings: Settings, name: str, clock: Callable[[], float] = time.time,
                 say: Callable[[str], None] = print, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.client = client
        self.member = member
        self.creations = creations
        self.settings = settings
        self.name = name
        self.clock = clock
        self.say = say
        self.sleep = sleep
        self.result = Result()
        self.slots = asyncio.Semaphore(settings.in_flight)
        self.tasks: set[asyncio.Task] = set()
        self.finished = asyncio.Event()
        self._created_all = False

    def spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        """Run `coroutine` as a task the run cancels at its end."""
        task = asyncio.get_running_loop().create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def check_done(self) -> None:
        """End the run once everything was created and the member says all is done."""
        if self._created_all and self.member.done():
            self.finished.set()

    async def _create(self, creation: arrivals.Creation) -> None:
        path, body = self.member.request(creation)
        try:
            stored = await self.client.request("POST", path, body)
        except WRITE_ERRORS as error:
            self.result.failures += 1
            self.result.first_failure = self.result.first_failure or str(error)[:300]
            self.member.refused(creation)
        else:
            self.member.created(creation, stored, self.clock())
        finally:
            self.slots.release()
        self.check_done()

    async def create_all(self) -> None:
        """Send every creation at its due time after `result.start` (fixed: no drift when a create is slow)."""
        start = self.result.start
        for creation in self.creations:
            wait = start + creation.at - self.clock()
            if wait > 0:
                await self.sleep(wait)
            await self.slots.acquire()
            now = self.clock()
            self.result.lags.append(max(0.0, now - (start + creation.at)))
            self.member.planned(creation, now)
            self.spawn(self._create(creation))
        self._created_all = True
        self.check_done()

    async def _progress(self) -> None:
        while True:
            await self.sleep(self.settings.progress_seconds)
            self.say(f"    {self.name} t={self.clock() - self.result.start:.0f}s: {self.member.progress()}")

    async def run(self) -> Result:
        """List, create on schedule, and watch until done or `max_seconds`; nothing it started outlives it."""
        stop = asyncio.Event()
        informers = self.member.informers(self.client)
        watching = [asyncio.create_task(informer.run(stop)) for informer in informers]
        progress = asyncio.create_task(self._progress())
        creating = None
        try:
            for informer in informers:
                await asyncio.wait_for(informer.synced.wait(), timeout=self.settings.sync_timeout_seconds)
            self.result.start = self.clock()
            creating = asyncio.create_task(self.create_all())
            try:
                await asyncio.wait_for(self.finished.wait(), timeout=max(1.0, self.settings.max_seconds))
            except asyncio.TimeoutError:
                self.result.timed_out = True
        finally:
            self.result.end = self.clock()
            stop.set()
            await waiting.cancel(creating, progress, *watching, *self.tasks)
        return self.result


class Generator(Protocol[T]):
    async def run(self) -> T: ...


def generate(creds, settings: Settings, name: str, generator: Callable[[kube.KubeClient], Generator[T]]) -> T:
    """A whole generation in a fresh event loop, on a client of its own (user agent kqbench-`name`)."""
    async def run() -> T:
        client = kube.KubeClient(creds, None, 1, user_agent=f"kqbench-{name}",
                                 connections=settings.in_flight + SPARE_CONNECTIONS)
        try:
            return await generator(client).run()
        finally:
            await client.close()
    return asyncio.run(run())
