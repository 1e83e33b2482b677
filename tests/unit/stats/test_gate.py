"""The gate on synthetic data: noise is not a regression, a real p99 shift is; a step in the history
is one change point at its night, a flat history has none."""

from __future__ import annotations

from collections import Counter

import numpy as np

from harness.drivers import contract
from harness.reporting import comparing
from harness.results import summaries
from harness.stats import changepoints

P99 = "load.bystander_p99_ms"
RULES = comparing.Thresholds(schema_version=1, thresholds=[
    comparing.Threshold(metric="load.*_p99_ms", max_regression=0.1, why="test: 10% matters"),
    comparing.Threshold(metric="apiserver.*", max_regression=0.1, why="test: 10% matters"),
])


def _latencies(rng: np.random.Generator, requests: int, scale: float = 1.0) -> dict[float, int]:
    """A Locust-like histogram: lognormal response times around 33 ms, rounded to whole ms."""
    return dict(Counter(float(v) for v in np.round(rng.lognormal(3.5, 0.3, requests) * scale)))


def _summary(metric: str, repeats: list[contract.Metric]) -> summaries.Summary:
    entry = summaries.estimate(metric, "p", repeats)
    return summaries.Summary("r", "s", "ok", {entry.key: entry})


def _p99(histograms: list[dict[float, int]]) -> summaries.Summary:
    return _summary(P99, [contract.Metric(P99, 0.0, "ms", "lower", (h,)) for h in histograms])


def test_one_distribution_is_same_or_inconclusive_in_at_least_95_of_100_trials():
    verdicts = Counter()
    for seed in range(100):
        rng = np.random.default_rng(seed)
        rows = comparing.compare(_p99([_latencies(rng, 1000)]), _p99([_latencies(rng, 1000)]), RULES)
        verdicts.update(row.verdict for row in rows)
    assert verdicts["same"] + verdicts["inconclusive"] >= 95, verdicts
    assert set(verdicts) <= {"same", "inconclusive", "regressed", "improved"}


def test_rates_of_one_distribution_over_repeats_are_same_or_inconclusive():
    verdicts = Counter()
    for seed in range(100):
        rng = np.random.default_rng(seed)
        base, new = ([contract.Metric("apiserver.write_qps[churn]", float(v), "1/s", "lower")
                      for v in rng.normal(40, 4, 5)] for _ in range(2))
        rows = comparing.compare(_summary("apiserver.write_qps[churn]", base),
                                 _summary("apiserver.write_qps[churn]", new), RULES)
        verdicts.update(row.verdict for row in rows)
    assert verdicts["same"] + verdicts["inconclusive"] >= 95, verdicts


def test_a_30_percent_slower_p99_from_1000_requests_each_is_regressed():
    for seed in range(20):
        rng = np.random.default_rng(seed)
        base, new = _p99([_latencies(rng, 1000)]), _p99([_latencies(rng, 1000, scale=1.3)])
        [row] = comparing.compare(base, new, RULES)
        assert row.verdict == "regressed", (seed, row)
        assert row.test == "significant" and row.change_low > 0 and row.base_n == row.new_n == 1000
        assert comparing.failed([row])


def test_a_30_percent_faster_p99_is_improved_and_does_not_fail():
    rng = np.random.default_rng(7)
    [row] = comparing.compare(_p99([_latencies(rng, 1000)]), _p99([_latencies(rng, 1000, scale=1 / 1.3)]), RULES)
    assert row.verdict == "improved" and not comparing.failed([row])


def test_a_p99_from_too_few_requests_is_inconclusive_not_regressed():
    rng = np.random.default_rng(3)
    [row] = comparing.compare(_p99([_latencies(rng, 200)]), _p99([_latencies(rng, 200, scale=1.5)]), RULES)
    assert (row.verdict, row.test, row.new_n) == ("inconclusive", "too few samples", 200)


def _nights(rng: np.random.Generator, step_at: int | None) -> np.ndarray:
    series = rng.normal(100.0, 5.0, 30)
    if step_at is not None:
        series[step_at:] += 20.0  # 4 noise sigmas: a 20% slowdown on a metric with 5% night-to-night noise
    return series


def test_a_step_at_night_20_of_30_is_one_change_point_at_20():
    for seed in range(30):
        found = changepoints.detect(_nights(np.random.default_rng(seed), 20))
        assert len(found) == 1 and abs(found[0].index - 20) <= 1, (seed, found)
        assert found[0].after > found[0].before


def test_a_flat_noisy_series_has_no_change_point():
    for seed in range(50):
        assert changepoints.detect(_nights(np.random.default_rng(seed), None)) == [], seed
