"""Counter increases, rates and histogram quantiles over scraped samples, as Prometheus computes them (pure)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from harness.metrics import samples

Bucket = tuple[float, float]
"""(upper bound `le`, cumulative count)."""


def increase(values: Sequence[float]) -> float:
    """How much a counter grew between its first and last observation; a drop is a restart from 0."""
    total = 0.0
    for previous, current in zip(values, values[1:]):
        total += current - previous if current >= previous else current
    return total


def series_increase(scrapes: Sequence[samples.Scrape], key: samples.SeriesKey) -> float:
    """Increase of one counter series over the scrapes of a phase (first scrape = phase start)."""
    observed = [s.values[key] for s in scrapes if key in s.values]
    if not observed:
        return 0.0
    # A series absent at the phase start was created by its first increment inside the phase:
    # labelled counters do not exist before then, so its first value counts in full.
    seen_at_start = key in scrapes[0].values
    return increase(observed) + (0.0 if seen_at_start else observed[0])


def rate(delta: float, seconds: float) -> float:
    """Per-second rate; NaN for an empty interval rather than a division by zero."""
    return delta / seconds if seconds > 0 else math.nan


def histogram_quantile(q: float, buckets: Iterable[Bucket]) -> float:
    """Prometheus' histogram_quantile: linear interpolation inside the bucket holding rank q*count.

    NaN without observations or without a +Inf bucket; the highest finite bound when the rank
    falls in +Inf (Prometheus does the same: the histogram cannot say more).
    """
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    ordered = _monotonic(sorted(buckets))
    if len(ordered) < 2 or not math.isinf(ordered[-1][0]) or ordered[-1][1] <= 0 or math.isnan(q):
        return math.nan
    rank = q * ordered[-1][1]
    index = next(i for i, (_, count) in enumerate(ordered) if count >= rank)
    if index == len(ordered) - 1:
        return ordered[-2][0]
    upper, count = ordered[index]
    if index == 0 and upper <= 0:
        return upper
    lower, below = (0.0, 0.0) if index == 0 else ordered[index - 1]
    in_bucket = count - below
    return upper if in_bucket <= 0 else lower + (upper - lower) * (rank - below) / in_bucket


def _monotonic(ordered: list[Bucket]) -> list[Bucket]:
    """Cumulative counts never decrease; a restart inside a phase can make their increases do so."""
    fixed, highest = [], 0.0
    for le, count in ordered:
        highest = max(highest, count)
        fixed.append((le, highest))
    return fixed


def bucket_increases(scrapes: Sequence[samples.Scrape], metric: str,
                     by: tuple[str, ...]) -> dict[samples.Labels, list[Bucket]]:
    """Per group of `by` labels: increase of each cumulative bucket over the phase, summed across the other labels."""
    bucket_name = metric + "_bucket"
    keys = {k for s in scrapes for k in s.values if k[0] == bucket_name}
    grouped: dict[samples.Labels, dict[float, float]] = {}
    for key in keys:
        labels = dict(key[1])
        le = float(labels.pop("le"))
        group = _group(labels, by)
        counts = grouped.setdefault(group, {})
        counts[le] = counts.get(le, 0.0) + series_increase(scrapes, key)
    return {group: sorted(counts.items()) for group, counts in grouped.items()}


def summed_increases(scrapes: Sequence[samples.Scrape], metric: str,
                     by: tuple[str, ...]) -> dict[samples.Labels, float]:
    """Increase of a counter (or a histogram's _sum/_count) per group of `by` labels."""
    keys = {k for s in scrapes for k in s.values if k[0] == metric}
    grouped: dict[samples.Labels, float] = {}
    for key in keys:
        group = _group(dict(key[1]), by)
        grouped[group] = grouped.get(group, 0.0) + series_increase(scrapes, key)
    return grouped


def _group(labels: dict[str, str], by: tuple[str, ...]) -> samples.Labels:
    if not by:
        return samples.labels_of(labels)
    return tuple((name, labels.get(name, "")) for name in sorted(by))
