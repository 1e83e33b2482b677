"""HDR latency histograms: recording, encoding, merging across workers and repeats, resolution steps."""

from __future__ import annotations

import numpy as np
import pytest

from harness.stats import intervals
from loadtests import histograms, recording


def _recorded(values_ms) -> recording.Recorder:
    recorder = recording.Recorder()
    for value in values_ms:
        recorder.on_request(request_type="GET", name="GET x mode", response_time=value, response_length=0)
    return recorder


def test_latencies_keep_microseconds_where_locust_keeps_milliseconds():
    histogram = histograms.new()
    for value in (3.2, 3.204, 3.9):
        histograms.record(histogram, value)
    counts = histograms.counts_ms(histograms.decode(histograms.encode(histogram)))
    assert sorted(counts) == pytest.approx([3.2005, 3.2045, 3.9005])  # 2 us buckets here, at their midpoints
    assert sum(counts.values()) == 3


def test_merged_histograms_count_every_request_of_every_part():
    rng = np.random.default_rng(1)
    parts = [rng.lognormal(1.2, 0.4, size=500) for _ in range(3)]
    encoded = []
    for part in parts:
        histogram = histograms.new()
        for value in part:
            histograms.record(histogram, float(value))
        encoded.append(histograms.encode(histogram))
    merged = histograms.counts_ms(histograms.merge(encoded))
    assert sum(merged.values()) == 1500
    everything = np.sort(np.concatenate(parts))
    p50 = intervals.worst_quantile([merged], 0.5)
    exact = everything[int(len(everything) * 0.5)]
    assert abs(p50 - exact) <= histograms.hdr_step_ms(exact)  # the median to one HDR step (2 us at 3 ms)


def test_hdr_step_is_the_width_of_the_bucket_holding_the_value():
    histogram = histograms.new()
    for microseconds in (1, 999, 2047, 2048, 3000, 4096, 10_000, 123_456, 5_000_000):
        width = histogram.get_highest_equivalent_value(microseconds) - histogram.get_lowest_equivalent_value(microseconds) + 1
        assert histograms.hdr_step_ms(microseconds / 1000) == width / 1000


@pytest.mark.parametrize("value, step", [(0.4, 1.0), (3.0, 1.0), (99.0, 1.0), (150.0, 10.0), (2500.0, 100.0),
                                         (60000.0, 1000.0)])
def test_locust_step_follows_its_rounding(value, step):
    assert histograms.locust_step_ms(value) == step


def test_a_worker_reports_deltas_and_the_master_adds_them_up_to_what_one_process_would_have():
    worker_a, worker_b, master = _recorded([1.0, 2.0]), _recorded([3.0]), recording.Recorder()
    for worker in (worker_a, worker_b):
        report: dict = {}
        worker.on_report_to_master("w", report)
        master.on_worker_report("w", report)
    assert worker_a.recorded == {}  # sent: the next report starts afresh, as Locust's own statistics do
    worker_a.on_request(request_type="GET", name="GET x mode", response_time=4.0)
    report = {}
    worker_a.on_report_to_master("w", report)
    master.on_worker_report("w", report)
    together = _recorded([1.0, 2.0, 3.0, 4.0])
    assert master.frame()["hdr"].tolist() == together.frame()["hdr"].tolist()
    row = master.frame().iloc[0]
    assert (row["verb"], row["name"], row["unit"], row["requests"], row["min_us"], row["max_us"]) == (
        "GET", "GET x mode", "us", 4, 1000, 4001)  # HDR's max: the top of its bucket (2 us wide at 4 ms)


def test_a_request_without_a_response_time_is_not_a_latency():
    recorder = _recorded([None, 2.0])
    assert recorder.frame()["requests"].tolist() == [1]


def test_an_empty_report_adds_nothing():
    master = recording.Recorder()
    master.on_worker_report("w", {})
    assert master.frame().empty and list(master.frame().columns) == recording.COLUMNS
