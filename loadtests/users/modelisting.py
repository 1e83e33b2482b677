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
        self.stream_watch(path, "watchlist", until_initial_end=True, drop_at_initial_end=True)
