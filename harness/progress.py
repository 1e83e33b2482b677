"""Terminal progress for long steps (builds, node creation), on stderr so stdout stays data."""

from __future__ import annotations

import sys
import time


class LineProgress:
    """Prints at most one line per `interval` seconds per topic; cheap and log-friendly."""

    def __init__(self, interval: float = 2.0, stream=None, clock=time.monotonic) -> None:
        self._interval = interval
        self._stream = stream or sys.stderr
        self._clock = clock
        self._last: dict[str, float] = {}

    def __call__(self, topic: str, detail: str, force: bool = False) -> None:
        now = self._clock()
        if not force and now - self._last.get(topic, -1e9) < self._interval:
            return
        self._last[topic] = now
        print(f"[{topic}] {detail}", file=self._stream, flush=True)
