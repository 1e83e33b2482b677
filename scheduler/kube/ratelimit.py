"""Client-side QPS/burst like client-go's token bucket (pure; the clock is injected)."""

from __future__ import annotations

import time
from collections.abc import Callable


class TokenBucket:
    """qps tokens per second, at most burst saved up; `delay()` reserves one and says how long to wait."""

    def __init__(self, qps: float | None, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        if qps is not None and (qps <= 0 or burst < 1):
            raise ValueError(f"client QPS must be > 0 and burst >= 1 (got qps={qps}, burst={burst})")
        self.qps = qps
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()

    def delay(self) -> float:
        """Seconds the caller must wait before its request; 0 when unlimited or a token is saved."""
        if self.qps is None:
            return 0.0
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps
