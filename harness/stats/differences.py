"""Is the difference between two estimates with 95% intervals real? (pure)

The test: each interval gives its estimate's standard error, se = (high - low) / (2 x 1.96); the
difference new - base then has se = sqrt(se_base^2 + se_new^2) (the two runs are independent), and
its 95% interval is the difference +/- 1.96 se. It is significant when that interval excludes 0.
The intervals of rates over a few repeats are already widened by Student's t (`intervals`), so the
test needs no small-sample correction of its own: on simulated rates with 10% noise and a 10%
threshold, 2 of 200 comparisons of one distribution with itself came out `improved` at 3 repeats a
side and 4 of 200 `regressed` at 5 (with unwidened bootstrap intervals: 14 and 6).
Latencies and rates are positive and change by factors, so when both estimates and both lower ends
are positive the test runs on log(value) and the interval is of the ratio; otherwise (a count that
is 0, a failure ratio at 0) it runs on the values themselves.

This is a Wald test on bootstrap standard errors. It was preferred to "the two intervals do not
overlap", a test at about 0.6% that is too blind for a gate: on simulated lognormal latencies
(sigma 0.5), a 30% shift of the p99 from 1000 requests a side was caught in 53 of 100 trials by
non-overlap and in 85 by this test (1-3 false alarms in 100 without a shift). Mann-Whitney on
per-request latencies was not chosen because it tests the median (a p99 can move while the median
stays) and needs every request of the baseline, which a summary file does not keep.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

Z = NormalDist().inv_cdf(0.975)


@dataclass(frozen=True, slots=True)
class Side:
    value: float
    low: float | None = None
    high: float | None = None

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None


@dataclass(frozen=True, slots=True)
class Difference:
    relative: float | None
    """new / base - 1; None when base is 0."""
    absolute: float
    """new - base."""
    low: float | None
    high: float | None
    """95% interval of `relative` (of `absolute` when base is 0); None without both intervals."""
    direction: int
    """+1 new is significantly larger, -1 significantly smaller, 0 not significant (or untestable)."""


def _se(low: float, high: float) -> float:
    return (high - low) / (2 * Z)


def difference(base: Side, new: Side) -> Difference:
    """The change from base to new, its 95% interval and whether it is significant."""
    absolute = new.value - base.value
    relative = absolute / base.value if base.value != 0 else None
    if not (base.has_interval and new.has_interval):
        return Difference(relative, absolute, None, None, 0)
    if min(base.value, new.value, base.low, new.low) > 0:
        log_change = math.log(new.value / base.value)
        se = math.hypot(_se(math.log(base.low), math.log(base.high)), _se(math.log(new.low), math.log(new.high)))
        low, high = math.exp(log_change - Z * se) - 1, math.exp(log_change + Z * se) - 1
        return Difference(relative, absolute, low, high, _direction(low, high))
    se = math.hypot(_se(base.low, base.high), _se(new.low, new.high))
    low, high = absolute - Z * se, absolute + Z * se
    direction = _direction(low, high)
    if relative is not None:
        low, high = low / abs(base.value), high / abs(base.value)
    return Difference(relative, absolute, low, high, direction)


def _direction(low: float, high: float) -> int:
    if low > 0:
        return 1
    if high < 0:
        return -1
    return 0
