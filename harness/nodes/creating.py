"""Creating many Node objects fast, then waiting until kwok reports them Ready.

Concurrent POSTs over kept-alive connections with no client-side rate limit: this is our own
set-up traffic, and its throughput decides how long a 100k-node run waits before measuring.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp
import orjson

from harness.errors import KqbenchError
from harness.kube import posting, waiting
from harness.kube.kubeconfig import Credentials
from harness.nodes.pools import NodePool

Progress = Callable[..., None]
TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io"
MAX_ATTEMPTS = 8


@dataclass(frozen=True, slots=True)
class CreationReport:
    requested: int
    created: int
    already_existed: int
    seconds: float

    @property
    def nodes_per_second(self) -> float:
        return (self.created + self.already_existed) / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True, slots=True)
class ReadyReport:
    ready: int
    total: int
    seconds: float


async def _create_all(creds: Credentials, pools: list[NodePool], concurrency: int, progress: Progress) -> CreationReport:
    jobs = [(pool, index) for pool in pools for index in range(pool.count)]
    position = 0
    created = existed = 0
    started = time.monotonic()
    url = creds.server + "/api/v1/nodes"

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal position, created, existed
        while position < len(jobs):
            pool, index = jobs[position]
            position += 1
            body = orjson.dumps(pool.manifest(index))
            status = await waiting.retry_status(lambda: posting.post(session, url, body), MAX_ATTEMPTS)
            if status == 201:
                created += 1
            elif status == 409:
                existed += 1
            else:
                raise KqbenchError(f"creating node {pool.node_name(index)} failed: HTTP {status}")
            done = created + existed
            if done % 500 == 0 or done == len(jobs):
                elapsed = time.monotonic() - started
                progress("nodes", f"created {done}/{len(jobs)} ({done / max(elapsed, 1e-9):.0f} nodes/s)",
                         done == len(jobs))

    async with posting.session(creds, concurrency, timeout=60, accept_json=False) as session:
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
    return CreationReport(len(jobs), created, existed, time.monotonic() - started)


def create_nodes(creds: Credentials, pools: list[NodePool], progress: Progress, concurrency: int = 48) -> CreationReport:
    """Create every node of every pool (existing ones count as done)."""
    return asyncio.run(_create_all(creds, pools, concurrency, progress))


async def _count_ready(session: aiohttp.ClientSession, creds: Credentials, selector: str) -> tuple[int, int]:
    """(ready, total) from the Table form of a node list: a few dozen bytes per node instead of ~1.5 KB."""
    ready = total = 0
    token = ""
    for _ in range(10_000):  # pages; bounded
        params = {"labelSelector": selector, "limit": "10000"}
        if token:
            params["continue"] = token
        async with session.get(creds.server + "/api/v1/nodes", params=params,
                               headers={"Accept": TABLE_ACCEPT}) as response:
            if response.status == 429:  # its watch cache is still being filled (a restarted kube-apiserver)
                raise waiting.NotYet("kube-apiserver answered 429 to a node LIST")
            if response.status != 200:
                raise KqbenchError(f"listing nodes failed: HTTP {response.status}")
            table = orjson.loads(await response.read())
        columns = [c["name"] for c in table.get("columnDefinitions", [])]
        status_at = columns.index("Status") if "Status" in columns else 1
        for row in table.get("rows") or []:
            total += 1
            if str(row["cells"][status_at]).split(",")[0] == "Ready":
                ready += 1
        token = table.get("metadata", {}).get("continue") or ""
        if not token:
            break
    return ready, total


def wait_ready(creds: Credentials, expected: int, progress: Progress, timeout: float = 900.0,
               selector: str = "type=kwok") -> ReadyReport:
    """Poll until `expected` nodes matching selector are Ready; bounded by timeout."""

    async def poll() -> ReadyReport:
        started = time.monotonic()
        async with posting.session(creds, 4, timeout=60, accept_json=False) as session:
            async def all_ready() -> ReadyReport:
                ready, total = await _count_ready(session, creds, selector)
                progress("nodes", f"ready {ready}/{expected}", ready >= expected)
                if ready < expected:
                    raise waiting.NotYet(f"{ready} of {expected} Ready")
                return ReadyReport(ready, total, time.monotonic() - started)

            # Listing 100k nodes is itself load: poll less often the more there are (a Table LIST of
            # 20k nodes is cheap, and a 5 s step would hide most of a 10k bring-up's difference).
            return await waiting.poll_async(all_ready, timeout, 1.0 if expected <= 20_000 else 5.0,
                                            lambda: f"nodes not all Ready after {timeout:.0f}s (kwok-controller log has the reason)")

    return asyncio.run(poll())


def count_ready(creds: Credentials, selector: str) -> tuple[int, int]:
    """(ready, total) of the nodes matching selector, from one paginated LIST through kube-apiserver."""

    async def count() -> tuple[int, int]:
        async with posting.session(creds, 1, timeout=60, accept_json=False) as session:
            return await _count_ready(session, creds, selector)

    return asyncio.run(count())
