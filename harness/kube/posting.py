"""Creating many objects fast: concurrent POSTs over kept-alive connections, no client-side limit.

This is our own set-up traffic (fill a queue, populate ConfigMaps), not what we measure; its
speed decides how long a run waits before measuring. Existing objects (409) count as created.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import aiohttp

from harness.errors import KqbenchError
from harness.kube import waiting
from harness.kube.kubeconfig import Credentials

MAX_ATTEMPTS = 8

# (collection path, body factory): bodies are built when sent, so 10k bodies of 100 KB are never
# held at once.
Job = tuple[str, Callable[[], bytes]]


def session(creds: Credentials, concurrency: int, timeout: float, accept_json: bool = True) -> aiohttp.ClientSession:
    """A pool of `concurrency` kept-alive connections to kube-apiserver sending JSON with the credentials,
    each request bounded by `timeout` seconds; for set-up traffic (no client-side limit)."""
    connector = aiohttp.TCPConnector(ssl=creds.ssl_context(), limit=concurrency, keepalive_timeout=60)
    headers = {"Content-Type": "application/json", **({"Accept": "application/json"} if accept_json else {}),
               **creds.headers()}
    return aiohttp.ClientSession(connector=connector, headers=headers, timeout=aiohttp.ClientTimeout(total=timeout))


async def _post_all(creds: Credentials, jobs: list[Job], concurrency: int, deadline: float,
                    progress: Callable[[int, int], None]) -> None:
    position = 0
    done = 0
    async with session(creds, concurrency, timeout=120) as client:
        async def worker() -> None:
            nonlocal position, done
            while position < len(jobs):
                if time.monotonic() > deadline:
                    raise KqbenchError(f"creating objects took longer than its timeout ({done}/{len(jobs)} created)")
                path, build = jobs[position]
                body = build()
                position += 1
                status = await waiting.retry_status(lambda: post(client, creds.server + path, body), MAX_ATTEMPTS)
                if status not in (201, 409):
                    raise KqbenchError(f"POST {path} failed: HTTP {status}")
                done += 1
                if done % 1000 == 0 or done == len(jobs):
                    progress(done, len(jobs))

        await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(jobs))))))


async def post(session: aiohttp.ClientSession, url: str, body: bytes) -> int:
    """One POST; its HTTP status (the body is read so that the connection is reused)."""
    async with session.post(url, data=body) as response:
        await response.read()
        return response.status


def post_all(creds: Credentials, jobs: list[Job], concurrency: int = 48, timeout: float = 1800.0,
             progress: Callable[[int, int], None] = lambda done, total: None) -> float:
    """POST every job (bounded by timeout); returns the seconds it took."""
    started = time.monotonic()
    asyncio.run(_post_all(creds, jobs, concurrency, started + timeout, progress))
    return time.monotonic() - started
