"""Reading a watch stream: split events, and tell when the initial events of a watch-list are all in.

Pure (bytes in, facts out) so it is tested without a server; the Watcher user feeds it from a socket.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

INITIAL_EVENTS_END = "k8s.io/initial-events-end"


@dataclass(slots=True)
class WatchProgress:
    """What a watch has delivered so far."""

    bytes: int = 0
    events: int = 0
    by_type: dict[str, int] = field(default_factory=dict)
    initial_events_done: bool = False
    bytes_at_initial_end: int = 0
    events_at_initial_end: int = 0
    resource_version: str = ""
    error: str = ""
    """Message of an ERROR event (e.g. 410 Gone: the resourceVersion is too old)."""

    def feed_line(self, line: bytes) -> None:
        """Account one newline-delimited event (the line as received, newline included)."""
        self.bytes += len(line)
        line = line.strip()
        if not line:
            return
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            self.error = f"undecodable watch event ({len(line)} bytes)"
            return
        kind = event.get("type", "?")
        self.events += 1
        self.by_type[kind] = self.by_type.get(kind, 0) + 1
        obj = event.get("object") or {}
        metadata = obj.get("metadata") or {}
        if kind == "ERROR":
            self.error = f"{obj.get('code', '?')} {obj.get('reason', '')}: {obj.get('message', '')}".strip()
            return
        self.resource_version = metadata.get("resourceVersion", self.resource_version)
        if kind == "BOOKMARK" and (metadata.get("annotations") or {}).get(INITIAL_EVENTS_END) == "true":
            if not self.initial_events_done:
                self.initial_events_done = True
                self.bytes_at_initial_end = self.bytes
                self.events_at_initial_end = self.events - 1  # the bookmark itself is not an initial object


def watchlist_query(resource_version: str = "", timeout_seconds: int = 5) -> str:
    """Query of a streaming list: initial state as ADDED events, then a bookmark marking its end."""
    query = (f"watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
             f"&timeoutSeconds={timeout_seconds}")
    return query + (f"&resourceVersion={resource_version}" if resource_version else "&resourceVersion=")


def watch_query(resource_version: str, timeout_seconds: int = 5) -> str:
    """Query of a classic watch from a LIST's resourceVersion (the informer's second step)."""
    return f"watch=1&allowWatchBookmarks=true&resourceVersion={resource_version}&timeoutSeconds={timeout_seconds}"
