"""An asyncio Kubernetes REST client: list pages, watch streams, status patches; counts what it writes.

The official client deserialises into models, far too slow for 100k Workloads; this one hands out
plain dicts parsed with orjson and keeps one kept-alive connection pool.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from urllib.parse import urlencode

import aiohttp
import orjson

from scheduler.api import contenttypes
from scheduler.kube.kubeconfig import Credentials
from scheduler.kube.ratelimit import TokenBucket

# (verb, resource, code, request bytes) after every write: the controller's /metrics listens.
WriteObserver = Callable[[str, str, int, int], None]


READ_BUFFER_BYTES = 8 * 1024**2
"""aiohttp's stream buffer; a watch event is one line, and a line may be twice this long. Its default
(256 KiB) ended the Workload watch at the first event over 512 KiB (a TAS assignment of about 32,000
cloud-named hosts) with "Chunk too big"; etcd stores objects up to 1.5 MiB by default, and a cluster may
raise that limit (--max-request-bytes)."""

class ApiError(Exception):
    def __init__(self, status: int, body: bytes, what: str) -> None:
        self.status = status
        self.body = body
        try:
            message = orjson.loads(body).get("message", "")
        except (orjson.JSONDecodeError, AttributeError):
            message = body[:200].decode(errors="replace")
        self.reason = message
        super().__init__(f"{what}: HTTP {status}: {message}")


class Gone(ApiError):
    """410: the resourceVersion is too old; relist."""


FAILURES = (ApiError, aiohttp.ClientError, asyncio.TimeoutError)
"""What a request raises when kube-apiserver refuses it, times out or drops the connection."""


def failure_code(error: BaseException) -> str:
    """The metrics label of a failed request: its HTTP status, or "transport"."""
    return str(error.status) if isinstance(error, ApiError) else "transport"


@dataclass(frozen=True, slots=True)
class ListResult:
    items: list[dict]
    resource_version: str


def resource_of(path: str) -> str:
    """'/apis/g/v/namespaces/ns/workloads/x/status' -> 'workloads/status' (for metrics labels)."""
    parts = [p for p in path.split("?")[0].split("/") if p]
    if parts and parts[0] == "api":
        parts = parts[2:]
    elif parts and parts[0] == "apis":
        parts = parts[3:]
    if parts[:1] == ["namespaces"] and len(parts) > 2:
        parts = parts[2:]
    resource = parts[0] if parts else ""
    return f"{resource}/{parts[2]}" if len(parts) > 2 else resource


class KubeClient:
    """One connection pool to kube-apiserver; writes are paced by a token bucket (qps None = unlimited)."""

    def __init__(self, creds: Credentials, qps: float | None = None, burst: int = 1,
                 user_agent: str = "kqbench-scheduler", connections: int = 64,
                 on_write: WriteObserver | None = None) -> None:
        self.creds = creds
        self.bucket = TokenBucket(qps, burst)
        self._on_write = on_write
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=creds.ssl_context(), limit=connections, keepalive_timeout=60),
            headers={"User-Agent": user_agent, "Accept": "application/json", **creds.headers()},
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=10),
            read_bufsize=READ_BUFFER_BYTES,
        )

    async def close(self) -> None:
        await self._session.close()

    async def __aenter__(self) -> "KubeClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def _paced(self) -> None:
        wait = self.bucket.delay()
        if wait > 0:
            await asyncio.sleep(wait)

    async def request(self, method: str, path: str, body: dict | bytes | None = None,
                      content_type: str = "application/json", timeout: float = 60.0) -> dict:
        data = orjson.dumps(body) if isinstance(body, dict) else body
        writing = method != "GET"
        if writing:
            await self._paced()
        headers = {"Content-Type": content_type} if data is not None else {}
        async with self._session.request(method, self.creds.server + path, data=data, headers=headers,
                                         timeout=aiohttp.ClientTimeout(total=timeout)) as response:
            payload = await response.read()
            if writing and self._on_write:
                self._on_write(method, resource_of(path), response.status, len(data or b""))
            if response.status == 410:
                raise Gone(response.status, payload, f"{method} {path}")
            if response.status >= 300:
                raise ApiError(response.status, payload, f"{method} {path}")
            return orjson.loads(payload) if payload else {}

    async def get(self, path: str, timeout: float = 60.0) -> dict:
        return await self.request("GET", path, timeout=timeout)

    async def list_all(self, path: str, page_size: int = 5000, label_selector: str = "") -> ListResult:
        """Every item of a collection, in pages (served by etcd at one consistent revision)."""
        items: list[dict] = []
        token = ""
        resource_version = ""
        for _ in range(1_000_000 // page_size + 1):  # bounded: a million objects at most
            query = {"limit": str(page_size)}
            if label_selector:
                query["labelSelector"] = label_selector
            if token:
                query["continue"] = token
            page = await self.get(f"{path}?{urlencode(query)}", timeout=300)
            items.extend(page.get("items") or ())
            metadata = page.get("metadata") or {}
            resource_version = metadata.get("resourceVersion", resource_version)
            token = metadata.get("continue") or ""
            if not token:
                break
        return ListResult(items, resource_version)

    async def watch(self, path: str, resource_version: str, timeout_seconds: int = 300,
                    label_selector: str = "") -> AsyncIterator[dict]:
        """Events ({type, object}) from resource_version on, bookmarks included; ends when the server closes."""
        params = {"watch": "1", "resourceVersion": resource_version, "allowWatchBookmarks": "true",
                  "timeoutSeconds": str(timeout_seconds)}
        query = urlencode({**params, "labelSelector": label_selector} if label_selector else params)
        async with self._session.get(f"{self.creds.server}{path}?{query}",
                                     timeout=aiohttp.ClientTimeout(total=timeout_seconds + 30)) as response:
            if response.status == 410:
                raise Gone(410, await response.read(), f"WATCH {path}")
            if response.status >= 300:
                raise ApiError(response.status, await response.read(), f"WATCH {path}")
            async for line in response.content:
                if line.strip():
                    event = orjson.loads(line)
                    if event.get("type") == "ERROR":
                        status = event.get("object", {})
                        if status.get("code") == 410:
                            raise Gone(410, orjson.dumps(status), f"WATCH {path}")
                        raise ApiError(status.get("code", 500), orjson.dumps(status), f"WATCH {path}")
                    yield event

    async def patch_status(self, path: str, patch: dict) -> dict:
        """JSON merge patch on the status subresource."""
        return await self.request("PATCH", f"{path}/status", patch, contenttypes.MERGE_PATCH)

    async def apply(self, path: str, obj: dict, manager: str = "kqbench") -> dict:
        """Server-side apply (creates or updates), forcing our field ownership."""
        return await self.request("PATCH", f"{path}?fieldManager={manager}&force=true", obj,
                                  contenttypes.APPLY_PATCH)
