"""Bootstrap intervals: Locust's quantile vectorised, intervals that cover, too few samples say so."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from harness.drivers import contract
from harness.results import summaries
from harness.stats import intervals
from loadtests import frames


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(1, 5000), st.integers(1, 50), min_size=1, max_size=30),
       st.sampled_from([0.0, 0.5, 0.9, 0.95, 0.99, 0.999]))
def test_vectorised_quantile_is_locusts(histogram, q):
    values = np.array(sorted(histogram), dtype=float)
    counts = np.array([histogram[v] for v in sorted(histogram)])
    assert intervals.locust_quantiles(values, counts, q)[0] == frames.percentile(histogram, q)


@pytest.mark.parametrize("metric, q", [("load.bystander_p99_ms", 0.99), ("load.position_query_p50_ms", 0.5),
                                       ("x_p99.9_ms", 0.999), ("apiserver.write_qps[churn]", None)])
def test_quantile_of_metric_name(metric, q):
    assert intervals.quantile_of(metric) == q


def _histogram(rng, requests, scale=1.0):
    return dict(Counter(float(v) for v in np.round(rng.lognormal(3.5, 0.3, requests) * scale)))


def test_p99_interval_from_1000_requests_covers_the_true_p99_mostly():
    true_p99 = float(np.exp(3.5 + 0.3 * 2.3263))
    covered = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        found = intervals.quantile_interval([[_histogram(rng, 1000)]], 0.99, rng, resamples=1000)
        assert found.n == 1000 and found.low <= found.value <= found.high
        covered += found.low - 1 <= true_p99 <= found.high + 1  # +/- 1 ms: the histogram rounds to whole ms
    assert covered >= 34  # 95% nominal; 40 trials leave room for chance


def test_too_few_requests_for_the_quantile_give_no_interval():
    rng = np.random.default_rng(0)
    assert intervals.quantile_interval([[_histogram(rng, 499)]], 0.99, rng).low is None
    assert intervals.quantile_interval([[_histogram(rng, 500)]], 0.99, rng).low is not None
    assert intervals.quantile_interval([[_histogram(rng, 20)]], 0.5, rng).low is not None


def test_worst_group_is_the_estimate_and_repeats_pool():
    rng = np.random.default_rng(1)
    slow, fast = _histogram(rng, 2000, scale=2.0), _histogram(rng, 2000)
    found = intervals.quantile_interval([[fast, slow], [fast, slow]], 0.5, rng, resamples=500)
    assert found.n == 8000 and found.value == pytest.approx(2 * np.exp(3.5), rel=0.05)


def test_disagreeing_repeats_widen_the_interval():
    rng = np.random.default_rng(2)
    alike = [[_histogram(rng, 1000)] for _ in range(3)]
    apart = [[_histogram(rng, 1000, scale)] for scale in (1.0, 1.5, 1.0)]
    width = [(e.high - e.low) for e in (intervals.quantile_interval(r, 0.99, rng, 1000) for r in (alike, apart))]
    assert width[1] > 2 * width[0]


@pytest.mark.parametrize("values, n, has_interval", [([], 0, False), ([5.0], 1, False), ([5.0, 6.0], 2, False),
                                                     ([5.0, 6.0, 7.0], 3, True), ([4.0, 4.0, 4.0], 3, True)])
def test_rates_over_repeats(values, n, has_interval):
    found = intervals.repeats_interval(values, np.random.default_rng(0))
    assert found.n == n and (found.low is not None) == has_interval
    if has_interval:
        assert found.low <= found.value == np.median(values) <= found.high


def test_a_count_spread_wide_gets_no_interval_below_zero():
    """The evictions of three repeats of one arm (399, 594, 312): the t-interval of the median reached -45."""
    found = intervals.repeats_interval([399.0, 594.0, 312.0], np.random.default_rng(0))
    assert found.low == 0.0 and found.high > 594
    signed = intervals.repeats_interval([-399.0, 594.0, 312.0], np.random.default_rng(0))
    assert signed.low < 0


def test_summary_entry_carries_interval_and_n_and_is_reproducible():
    rng = np.random.default_rng(4)
    hist = _histogram(rng, 1500)
    repeats = [contract.Metric("load.bystander_p99_ms", 0.0, "ms", "lower", (hist,))]
    first, again = summaries.estimate("load.bystander_p99_ms", "p", repeats), summaries.estimate(
        "load.bystander_p99_ms", "p", repeats)
    assert first == again and first.n == 1500 and first.low < first.value < first.high
    rates = [contract.Metric("apiserver.write_qps[churn]", v, "1/s", "lower") for v in (40.0, 44.0, 41.0)]
    entry = summaries.estimate("apiserver.write_qps[churn]", "p", rates)
    assert (entry.value, entry.n, entry.samples) == (41.0, 3, [40.0, 44.0, 41.0]) and entry.low < 41.0 < entry.high


def test_latency_without_histograms_falls_back_to_repeats():
    repeats = [contract.Metric("load.bystander_p99_ms", v, "ms", "lower") for v in (10.0, 12.0)]
    entry = summaries.estimate("load.bystander_p99_ms", "p", repeats)
    assert (entry.value, entry.low, entry.n) == (11.0, None, 2)


def test_every_group_needs_its_tail_not_just_the_pool():
    rng = np.random.default_rng(5)
    found = intervals.quantile_interval([[_histogram(rng, 5000), _histogram(rng, 60)]], 0.99, rng)
    assert found.n == 5060 and found.low is None
