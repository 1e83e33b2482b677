"""Informer-style list + watch of one resource: list once, watch from there with bookmarks,
resume from the last resourceVersion, relist on 410 Gone."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import aiohttp

from scheduler.kube import client as kube

log = logging.getLogger(__name__)

# on_list(items) replaces everything known of the resource; on_event(type, object) applies one change.
OnList = Callable[[list[dict]], None]
OnEvent = Callable[[str, dict], None]


@dataclass(slots=True)
class InformerStats:
    lists: int = 0
    watches: int = 0
    events: int = 0
    bookmarks: int = 0
    relists_after_gone: int = 0
    errors: int = 0


@dataclass(slots=True)
class Informer:
    client: kube.KubeClient
    path: str
    on_list: OnList
    on_event: OnEvent
    page_size: int = 5000
    watch_timeout_seconds: int = 300
    stats: InformerStats = field(default_factory=InformerStats)
    synced: asyncio.Event = field(default_factory=asyncio.Event)
    resource_version: str = ""
    label_selector: str = ""
    """Only objects matching it ("" for all): the server filters, so the rest costs no events."""

    async def _list(self) -> None:
        result = await self.client.list_all(self.path, self.page_size, self.label_selector)
        self.stats.lists += 1
        self.resource_version = result.resource_version
        self.on_list(result.items)
        self.synced.set()

    async def _watch_once(self) -> None:
        self.stats.watches += 1
        async for event in self.client.watch(self.path, self.resource_version, self.watch_timeout_seconds,
                                                   self.label_selector):
            obj = event.get("object") or {}
            version = (obj.get("metadata") or {}).get("resourceVersion")
            if version:
                self.resource_version = version
            if event["type"] == "BOOKMARK":
                self.stats.bookmarks += 1
                continue
            self.stats.events += 1
            self.on_event(event["type"], obj)

    async def run(self, stop: asyncio.Event) -> None:
        """List, then watch until stop is set; errors back off (at most 5 s) and retry."""
        backoff = 0.2
        needs_list = True
        while not stop.is_set():
            try:
                if needs_list:
                    await self._list()
                    needs_list = False
                await self._watch_once()  # returns when the server ends the watch: resume from rv
                backoff = 0.2
            except kube.Gone:
                self.stats.relists_after_gone += 1
                needs_list = True
            except (kube.ApiError, aiohttp.ClientError, asyncio.TimeoutError, ConnectionError, ValueError) as error:
                # ValueError: a watch line the client could not read whole ("Chunk too big") or parse; the
                # events after it are lost with the watch, so the informer lists again rather than resume.
                self.stats.errors += 1
                needs_list = needs_list or isinstance(error, ValueError)
                log.warning("informer %s: %s; retrying in %.1fs", self.path, error, backoff)
                try:
                    await asyncio.wait_for(stop.wait(), timeout=backoff)
                except asyncio.TimeoutError:
                    pass
                backoff = min(backoff * 2, 5.0)
