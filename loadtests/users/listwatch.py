"""Lister and Watcher: the read patterns informers and dashboards put on the apiserver."""

from __future__ import annotations

import itertools
import time
import urllib.parse

from locust import constant, task

from loadtests import client, naming, watching
from loadtests.users import pacing

MAX_PAGES = 100_000


def collection(resource: str, namespace: str | None) -> str:
    """REST path of a collection: a core resource name, or a full path given as is."""
    if resource.startswith("/"):
        return resource
    return f"/api/v1/namespaces/{namespace}/{resource}" if namespace else f"/api/v1/{resource}"


class Lister(client.KubeUser):
    """Cycles through the configured list modes: rv=0 (watch cache), consistent (rv=""), paginated."""

    abstract = False

    def on_start(self) -> None:
        self.modes = itertools.cycle(self.settings.listwatch.list_modes)

    def wait_time(self) -> float:
        return pacing.paced(self, self.settings.listwatch.per_second)

    @task
    def list(self) -> None:
        listwatch = self.settings.listwatch
        path = collection(listwatch.resource, listwatch.namespace)
        mode = next(self.modes)
        if mode == "rv0":
            self.call("LIST", f"{path}?resourceVersion=0", mode)
        elif mode == "consistent":
            self.call("LIST", path, mode)
        else:
            self.paginate(path, listwatch.page_size)

    def paginate(self, path: str, page_size: int) -> None:
        """Every page is one reported LIST; the whole walk is reported once more as LIST-ALL-PAGES."""
        started, total, token = time.perf_counter(), 0, ""
        for _ in range(MAX_PAGES):
            query = f"limit={page_size}" + (f"&continue={urllib.parse.quote(token)}" if token else "")
            reply = self.call("LIST", f"{path}?{query}", "paginated")
            total += len(reply.body)
            if not reply.ok:
                self.report("LIST-ALL-PAGES", naming.resource_of(path), "paginated", time.perf_counter() - started,
                            total, error=f"page failed: {reply.status}")
                return
            token = (reply.json().get("metadata") or {}).get("continue") or ""
            if not token:
                break
        self.report("LIST-ALL-PAGES", naming.resource_of(path), "paginated", time.perf_counter() - started, total)


class Watcher(client.KubeUser):
    """Opens watches back to back, each held `hold_seconds`: watch-list (streamed initial state) or LIST+WATCH."""

    abstract = False
    wait_time = constant(0.1)

    def on_start(self) -> None:
        self.modes = itertools.cycle(self.settings.listwatch.watch_modes)

    @task
    def watch(self) -> None:
        listwatch = self.settings.listwatch
        path = collection(listwatch.resource, listwatch.namespace)
        mode = next(self.modes)
        if mode == "watchlist":
            self.stream_watch(f"{path}?{watching.watchlist_query('', listwatch.hold_seconds)}", mode,
                              until_initial_end=True)
            return
        reply = self.call("LIST", f"{path}?resourceVersion=0", mode)
        if reply.ok:
            version = (reply.json().get("metadata") or {}).get("resourceVersion", "")
            self.stream_watch(f"{path}?{watching.watch_query(version, listwatch.hold_seconds)}", mode,
                              until_initial_end=False)
