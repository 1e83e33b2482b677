"""Kueue's requeue backoff (pkg/util/wait ``NewBackoff(base, max, 2, 0.0001).WaitTime``), stepped as
apimachinery's ``wait.Backoff.Step`` steps it: the one wait both a PodsReady timeout
(scheduler.core.podsready) and an admission check in Retry (scheduler.core.admissionchecks) back off by.
"""

from __future__ import annotations

NS = 1_000_000_000
JITTER_FACTOR = 0.0001
"""wait.NewBackoff(..., 2, 0.0001): the jitter adds up to 0.01% of the wait."""
UNCAPPED_NS = 2**62
"""NewBackoff's cap when the maximum is 0: time.Duration(math.MaxInt64 / 2.0)."""
_INT64 = 2**63


def wait_time_ns(base_seconds: int, max_seconds: int, iteration: int, draw: float) -> int:
    """The backoff of the ``iteration``-th try, in nanoseconds.

    Step 1 is the base itself (even above the cap), each next one doubles and is capped at ``max_seconds``
    when that is positive (0 leaves it at MaxInt64/2; a negative cap never applies); the kept step gets the
    jitter ``Duration(draw x 0.0001 x d)`` for a uniform ``draw`` in [0, 1) (wait.Jitter; the earlier steps'
    jitter is discarded). An iteration below 1 steps nothing: 0.
    """
    if not 0.0 <= draw < 1.0:
        raise ValueError(f"draw must be in [0, 1) (got {draw}): pass random.random()")
    if iteration < 1:
        return 0
    cap = max_seconds * NS or UNCAPPED_NS
    duration = base_seconds * NS
    for _ in range(iteration - 1):
        following = int(float(duration) * 2.0)  # delay(): next = Duration(float64(d) * factor), capped
        if cap > 0 and following > cap:
            following = cap
        if following == duration:
            break  # no later step changes it (0 or the cap)
        if abs(following) >= _INT64:
            raise ValueError(f"the backoff overflows time.Duration at {base_seconds} s x 2^n: Go's result is "
                             "implementation-defined")
        duration = following
    return duration + int(draw * JITTER_FACTOR * float(duration))
