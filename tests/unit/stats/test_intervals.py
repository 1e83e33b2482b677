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


@given(st.lists(st.floats(min_value=1e-4, max_value=1e4, allow_nan=False), min_size=3, max_size=9))
@settings(max_examples=60, deadline=None)
def test_a_ratio_interval_is_never_below_zero_and_holds_the_median(values):
    found = intervals.ratio_interval(values, np.random.default_rng(intervals.SEED), resamples=200)
    assert 0 < found.low <= found.value == np.median(values) <= found.high
    # symmetric in the multiplicative sense: value / f .. value * f
    assert found.value / found.low == pytest.approx(found.high / found.value, rel=1e-9)


def test_the_time_to_admission_ratio_that_reached_minus_3_is_positive_on_the_log_scale():
    """fair-100cq's large class, ours / Kueue per repeat: linear, 3.22 [-3.44, 9.89]."""
    samples = [3.2214189338306594, 0.7025166242161177, 4.936043475219696]
    linear = intervals.repeats_interval([-1.0, *samples[1:]], np.random.default_rng(0))
    assert linear.low < 0  # the linear scale for a signed figure, as before
    found = intervals.ratio_interval(samples, np.random.default_rng(intervals.SEED))
    assert 0 < found.low < 3.2214 < found.high


@pytest.mark.parametrize("values", [[0.0, 1.0, 2.0], [-0.5, 1.0, 2.0], [1.0, 2.0]])
def test_ratios_not_all_positive_or_too_few_are_intervals_over_repeats_as_before(values):
    assert intervals.ratio_interval(values, np.random.default_rng(1)) == intervals.repeats_interval(
        values, np.random.default_rng(1))


@pytest.mark.parametrize("unit, values", [("ratio", (1.31, 0.97, 1.14)), ("1/s", (40.0, 44.0, 41.0))])
def test_the_same_values_give_the_same_interval_whatever_the_metric_is_named(unit, values):
    repeats = [contract.Metric("x", v, unit, "lower") for v in values]
    one = summaries.estimate("ratio.visibility_p99.ours_over_proxy_ceiling", "kueue=v0.17.0", repeats)
    other = summaries.estimate("kueue.ratio_to_kueue.wall_seconds", "implementation=reference", repeats)
    assert (one.low, one.high, one.seed) == (other.low, other.high, other.seed) == (one.low, one.high, intervals.SEED)


def test_a_ratio_entry_redrawn_from_its_samples_changes_only_its_interval_and_seed():
    old = summaries.Entry("kueue.ratio_to_kueue.t", "p", 3.22, "ratio", "lower",
                          [3.2214189338306594, 0.7025166242161177, 4.936043475219696], -3.44, 9.89, 3)
    new = summaries.redraw_ratio(old)
    assert new.low > 0 and new.seed == intervals.SEED
    assert (new.value, new.samples, new.n, new.unit) == (old.value, old.samples, old.n, old.unit)
    repeats = [contract.Metric(old.metric, v, "ratio", "lower") for v in old.samples]
    fresh = summaries.estimate(old.metric, old.point, repeats)
    assert (new.low, new.high) == (fresh.low, fresh.high)
    rate = summaries.Entry("m", "p", 41.0, "1/s", "lower", [40.0, 44.0, 41.0], 30.0, 50.0, 3)
    assert summaries.redraw_ratio(rate) is rate
