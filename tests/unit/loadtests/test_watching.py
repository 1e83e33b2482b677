"""Watch streams: events counted, the initial-events-end bookmark found, errors surfaced."""

from __future__ import annotations

import orjson
import pytest

from loadtests import watching


def event(kind: str, name: str = "p", rv: str = "1", annotations: dict | None = None, **obj) -> bytes:
    metadata = {"name": name, "resourceVersion": rv}
    if annotations:
        metadata["annotations"] = annotations
    return orjson.dumps({"type": kind, "object": {"metadata": metadata, **obj}}) + b"\n"


END = event("BOOKMARK", rv="9", annotations={watching.INITIAL_EVENTS_END: "true"})


@pytest.mark.parametrize("lines, done, initial_objects, error", [
    ([event("ADDED", "a"), event("ADDED", "b"), END, event("MODIFIED", "a")], True, 2, ""),
    ([END], True, 0, ""),
    ([event("ADDED", "a"), event("BOOKMARK", rv="5")], False, 0, ""),
    ([event("ERROR", code=410, reason="Expired", message="too old")], False, 0, "410 Expired: too old"),
    ([b"{not json\n"], False, 0, "undecodable watch event (9 bytes)"),
])
def test_progress(lines, done, initial_objects, error):
    progress = watching.WatchProgress()
    for line in lines:
        progress.feed_line(line)
    assert progress.initial_events_done is done
    assert progress.events_at_initial_end == initial_objects
    assert progress.error == error
    assert progress.bytes == sum(len(line) for line in lines)


def test_bytes_stop_counting_at_the_bookmark_for_initial_events():
    progress = watching.WatchProgress()
    first = [event("ADDED", "a"), END]
    for line in first + [event("MODIFIED", "a", rv="10")]:
        progress.feed_line(line)
    assert progress.bytes_at_initial_end == sum(map(len, first))
    assert progress.resource_version == "10"
    assert progress.by_type == {"ADDED": 1, "BOOKMARK": 1, "MODIFIED": 1}


@pytest.mark.parametrize("query, parts", [
    (watching.watchlist_query("", 7), {"watch=1", "sendInitialEvents=true", "resourceVersionMatch=NotOlderThan",
                                       "allowWatchBookmarks=true", "timeoutSeconds=7", "resourceVersion="}),
    (watching.watch_query("42", 3), {"watch=1", "allowWatchBookmarks=true", "resourceVersion=42", "timeoutSeconds=3"}),
])
def test_queries(query, parts):
    assert set(query.split("&")) == parts
