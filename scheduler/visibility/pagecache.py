"""Encoded pendingworkloads pages, kept until their queue changes.

Many readers asking for the same page of a quiet queue is the common case (dashboards, `kubectl
get --raw` in a loop); encoding a page of 100 costs far more than looking it up. A key carries the
ClusterQueue's generation, so a page of a queue that changed is never served: it just stops being
asked for and falls out of the LRU. Entries and bytes are both bounded (a page may hold 100k items).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

DEFAULT_ENTRIES = 1024
DEFAULT_BYTES = 64 * 1024 * 1024


class NoPageCache:
    """Keeps nothing: every request encodes its page (the setting `page_cache: false`)."""

    max_entries = max_bytes = bytes = 0

    def __len__(self) -> int:
        return 0

    def get(self, key: Hashable) -> bytes | None:
        return None

    def put(self, key: Hashable, body: bytes) -> None:
        pass


class PageCache:
    def __init__(self, max_entries: int = DEFAULT_ENTRIES, max_bytes: int = DEFAULT_BYTES) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError(f"a page cache needs room for at least 1 entry and 1 byte "
                             f"(got {max_entries} entries, {max_bytes} bytes)")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: OrderedDict[Hashable, bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> bytes | None:
        body = self._entries.get(key)
        if body is not None:
            self._entries.move_to_end(key)
        return body

    def put(self, key: Hashable, body: bytes) -> None:
        """Keep a page, dropping the least recently used ones beyond the bounds; a page bigger than a
        quarter of the byte budget is not kept (it would push out everything else)."""
        if len(body) > self.max_bytes // 4:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self.bytes -= len(old)
        self._entries[key] = body
        self.bytes += len(body)
        while len(self._entries) > self.max_entries or self.bytes > self.max_bytes:
            _, dropped = self._entries.popitem(last=False)
            self.bytes -= len(dropped)
