"""Per-user request rates from settings (Locust's helpers take the rate at class definition)."""

from __future__ import annotations

from locust import constant_pacing


def paced(user, per_second: float) -> float:
    """Seconds to wait so that one task starts every 1/per_second seconds (0 rate: wait a minute)."""
    if per_second <= 0:
        return 60.0
    return constant_pacing(1.0 / per_second)(user)
