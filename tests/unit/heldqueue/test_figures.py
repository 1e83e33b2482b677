"""The held-queue driver's numbers: counters to per-unit costs, latencies to quantiles, bounded waits."""

from __future__ import annotations

import pytest

from harness.drivers.heldqueue import figures as figs

APISERVER = """# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",group="kueue.x-k8s.io",resource="workloads",subresource="status",verb="APPLY",version="v1beta2"} 40
apiserver_request_total{code="200",component="apiserver",group="kueue.x-k8s.io",resource="workloads",subresource="status",verb="PUT",version="v1beta2"} 2
apiserver_request_total{code="201",component="apiserver",group="",resource="events",subresource="",verb="POST",version="v1"} 20
apiserver_request_total{code="200",component="apiserver",group="kueue.x-k8s.io",resource="workloads",subresource="",verb="LIST",version="v1beta2"} 7
apiserver_request_total{code="200",component="apiserver",group="kueue.x-k8s.io",resource="workloads",subresource="",verb="WATCH",version="v1beta2"} 3
"""


def test_only_mutating_requests_count_as_writes_by_resource_and_subresource():
    assert figs.apiserver_writes(APISERVER) == {"workloads/status": 42.0, "events": 20.0}


def test_the_fills_own_writes_are_not_the_schedulers():
    writes = {"namespaces": 10.0, "workloads": 305.0, "workloads/status": 300.0, "events": 3.0}
    assert figs.less_fill(writes, posted=300) == {"workloads": 5.0, "workloads/status": 300.0, "events": 3.0}
    assert figs.less_fill(writes, posted=0) == {"workloads": 305.0, "workloads/status": 300.0, "events": 3.0}
    assert figs.less_fill({"namespaces": 1.0, "workloads": 300.0}, posted=300) == {}


def test_delta_keeps_what_grew():
    assert figs.delta({"events": 25.0, "workloads/status": 42.0, "new": 1.0},
                      {"events": 20.0, "workloads/status": 42.0}) == {"events": 5.0, "new": 1.0}


@pytest.mark.parametrize("samples, reached, done, estimate, to_target", [
    ([(0.0, 0.0), (10.0, 400.0), (20.0, 1000.0)], True, 1000.0, None, 20.0),
    # stopped at the bound: how far it got, and the time to the target at the rate seen
    ([(0.0, 0.0), (100.0, 800.0)], False, 800.0, 125.0, 125.0),
    ([(0.0, 0.0), (100.0, 0.0)], False, 0.0, None, None),
    ([], False, 0.0, None, None),
])
def test_a_bounded_wait_records_where_it_stopped(samples, reached, done, estimate, to_target):
    found = figs.milestone("processed", 1000, samples, reached)
    assert (found.reached, found.done, found.estimated_seconds) == (reached, done, estimate)
    assert found.seconds == (samples[-1][0] if samples else 0.0)
    assert found.seconds_or_estimate == to_target  # a slow one is not flattered by its bound


def test_latency_quantiles_are_in_milliseconds_and_an_empty_arm_says_so():
    arm = figs.latency_summary([0.001] * 98 + [0.5, 0.9], seconds=10)
    assert (arm.requests, arm.per_second, arm.p50_ms, arm.p99_ms, arm.max_ms) == (100, 10.0, 1.0, 900.0, 900.0)
    assert figs.latency_summary([], 10) == figs.Latencies(0, 0.0)


def test_fewer_than_100_requests_have_no_p99_but_their_slowest():
    # Kueue's arm at 100k pending: 50 pages, each slower than the 20 s arm
    arm = figs.latency_summary([24.5] * 49 + [24.77], seconds=29.0)
    assert arm.p99_ms is None and arm.max_ms == 24770.0 and arm.per_second == 1.7
    assert figs.latency_summary([0.001] * 99, seconds=1.0).p99_ms is None
    assert figs.latency_summary([0.001] * 100, seconds=1.0).p99_ms == 1.0


@pytest.mark.parametrize("ours, theirs, expected", [(85.8, None, None), (None, 2.0, None), (1.0, 0.0, None),
                                                    (1.0, 4.0, 0.25)])
def test_a_ratio_needs_both_figures_and_a_nonzero_divisor(ours, theirs, expected):
    assert figs.ratio(ours, theirs) == expected


@pytest.mark.parametrize("value, goal, expected", [(0.05, ("<=", 0.1), True), (0.2, ("<=", 0.1), False),
                                                   (2.0, (">=", 1.0), True), (None, (">=", 1.0), None)])
def test_a_goal_is_judged_only_on_a_ratio(value, goal, expected):
    assert figs.met(value, goal) is expected


def test_cost_per_pending_workload():
    assert figs.per_pending(2.0, 100e6, 10_000) == {"cpu_ms_per_pending": 0.2, "rss_bytes_per_pending": 10_000.0}
    assert figs.per_pending(2.0, 100e6, 0) == {"cpu_ms_per_pending": None, "rss_bytes_per_pending": None}


def test_churn_changes_count_creates_and_deletes():
    assert figs.ChurnCounts(25.0, created=100, deleted=99, failed=1, seconds=10.0).changes_per_second == 19.9
    assert figs.ChurnCounts(25.0, 0, 0, 0, seconds=0.0).changes_per_second == 0.0
