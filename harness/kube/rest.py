"""A few synchronous apiserver calls the harness makes outside the hot path (readiness, version)."""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Callable

from harness.errors import KqbenchError
from harness.kube import calling, waiting
from harness.kube.kubeconfig import Credentials
from scheduler.api import contenttypes


def get(creds: Credentials, path: str, timeout: float = 10.0, accept: str | None = None) -> tuple[int, bytes]:
    """GET path (as the `accept` media type if given); returns (status, body), also for HTTP error statuses."""
    return calling.call(creds.server + path, headers={**creds.headers(), **({"Accept": accept} if accept else {})},
                        timeout=timeout, context=creds.ssl_context())


def get_json(creds: Credentials, path: str, timeout: float = 10.0) -> dict:
    status, body = get(creds, path, timeout)
    if status != 200:
        raise KqbenchError(f"GET {path} answered {status}: {body[:200]!r}")
    return json.loads(body)


def wait_ready(creds: Credentials, timeout: float = 120.0, clock=time.monotonic, sleep=time.sleep) -> float:
    """Poll /readyz until it answers 200; return seconds waited. Bounded by timeout."""
    started = clock()

    def ready() -> bool:
        status, body = get(creds, "/readyz", timeout=5.0)
        if status != 200:
            raise waiting.NotYet(f"{status} {body[-300:].decode(errors='replace')}")
        return True

    waiting.poll(ready, timeout, 0.5, lambda: f"kube-apiserver at {creds.server} not ready after {timeout:.0f}s",
                 retry_on=(OSError,), clock=clock, sleep=sleep)
    return clock() - started


def request(creds: Credentials, method: str, path: str, body: dict | None = None,
            content_type: str = "application/json", timeout: float = 30.0) -> tuple[int, bytes]:
    """Any verb; returns (status, body), also for HTTP error statuses."""
    headers = {**creds.headers(), "Content-Type": content_type, "Accept": "application/json"}
    return calling.call(creds.server + path, method, body=body, headers=headers, timeout=timeout,
                        context=creds.ssl_context())


def watch(creds: Credentials, path: str, on_event: Callable[[dict], None], timeout: float) -> None:
    """One watch request: each event (a line of JSON) to `on_event` until the server ends the stream
    (the path's timeoutSeconds); an HTTP or transport error raises as `calling.opened` raises it, and what
    `on_event` raises ends the request."""
    with calling.opened(creds.server + path, headers=creds.headers(), timeout=timeout,
                        context=creds.ssl_context()) as response:
        for line in response:
            on_event(json.loads(line))


class Gone(Exception):
    """A watch's resourceVersion is older than kube-apiserver keeps (410 Gone): list again and watch from there."""


def watch_from(creds: Credentials, path: str, version: str, seconds: int, on_version: Callable[[str], None],
               on_change: Callable[[dict], None], on_delete: Callable[[dict], None]) -> None:
    """One watch request of the collection `path` (it may carry a query) from `version` that the server ends
    after `seconds`: every resourceVersion seen (bookmarks too) to `on_version` as it comes, so that the next
    request resumes there; ADDED and MODIFIED objects to `on_change`, DELETED ones to `on_delete`. A 410
    raises Gone; another ERROR event raises ValueError."""
    def event(item: dict) -> None:
        obj = item.get("object") or {}
        if item.get("type") == "ERROR":
            if obj.get("code") == 410:
                raise Gone(obj.get("message", "410 Gone"))
            raise ValueError(f"watch error: {obj.get('message')}")
        if resource_version := (obj.get("metadata") or {}).get("resourceVersion"):
            on_version(resource_version)
        if item.get("type") == "DELETED":
            on_delete(obj)
        elif item.get("type") in ("ADDED", "MODIFIED"):
            on_change(obj)

    query = urllib.parse.urlencode({"watch": "1", "allowWatchBookmarks": "true", "timeoutSeconds": str(seconds),
                                    "resourceVersion": version})
    watch(creds, f"{path}{'&' if '?' in path else '?'}{query}", event, timeout=seconds + 30)


def apply(creds: Credentials, path: str, obj: dict, manager: str = "kqbench") -> dict:
    """Server-side apply of obj at its object path (creates or updates)."""
    status, body = request(creds, "PATCH", f"{path}?fieldManager={manager}&force=true", obj,
                           contenttypes.APPLY_PATCH)
    if status >= 300:
        message = json.loads(body).get("message", body[:200]) if body.startswith(b"{") else body[:200]
        raise KqbenchError(f"applying {path} failed ({status}): {message}")
    return json.loads(body)
