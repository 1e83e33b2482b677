"""Counter increases and histogram quantiles, on hand-made series and on recorded scrapes."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from harness.metrics import prommath, samples
from tests.unit.metrics import recorded

INF = math.inf


@pytest.mark.parametrize("values, expected", [
    ([], 0.0),
    ([5.0], 0.0),
    ([1.0, 3.0, 7.0], 6.0),
    ([5.0, 8.0, 2.0, 4.0], 7.0),  # restarted after 8: counted 3, then 2 from zero, then 2
    ([3.0, 3.0, 3.0], 0.0),
])
def test_increase_counts_growth_across_restarts(values, expected):
    assert prommath.increase(values) == expected


def _scrapes(*values_by_t):
    key = ("c_total", ())
    return [samples.Scrape("apiserver", t, {} if v is None else {key: v}) for t, v in enumerate(values_by_t)], key


@pytest.mark.parametrize("values, expected", [
    ((10.0, 15.0), 5.0),
    ((None, 4.0), 4.0),          # created inside the phase by its first increment
    ((None, None, 2.0, 5.0), 5.0),
    ((10.0, None, 12.0), 2.0),    # a failed scrape in between changes nothing
    ((None, None), 0.0),
])
def test_series_increase(values, expected):
    scrapes, key = _scrapes(*values)
    assert prommath.series_increase(scrapes, key) == expected


@pytest.mark.parametrize("q, buckets, expected", [
    (0.5, [(1.0, 10.0), (2.0, 20.0), (INF, 20.0)], 1.0),
    (0.75, [(1.0, 10.0), (2.0, 20.0), (INF, 20.0)], 1.5),
    (0.25, [(1.0, 10.0), (2.0, 20.0), (INF, 20.0)], 0.5),  # first bucket interpolates from 0
    (0.99, [(1.0, 10.0), (2.0, 10.0), (INF, 20.0)], 2.0),  # rank in +Inf: highest finite bound
    (0.5, [(1.0, 0.0), (INF, 0.0)], math.nan),              # no observations
    (0.5, [(1.0, 5.0), (2.0, 10.0)], math.nan),             # no +Inf bucket
    (-0.1, [(1.0, 5.0), (INF, 5.0)], -INF),
    (1.1, [(1.0, 5.0), (INF, 5.0)], INF),
    (0.5, [(2.0, 20.0), (INF, 20.0), (1.0, 10.0)], 1.0),   # order of buckets does not matter
    (0.5, [(1.0, 10.0), (2.0, 8.0), (INF, 20.0)], 1.0),    # non-monotonic counts are lifted
])
def test_histogram_quantile(q, buckets, expected):
    got = prommath.histogram_quantile(q, buckets)
    assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected)


bucket_counts = st.lists(st.integers(min_value=0, max_value=50), min_size=1, max_size=12)


@given(bucket_counts, st.floats(min_value=0.01, max_value=1.0), st.floats(min_value=0.01, max_value=1.0))
def test_quantile_is_monotonic_in_q_and_inside_the_finite_range(increments, q1, q2):
    bounds = [0.005 * 2 ** i for i in range(len(increments))]
    cumulative, running = [], 0
    for bound, add in zip(bounds, increments):
        running += add
        cumulative.append((bound, float(running)))
    buckets = cumulative + [(INF, float(running))]
    low, high = sorted((q1, q2))
    if running == 0:
        assert math.isnan(prommath.histogram_quantile(low, buckets))
        return
    assert prommath.histogram_quantile(low, buckets) <= prommath.histogram_quantile(high, buckets)
    assert 0.0 <= prommath.histogram_quantile(high, buckets) <= bounds[-1]


def test_recorded_request_counts_between_two_scrapes():
    """20 POSTs, 3 LISTs, 10 DELETEs (+10 GETs answering 404) of configmaps happened between them."""
    scrapes = [recorded.scrape(recorded.APISERVER, "before", 0.0), recorded.scrape(recorded.APISERVER, "after", 30.0)]
    increase = {verb_code: prommath.series_increase(scrapes, recorded.request(*verb_code))
                for verb_code in [("POST", "201", "resource"), ("LIST", "200", "namespace"),
                                  ("DELETE", "200", "resource"), ("GET", "404", "resource")]}
    # 21 POSTs: kube-controller-manager also published kube-root-ca.crt into the new namespace.
    assert increase == {("POST", "201", "resource"): 21.0, ("LIST", "200", "namespace"): 3.0,
                        ("DELETE", "200", "resource"): 10.0, ("GET", "404", "resource"): 10.0}


def test_recorded_histogram_buckets_give_counts_and_bounded_quantiles():
    scrapes = [recorded.scrape(recorded.APISERVER, "before", 0.0), recorded.scrape(recorded.APISERVER, "after", 30.0)]
    by = ("verb", "resource", "scope")
    buckets = prommath.bucket_increases(scrapes, "apiserver_request_duration_seconds", by)
    counts = prommath.summed_increases(scrapes, "apiserver_request_duration_seconds_count", by)
    key = recorded.labels(resource="configmaps", scope="namespace", verb="LIST")
    assert counts[key] == 3.0
    assert buckets[key][-1] == (INF, 3.0)
    first_full = next(le for le, count in buckets[key] if count == 3.0)
    p99 = prommath.histogram_quantile(0.99, buckets[key])
    assert 0.0 < p99 <= first_full


def test_rate_of_an_empty_interval_is_nan():
    assert math.isnan(prommath.rate(5.0, 0.0))
    assert prommath.rate(6.0, 3.0) == 2.0
