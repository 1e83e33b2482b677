"""Encoded pendingworkloads pages, kept until their queue changes.

Many readers asking for the same page of a quiet queue is the common case (dashboards, `kubectl
get --raw` in a loop); encoding a page of 100 costs far more than looking it up. A key carries the
ClusterQueue's generation, so a page of a queue that changed is never served: it just stops being
asked for and falls out of the LRU.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

DEFAULT_ENTRIES = 1024


class PageCache:
    def __init__(self, max_entries: int = DEFAULT_ENTRIES) -> None:
        if max_entries < 1:
            raise ValueError(f"a page cache needs room for at least 1 entry (got {max_entries})")
        self.max_entries = max_entries
        self._entries: OrderedDict[Hashable, bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> bytes | None:
        body = self._entries.get(key)
        if body is not None:
            self._entries.move_to_end(key)
        return body

    def put(self, key: Hashable, body: bytes) -> None:
        self._entries[key] = body
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
