"""95% bootstrap intervals of a summary's estimates (pure: numbers in, numbers out).

- Latency quantiles: over requests. Locust keeps no per-request latencies, only a histogram of
  response times rounded to 2 significant digits above 100 ms, so requests are resampled from that
  histogram (a multinomial draw with its counts; request by request when it has nearly a value per
  request, as HDR's microseconds do: the same resample, cheaper), and the quantile is Locust's own
  nearest rank.
  With several repeats the bootstrap first resamples the repeats, then the requests in each (a
  two-level bootstrap), so the interval also holds the run-to-run spread, which on a shared machine
  is larger than the sampling noise of one run.
- Rates and counts: over repeats: the median (the summary's estimate) +/- Student's t for n - 1
  times its standard error from scipy's bootstrap. Ratios of positive numbers the same way on the
  log scale (`ratio_interval`): value x/÷ a factor, never below zero.
- Every draw is seeded with SEED, so an interval is a function of its numbers alone.
- No interval is narrower than the resolution of what it measures (`widen`): a quantile read from
  Locust's whole milliseconds is known to +/- half a millisecond however many requests agree on
  it, and a bootstrap over such a histogram often gives an interval of zero width (3 ms [3, 3]),
  which made a one-step shift "significant". The histograms may as well be HDR ones (microseconds):
  the same code reads them, and their step (about 0.1% of the value) rarely widens anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

CONFIDENCE = 0.95
RESAMPLES = 2000
"""Bootstrap resamples: the interval's ends move by well under 1% between seeds at this count."""
MIN_TAIL_REQUESTS = 5
"""A quantile q needs n * (1 - q) >= this many requests above it (500 for a p99) in every request
group it is the worst of: with fewer, its interval rests on two or three requests and says nothing."""
COUNTS_PER_DRAW = 20
"""Resample by multinomial draws over the distinct values when there are fewer than 1/20 as many
values as requests per repeat, else draw requests (`_drawn_quantiles`). Measured, 4 groups x 3
repeats, p50, 2000 resamples: Locust's whole ms (about 30 values) at 1,200 requests 0.06 s
multinomial vs 0.23 s drawn, at 20,000 0.06 vs 5.1 s; HDR (a value per request or two) at 1,200
3.9 s vs 0.47 s, at 20,000 (about 2,500 values) 15.3 s vs 5.3 s."""
DRAWS_PER_BLOCK = 4_000_000
"""Ranks drawn at once (32 MB): a run with 100k requests in a group is drawn 40 resamples at a time."""
SEED = 0
"""The bootstrap's seed for every estimate. One fixed seed rather than one from the metric's name, so the same
values give the same interval under any name (a name-derived seed gave [0.85, 1.43] and [0.86, 1.42] for one
set of values); rather than one from the values, since histograms have no cheap canonical bytes to hash and the
fixed seed already makes the interval a function of the values. Recorded beside each interval it drew."""
MIN_REPEATS = 3
"""Repeats a rate needs for an interval: with 2 the median's bootstrap interval is the pair itself."""
_QUANTILE_NAME = re.compile(r"_p(\d{1,2}(?:\.\d+)?)_ms$")

Histogram = Mapping[float, int]
"""Response time (ms) -> requests."""


@dataclass(frozen=True, slots=True)
class Estimate:
    value: float
    low: float | None
    high: float | None
    n: int


def quantile_of(metric: str) -> float | None:
    """The quantile a latency metric name states (`load.bystander_p99_ms` -> 0.99), else None."""
    match = _QUANTILE_NAME.search(metric)
    return round(float(match.group(1)) / 100, 6) if match else None


def enough_requests(q: float, n: int) -> bool:
    return n * (1.0 - q) >= MIN_TAIL_REQUESTS


def has_quantile(q: float, n: int) -> bool:
    """Whether n requests have a q-quantile apart from their maximum: at least one request above it
    (100 for a p99). With fewer, a "p99" is the slowest request and is shown as that."""
    return n * (1.0 - q) >= 1.0 - 1e-9


def locust_quantiles(values: np.ndarray, counts: np.ndarray, q: float) -> np.ndarray:
    """Locust's nearest-rank q-quantile of each row of `counts` over ascending `values`.

    Locust walks down from the largest value and returns the first whose requests below it are at
    most int(total * q): the largest index k with sum(counts[:k]) <= rank."""
    counts = np.atleast_2d(counts)
    below = np.cumsum(counts, axis=1) - counts
    rank = np.floor(counts.sum(axis=1) * q)
    index = (below <= rank[:, None]).sum(axis=1) - 1
    return values[np.clip(index, 0, len(values) - 1)]


def _grid(histograms: Sequence[Histogram]) -> tuple[np.ndarray, np.ndarray]:
    values = np.array(sorted({float(v) for h in histograms for v, c in h.items() if c > 0}))
    position = {v: i for i, v in enumerate(values)}
    counts = np.zeros((len(histograms), len(values)), dtype=np.int64)
    for row, histogram in enumerate(histograms):
        for v, c in histogram.items():
            if c > 0:
                counts[row, position[float(v)]] += int(c)
    return values, counts


def worst_quantile(histograms: Sequence[Histogram], q: float) -> float:
    """The largest nearest-rank q-quantile over the groups' histograms (a latency metric's per-case value)."""
    found = [float(locust_quantiles(values, counts, q)[0])
             for values, counts in (_grid([h]) for h in histograms) if counts.sum() > 0]
    return max(found) if found else float("nan")


def widen(found: Estimate, step: Callable[[float], float] | None) -> Estimate:
    """The interval widened to at least value +/- half of one `step` at the value (the data's resolution).

    Unchanged without an interval or a step. A non-negative interval stays non-negative."""
    if step is None or found.low is None or found.high is None or not np.isfinite(found.value):
        return found
    half = step(found.value) / 2.0
    low, high = min(found.low, found.value - half), max(found.high, found.value + half)
    if found.low >= 0:
        low = max(0.0, low)
    return Estimate(found.value, low, high, found.n)


def quantile_interval(repeats: Sequence[Sequence[Histogram]], q: float, rng: np.random.Generator,
                      resamples: int = RESAMPLES) -> Estimate:
    """Estimate and interval of max over groups of the q-quantile, pooling each group's requests over repeats.

    `repeats[r][g]` is group g's histogram in repeat r (a group is one request name: the summary's
    latency metrics are the worst name's quantile). No interval when a group's pool is too small."""
    groups = max((len(r) for r in repeats), default=0)
    grids = [_grid([r[g] if g < len(r) else {} for r in repeats]) for g in range(groups)]
    grids = [(values, counts) for values, counts in grids if counts.sum() > 0]
    if not grids:
        return Estimate(float("nan"), None, None, 0)
    value = max(float(locust_quantiles(values, counts.sum(axis=0), q)[0]) for values, counts in grids)
    n = int(sum(counts.sum() for _, counts in grids))
    # The estimate is the worst group's quantile: any group may be it, so each needs its tail.
    if not all(enough_requests(q, int(counts.sum())) for _, counts in grids):
        return Estimate(value, None, None, n)
    picks = _pick_repeats(len(repeats), rng, resamples)
    times = np.stack([(picks == r).sum(axis=1) for r in range(len(repeats))], axis=1)
    worst = np.full(resamples, -np.inf)
    for values, counts in grids:
        # Few distinct values (Locust's rounding): multinomial draws over them; many (HDR's microseconds,
        # often one value per request): drawing requests is cheaper (see COUNTS_PER_DRAW).
        if len(values) * COUNTS_PER_DRAW < counts.sum(axis=1).mean():
            quantiles = _multinomial_quantiles(values, counts, times, q, rng)
        else:
            quantiles = _drawn_quantiles(values, counts, times, q, rng)
        worst = np.maximum(worst, quantiles)
    worst = worst[np.isfinite(worst)]
    alpha = (1 - CONFIDENCE) / 2
    return Estimate(value, float(np.quantile(worst, alpha)), float(np.quantile(worst, 1 - alpha)), n)


def _multinomial_quantiles(values: np.ndarray, counts: np.ndarray, times: np.ndarray, q: float,
                           rng: np.random.Generator) -> np.ndarray:
    """Each resample's pooled q-quantile: per pick of repeat r, a multinomial draw over its histogram."""
    resamples = len(times)
    pooled = np.zeros((resamples, len(values)), dtype=np.int64)
    for r, row in enumerate(counts):
        total = int(row.sum())
        if total == 0 or not times[:, r].any():
            continue
        # Each time repeat r is picked, its requests are drawn again from its own histogram.
        for k in range(1, int(times[:, r].max()) + 1):
            chosen = times[:, r] >= k
            pooled[chosen] += rng.multinomial(total, row / total, size=int(chosen.sum()))
    has_requests = pooled.sum(axis=1) > 0
    quantiles = np.full(resamples, -np.inf)
    quantiles[has_requests] = locust_quantiles(values, pooled[has_requests], q)
    return quantiles


def _drawn_quantiles(values: np.ndarray, counts: np.ndarray, times: np.ndarray, q: float,
                     rng: np.random.Generator) -> np.ndarray:
    """The same resamples as `_multinomial_quantiles`, drawn request by request.

    Every request of every repeat gets its rank among all of them (ties in value keep one order);
    a resample draws, for each pick of repeat r, n_r of r's ranks with replacement, and its nearest-rank
    quantile is the value of its k-th smallest rank (ranks and values are in the same order).
    Resamples with the same picks are drawn together, in blocks of at most DRAWS_PER_BLOCK ranks."""
    resamples = len(times)
    quantiles = np.full(resamples, -np.inf)
    ordered = np.repeat(np.tile(values, len(counts)), counts.ravel())
    owner = np.repeat(np.repeat(np.arange(len(counts)), len(values)), counts.ravel())
    order = np.argsort(ordered, kind="stable")
    ordered, owner = ordered[order], owner[order]
    ranks = [np.flatnonzero(owner == r) for r in range(len(counts))]
    patterns, which = np.unique(times, axis=0, return_inverse=True)
    for index, pattern in enumerate(patterns):
        members = np.flatnonzero(which.ravel() == index)
        size = int(sum(t * len(ranks[r]) for r, t in enumerate(pattern)))
        if size == 0:
            continue
        k = min(int(np.floor(size * q)), size - 1)
        block = max(1, DRAWS_PER_BLOCK // size)
        for start in range(0, len(members), block):
            chosen = members[start:start + block]
            drawn = np.concatenate([ranks[r][rng.integers(0, len(ranks[r]), size=(len(chosen), t * len(ranks[r])))]
                                    for r, t in enumerate(pattern) if t and len(ranks[r])], axis=1)
            quantiles[chosen] = ordered[np.partition(drawn, k, axis=1)[:, k]]
    return quantiles


def _pick_repeats(repeats: int, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """Which repeats each resample takes: all of them once when there is one, else drawn with replacement."""
    if repeats == 1:
        return np.zeros((resamples, 1), dtype=np.int64)
    return rng.integers(0, repeats, size=(resamples, repeats))


def repeats_interval(values: Sequence[float], rng: np.random.Generator, resamples: int = RESAMPLES) -> Estimate:
    """Median of the repeats and its bootstrap interval; no interval below MIN_REPEATS repeats."""
    data = np.asarray([v for v in values if np.isfinite(v)], dtype=float)
    if len(data) == 0:
        return Estimate(float("nan"), None, None, 0)
    value = float(np.median(data))
    if len(data) < MIN_REPEATS:
        return Estimate(value, None, None, len(data))
    half = _median_half_width(data, rng, resamples)
    # A quantity never seen below zero (a count, a time, a size) gets no interval below zero.
    low = max(value - half, 0.0) if data.min() >= 0 else value - half
    return Estimate(value, low, value + half, len(data))


def ratio_interval(values: Sequence[float], rng: np.random.Generator, resamples: int = RESAMPLES) -> Estimate:
    """Median of repeated ratios and its interval found on log(values): value / f to value * f, f >= 1.

    A ratio's spread is multiplicative (0.5 and 2 are as far from 1), and on the linear scale a ratio
    of two noisy times reached below zero (3.22 [-3.44, 9.89]); on the log scale the interval stays
    positive and always holds the median. Values not all positive: `repeats_interval` as it is."""
    data = np.asarray([v for v in values if np.isfinite(v)], dtype=float)
    if len(data) < MIN_REPEATS or data.min() <= 0:
        return repeats_interval(values, rng, resamples)
    value = float(np.median(data))
    # Centred on the log of the median itself (for an even count the median of the logs is the geometric
    # mean of the middle two, not the median), so the interval always holds the reported value.
    factor = float(np.exp(_median_half_width(np.log(data), rng, resamples)))
    return Estimate(value, value / factor, value * factor, len(data))


def _median_half_width(data: np.ndarray, rng: np.random.Generator, resamples: int) -> float:
    """Half the width of the 95% interval of the median of `data` (at least MIN_REPEATS finite values)."""
    if np.ptp(data) == 0:
        return 0.0
    # The median of a few repeats has a lumpy bootstrap distribution whose percentiles are about the
    # range (75% coverage for 3 repeats): its standard error with Student's t for n - 1 is honest.
    result = stats.bootstrap((data,), np.median, confidence_level=CONFIDENCE, n_resamples=resamples,
                             method="percentile", random_state=rng)
    return float(stats.t.ppf(0.5 + CONFIDENCE / 2, len(data) - 1)) * float(result.standard_error)
