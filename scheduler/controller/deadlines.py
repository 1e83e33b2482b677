"""Deadlines armed per Workload, the earliest first (the controller's timers for maximum execution time).

A heap of (deadline, key) beside the one armed entry per key: re-arming or disarming a key leaves its
old heap entry in place, skipped when it comes up (cheaper than removing it from the middle).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Generic, TypeVar

Key = tuple[str, str]
T = TypeVar("T")


@dataclass
class Deadlines(Generic[T]):
    _armed: dict[Key, tuple[float, T]] = field(default_factory=dict)
    _heap: list[tuple[float, Key]] = field(default_factory=list)

    def arm(self, key: Key, due: float, payload: T) -> bool:
        """Arm (or re-arm) ``key`` at ``due`` (POSIX seconds); True when the deadline changed."""
        known = self._armed.get(key)
        self._armed[key] = (due, payload)
        if known is not None and known[0] == due:
            return False
        heapq.heappush(self._heap, (due, key))
        return True

    def disarm(self, key: Key) -> None:
        self._armed.pop(key, None)

    def __contains__(self, key: Key) -> bool:
        return key in self._armed

    def next_due(self) -> float | None:
        """The earliest armed deadline, None when none is."""
        heap = self._heap
        while heap:
            due, key = heap[0]
            armed = self._armed.get(key)
            if armed is not None and armed[0] == due:
                return due
            heapq.heappop(heap)
        return None

    def pop_due(self, now: float) -> list[T]:
        """Disarm and return the payloads of every deadline at or before ``now``, earliest first."""
        due_now = []
        while (due := self.next_due()) is not None and due <= now:
            _, key = heapq.heappop(self._heap)
            due_now.append(self._armed.pop(key)[1])
        return due_now
