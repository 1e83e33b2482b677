"""A watch event is one line of JSON: the client reads lines as long as the largest object etcd may hold,
and an informer whose watch breaks on a line it cannot read lists again instead of dying."""

from __future__ import annotations

import asyncio

import orjson
from aiohttp import web

from scheduler.controller import informing
from scheduler.kube import client as kube
from scheduler.kube.kubeconfig import Credentials

BIG = 3 * 1024**2
"""Twice etcd's default request limit: a Workload whose TAS assignment names ~100,000 hosts."""


async def _serve_watch(lines: list[bytes]) -> tuple[web.AppRunner, str]:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        for line in lines:
            await response.write(line + b"\n")
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_get("/apis/x/v1/things", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    return runner, f"http://127.0.0.1:{port}"


def _event(kind: str, name: str, padding: int = 0) -> bytes:
    obj = {"metadata": {"name": name, "resourceVersion": "7"}, "status": {"blob": "x" * padding}}
    return orjson.dumps({"type": kind, "object": obj})


def test_a_watch_event_larger_than_etcds_limit_arrives_whole():
    async def run() -> list[tuple[str, int]]:
        runner, server = await _serve_watch([_event("MODIFIED", "big", BIG), _event("DELETED", "big")])
        try:
            async with kube.KubeClient(Credentials(server, None, None, None, None)) as client:
                return [(e["type"], len(e["object"]["status"]["blob"]))
                        async for e in client.watch("/apis/x/v1/things", "1", timeout_seconds=5)]
        finally:
            await runner.cleanup()

    assert asyncio.run(run()) == [("MODIFIED", BIG), ("DELETED", 0)]


class _Client:
    """Lists one object; its first watch breaks on an unreadable line, the second ends at once."""

    def __init__(self) -> None:
        self.lists = 0
        self.watches = 0

    async def list_all(self, path: str, page_size: int, label_selector: str = "") -> kube.ListResult:
        self.lists += 1
        return kube.ListResult([{"metadata": {"name": "a"}}], str(self.lists))

    async def watch(self, path, resource_version, timeout_seconds=300, label_selector=""):
        self.watches += 1
        await asyncio.sleep(0.01)  # a real watch waits on the network
        if self.watches == 1:
            raise ValueError("Chunk too big")
        yield {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": resource_version}}}


def test_an_informer_whose_watch_breaks_on_a_line_lists_again_and_goes_on():
    async def run() -> tuple[int, int, int]:
        client, stop = _Client(), asyncio.Event()
        informer = informing.Informer(client, "/apis/x/v1/things", lambda items: None, lambda kind, obj: None)
        task = asyncio.create_task(informer.run(stop))
        for _ in range(100):  # bounded: a few backoffs of 0.2 s at most
            if client.watches >= 2:
                break
            await asyncio.sleep(0.05)
        stop.set()
        await asyncio.wait_for(task, 5)
        return client.lists, client.watches, informer.stats.errors

    lists, watches, errors = asyncio.run(run())
    assert errors == 1 and watches >= 2 and lists == 2
