"""Latencies at microsecond resolution: the HDR histogram format kqbench records and reads (pure).

Locust keeps response times rounded to whole milliseconds below 100 ms (2 significant digits
above), so a p50 of 3-6 ms can only move in steps of 17-33%. Every request's latency is also
recorded here, in an HDR histogram (the `hdrhistogram` package): integer microseconds, 3 significant
digits (a bucket is at most 1/1024 of its value: 1 us below 2.048 ms, 2 us up to 4.096 ms, ...),
fixed memory whatever the request count, and histograms of several workers or repeats add up
exactly. A histogram travels and is stored as HDR's own compressed base64 text (`encode`), the
format other HDR tools read.

This module is the one place that knows the format (unit, range, precision) and both resolutions:
`hdr_step_ms` (what is recorded here) and `locust_step_ms` (Locust's rounding), so that no interval
is drawn narrower than the data it comes from can show.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from hdrh.histogram import HdrHistogram

UNIT = "us"
LOWEST_US = 1
HIGHEST_US = 3_600_000_000
"""One hour: longer requests (a watch held open) are recorded as one hour."""
SIGNIFICANT_DIGITS = 3
_SUB_BUCKET_MAGNITUDE = math.ceil(math.log2(2 * 10 ** SIGNIFICANT_DIGITS)) - 1
"""HDR's sub_bucket_half_count_magnitude: values below 2^(this + 1) us are kept to the microsecond."""


def new() -> HdrHistogram:
    return HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_DIGITS)


def record(histogram: HdrHistogram, milliseconds: float) -> None:
    """Add one latency given in (fractional) milliseconds, as Locust reports it."""
    histogram.record_value(min(HIGHEST_US, max(0, round(milliseconds * 1000.0))))


def encode(histogram: HdrHistogram) -> str:
    """HDR's compressed base64 text of the histogram (`HISTF...`)."""
    return histogram.encode().decode("ascii")


def decode(text: str) -> HdrHistogram:
    """A histogram from `encode`'s text, re-based on this module's range (so that any two add up)."""
    merged = new()
    merged.decode_and_add(text.encode("ascii") if isinstance(text, str) else text)
    return merged


def merge(texts: Iterable[str]) -> HdrHistogram:
    """The sum of encoded histograms (workers of one run, repeats of one point): exact, counts add."""
    merged = new()
    for text in texts:
        merged.decode_and_add(text.encode("ascii") if isinstance(text, str) else text)
    return merged


def counts_ms(histogram: HdrHistogram) -> dict[float, int]:
    """Recorded values as {milliseconds: requests}, each bucket at its midpoint (exact below 2 ms)."""
    out: dict[float, int] = {}
    for item in histogram.get_recorded_iterator():
        highest = item.value_iterated_to
        lowest = histogram.get_lowest_equivalent_value(highest)
        out[(lowest + highest) / 2000.0] = out.get((lowest + highest) / 2000.0, 0) + int(item.count_at_value_iterated_to)
    return out


def hdr_step_ms(value_ms: float) -> float:
    """Width of the HDR bucket holding `value_ms`, in ms: the smallest change this recording can show there."""
    microseconds = max(1, int(value_ms * 1000.0))
    return 2.0 ** max(0, int(math.log2(microseconds)) - _SUB_BUCKET_MAGNITUDE) / 1000.0


def locust_step_ms(value_ms: float) -> float:
    """Locust's rounding step at `value_ms` (its `bucket_response_time`): 1 ms below 100 ms, then 2 significant digits."""
    if value_ms < 100:
        return 1.0
    if value_ms < 1000:
        return 10.0
    if value_ms < 10000:
        return 100.0
    return 1000.0
