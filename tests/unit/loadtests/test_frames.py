"""Stats snapshots become per-interval and per-run frames; failure reasons are cleaned and merged."""

from __future__ import annotations

import math

import pytest

from loadtests import frames


def entry(name="GET configmaps bystander", verb="GET", requests=0, failures=0, size=0, total_ms=0.0, **histogram):
    hist = {int(k[2:]): v for k, v in histogram.items()}  # ms10=3 -> {10: 3}
    return frames.EntrySnapshot(verb, name, requests, failures, size, total_ms, hist)


@pytest.mark.parametrize("histogram, q, expected", [
    ({10: 100}, 0.5, 10),
    ({1: 50, 100: 50}, 0.49, 1),
    ({1: 50, 100: 50}, 0.5, 100),   # Locust's nearest rank rounds up at the boundary
    ({1: 99, 1000: 1}, 0.98, 1),
    ({1: 99, 1000: 1}, 0.99, 1000),
    ({}, 0.5, math.nan),
])
def test_percentile(histogram, q, expected):
    value = frames.percentile(histogram, q)
    assert (math.isnan(value) and math.isnan(expected)) or value == expected


def test_history_has_exact_interval_percentiles_and_rates():
    samples = [
        frames.Sample(1.0, (entry(requests=10, size=100, ms5=10),)),
        frames.Sample(2.0, (entry(requests=30, failures=2, size=400, ms5=10, ms50=20),)),
        frames.Sample(4.0, (entry(requests=30, failures=2, size=400, ms5=10, ms50=20),)),
    ]
    history = frames.history(samples)
    assert list(history.columns) == frames.HISTORY_COLUMNS
    assert list(history["requests"]) == [10, 20, 0]
    assert list(history["failures"]) == [0, 2, 0]
    assert list(history["rps"]) == [10.0, 20.0, 0.0]
    assert list(history["bytes"]) == [100, 300, 0]
    assert history["p50_ms"].iloc[0] == 5 and history["p50_ms"].iloc[1] == 50  # second interval: only 50 ms
    assert math.isnan(history["p99_ms"].iloc[2])


def test_names_that_appear_later_start_from_zero():
    samples = [
        frames.Sample(1.0, (entry(requests=5, ms1=5),)),
        frames.Sample(2.0, (entry(requests=5, ms1=5), entry(name="LIST pods rv0", verb="LIST", requests=3, ms9=3))),
    ]
    history = frames.history(samples)
    late = history[history["name"] == "LIST pods rv0"]
    assert list(late["requests"]) == [3] and late["verb"].iloc[0] == "LIST"


def test_totals():
    final = frames.Sample(10.0, (entry(requests=100, failures=5, size=1000, total_ms=950.0, ms5=90, ms50=5),
                                 entry(name="LIST pods rv0", verb="LIST", requests=10, total_ms=10.0, ms1=10)))
    totals = frames.totals(final).set_index("name")
    assert list(frames.totals(final).columns) == frames.TOTALS_COLUMNS
    row = totals.loc["GET configmaps bystander"]
    assert (row.requests, row.failures, row.successes, row.rps, row.bytes) == (100, 5, 95, 10.0, 1000)
    assert row.mean_ms == pytest.approx(10.0) and row.p50_ms == 5 and row.max_ms == 50


@pytest.mark.parametrize("error, reason", [
    ("CatchResponseError('404 NotFound')", "404 NotFound"),
    ('CatchResponseError("503 visibility.kueue.x-k8s.io not served")', "503 visibility.kueue.x-k8s.io not served"),
    ("ConnectionRefusedError(111, 'Connection refused')", "ConnectionRefusedError(111, 'Connection refused')"),
    ("  stream ended before the initial-events-end bookmark ", "stream ended before the initial-events-end bookmark"),
])
def test_reasons_are_unwrapped(error, reason):
    assert frames.clean_reason(error) == reason


def test_failures_merge_by_reason():
    table = frames.failures([
        ("GET", "GET x m", "CatchResponseError('404 NotFound')", 3),
        ("GET", "GET x m", "404 NotFound", 2),
        ("GET", "GET x m", "CatchResponseError('503 ServiceUnavailable')", 1),
    ])
    assert table.to_dict("records") == [
        {"verb": "GET", "name": "GET x m", "reason": "404 NotFound", "occurrences": 5},
        {"verb": "GET", "name": "GET x m", "reason": "503 ServiceUnavailable", "occurrences": 1},
    ]


def test_latencies_are_the_whole_run_histogram_per_name():
    final = frames.Sample(4.0, (entry(requests=30, ms5=10, ms50=20), entry("GET x query", requests=1, ms7=1, ms9=0)))
    latencies = frames.latencies(final)
    assert list(latencies.columns) == frames.LATENCY_COLUMNS
    assert latencies.values.tolist() == [["GET", "GET configmaps bystander", 5, 10],
                                         ["GET", "GET configmaps bystander", 50, 20], ["GET", "GET x query", 7, 1]]
