"""ModeLister: many clients each listing one collection repeatedly in one mode (issue 9's watch-cache runs).

Unlike `listwatch.Lister`, which cycles modes against one collection, every ModeLister sticks to one
mode and spreads over a group of namespaces (client k lists member k mod n), so W workers put W
concurrent lists on the apiserver the way W informers or dashboards would. It reads the existing
`ListWatchSettings`:

- `list_modes[0]` is the mode (rv0 | consistent | paginated); empty `list_modes` with `watch_modes`
  ("watchlist",) streams the list as a watch (sendInitialEvents=true) and closes it at the
  initial-events-end bookmark, as client-go's WatchListClient does.
- `namespace` names the group: the namespaces labelled `listgroups.GROUP_LABEL=<namespace>` (found once per
  client; a namespace of that name if none carries the label). None lists across all namespaces.
- `per_second` paces each client; 0 lists back to back.

This file is also a locustfile: `loadtests.running` can be given its path.
"""

from __future__ import annotations

import itertools
import time
import urllib.parse

from locust import task

from loadtests import client, listgroups, naming, watching
from loadtests.users import listwatch, pacing

MAX_STREAM_LINES = 10_000_000


class ModeLister(client.KubeUser):
    """Lists one collection in one mode, back to back or paced; every list is one report."""

    abstract = False
    _numbers = itertools.count()
    """Client numbers within this process (workers of a distributed run each count from 0)."""

    def on_start(self) -> None:
        listwatch_settings = self.settings.listwatch
        self.number = next(ModeLister._numbers)
        self.mode = listgroups.mode_of(listwatch_settings.list_modes, listwatch_settings.watch_modes)
        namespace = listwatch_settings.namespace
        if namespace is not None:
            reply = self.call("LIST", f"/api/v1/namespaces?labelSelector={listgroups.group_selector(namespace)}", "setup")
            names = [(item.get("metadata") or {}).get("name", "") for item in reply.json().get("items", [])] \
                if reply.ok else []
            namespace = listgroups.member([n for n in names if n], self.number) or namespace
        self.path = listwatch.collection(listwatch_settings.resource, namespace)

    def wait_time(self) -> float:
        per_second = self.settings.listwatch.per_second
        return pacing.paced(self, per_second) if per_second > 0 else 0.0

    @task
    def list(self) -> None:
        if self.mode == "rv0":
            self.call("LIST", f"{self.path}?resourceVersion=0", self.mode)
        elif self.mode == "consistent":
            self.call("LIST", self.path, self.mode)
        elif self.mode == "paginated":
            self.paginate()
        else:
            self.watch_list()

    def paginate(self) -> None:
        """Every page is one LIST report; the whole walk one LIST-ALL-PAGES report (as listwatch.Lister)."""
        started, total, token = time.perf_counter(), 0, ""
        page_size = self.settings.listwatch.page_size
        for _ in range(listwatch.MAX_PAGES):
            query = f"limit={page_size}" + (f"&continue={urllib.parse.quote(token)}" if token else "")
            reply = self.call("LIST", f"{self.path}?{query}", "paginated")
            total += len(reply.body)
            if not reply.ok:
                self.report("LIST-ALL-PAGES", naming.resource_of(self.path), "paginated",
                            time.perf_counter() - started, total, error=f"page failed: {reply.status}")
                return
            token = (reply.json().get("metadata") or {}).get("continue") or ""
            if not token:
                break
        self.report("LIST-ALL-PAGES", naming.resource_of(self.path), "paginated", time.perf_counter() - started, total)

    def watch_list(self) -> None:
        """A streaming list: reported at the initial-events-end bookmark, then the stream is dropped."""
        path = f"{self.path}?{watching.watchlist_query('', self.settings.listwatch.hold_seconds)}"
        name = naming.RequestName("WATCH", naming.resource_of(path), "watchlist")
        progress = watching.WatchProgress()
        started = time.perf_counter()
        with self.client.request("GET", path, name=str(name), stream=True, catch_response=True,
                                 headers={"Accept-Encoding": "identity"}) as response:
            response.request_meta["request_type"] = "WATCH"
            status = response.status_code or 0
            raw = getattr(response, "_response", None)
            if status != 200 or raw is None:
                body = raw.read() if raw is not None else b""
                response.failure(client.failure_reason(status, body, getattr(response, "error", None)))
                return
            try:
                for _ in range(MAX_STREAM_LINES):  # bounded: ends at the bookmark or the server's timeoutSeconds
                    line = raw.readline(b"\n")
                    if not line:
                        break
                    progress.feed_line(line)
                    if progress.initial_events_done or progress.error:
                        break
            except OSError as error:
                progress.error = progress.error or f"stream broken: {type(error).__name__}"
            response.request_meta["response_time"] = (time.perf_counter() - started) * 1000.0
            response.request_meta["response_length"] = progress.bytes
            if progress.error:
                response.failure(progress.error)
            elif not progress.initial_events_done:
                response.failure("stream ended before the initial-events-end bookmark")
            else:
                response.success()
        # The body was not read to its end: geventhttpclient closes that connection rather than reuse it.
