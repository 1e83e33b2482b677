"""A step's figures from boundary scrapes (recorded apiserver text, the scheduler's real metric
classes), Locust history rows and process samples."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from prometheus_client import generate_latest

from harness.drivers.capacity import conditions, figures
from harness.metrics import catalog, samples, summarising
from scheduler.controller import metering
from scheduler.publishing import metering as publish_metering
from tests.unit.metrics import recorded


class Scheduler:
    def __init__(self, strategy: str = "status-field") -> None:
        self.metrics = metering.SchedulerMetrics()
        self.publish = publish_metering.PublishMetrics(strategy, self.metrics.registry)
        self.strategy = strategy

    def scrape(self, t: float) -> samples.Scrape:
        return samples.parse(generate_latest(self.metrics.registry).decode(), catalog.SCHEDULER, t)


def boundaries(live: Scheduler, during_fill, during_hold) -> figures.Boundaries:
    """Scrapes at 0 s, 40 s (hold starts) and 100 s, the scheduler changed by the callbacks in between."""
    api = [recorded.scrape(recorded.APISERVER, moment, t) for moment, t in (("before", 0), ("before", 40), ("after", 100))]
    start = live.scrape(0)
    during_fill(live)
    hold = live.scrape(40)
    during_hold(live)
    end = live.scrape(100)
    return figures.Boundaries({catalog.APISERVER: api[0], catalog.SCHEDULER: start},
                              {catalog.APISERVER: api[1], catalog.SCHEDULER: hold},
                              {catalog.APISERVER: api[2], catalog.SCHEDULER: end})


def test_scrape_figures_take_refusals_and_admissions_over_the_step_and_writes_over_the_hold():
    def fill(s):
        s.publish.failed("TooLarge")
        s.publish.failed("TooManyRequests")
        s.metrics.admitted_total.labels("cq-0").inc(1000)  # admissions count over the whole step

    def hold(s):
        s.metrics.admitted_total.labels("cq-0").inc(600)
        s.metrics.pending.labels("cq-0").set(4000)
        s.publish.failed("Invalid")
        s.publish.changes.labels(s.strategy).inc(6000)
        for _ in range(3000):
            s.publish.wrote("workloads/status", 70)
        for age in [0.1] * 95 + [20.0] * 5:
            s.publish.staleness.labels(s.strategy).observe(age)
        s.publish.largest_object.labels(s.strategy).set(187_000)

    found = figures.from_scrapes(boundaries(Scheduler(), fill, hold))
    assert found["refused_position_writes"] == 2
    assert found["admissions_per_second"] == pytest.approx(16.0)
    assert found["position_writes_per_second"] == pytest.approx(50.0)
    assert found["position_writes_demanded_per_second"] == pytest.approx(100.0)
    assert found["position_write_bytes_per_second"] == pytest.approx(3500.0)
    assert 10 < found["staleness_p99_seconds"] <= 20
    assert (found["pending"], found["largest_object_bytes"]) == (4000, 187_000)
    assert found["requests"] > 0 and found["throttled_requests"] == 0


def test_strategies_that_coalesce_demand_what_they_write_and_without_writes_have_no_staleness():
    def hold(s):
        for _ in range(60):
            s.publish.wrote("queuepositions", 150_000)

    found = figures.from_scrapes(boundaries(Scheduler("single-object"), lambda s: None, hold))
    assert found["position_writes_demanded_per_second"] == found["position_writes_per_second"] == pytest.approx(1.0)
    assert found["staleness_p99_seconds"] is None


def test_a_missing_scheduler_scrape_leaves_its_figures_unmeasured_not_zero():
    bounds = boundaries(Scheduler(), lambda s: None, lambda s: None)
    gone = figures.Boundaries(bounds.start, {**bounds.hold, catalog.SCHEDULER: samples.failed(catalog.SCHEDULER, 40, "x")},
                              bounds.end)
    found = figures.from_scrapes(gone)
    assert found["position_writes_per_second"] is None and found["staleness_p99_seconds"] is None
    assert found["refused_position_writes"] == 0  # the whole-step window still has its two scrapes


def _row(t, name, requests, p50, p90, p95, p99, top):
    return {"t": t, "verb": name.split()[0], "name": name, "requests": requests, "failures": 0, "rps": 0.0,
            "bytes": 0, "p50_ms": p50, "p90_ms": p90, "p95_ms": p95, "p99_ms": p99, "max_ms": top}


def test_pooled_quantile_of_one_interval_is_its_own_and_of_equal_intervals_is_shared():
    one = pd.DataFrame([_row(1, "GET x", 100, 10, 20, 30, 40, 50)])
    assert figures.pooled_quantile(one, 0.99) == pytest.approx(40, rel=1e-6)
    two = pd.DataFrame([_row(1, "GET x", 100, 10, 20, 30, 40, 50), _row(2, "GET x", 100, 10, 20, 30, 40, 50)])
    assert figures.pooled_quantile(two, 0.99) == pytest.approx(40, rel=1e-6)


def test_pooled_quantile_weights_intervals_by_their_requests():
    rows = pd.DataFrame([_row(1, "GET x", 990, 10, 10, 10, 10, 10), _row(2, "GET x", 10, 5000, 5000, 5000, 5000, 5000)])
    # 1% of all requests took 5 s: the pooled p99 sits at the edge between the two, far below 5 s
    assert figures.pooled_quantile(rows, 0.99) <= 10.0 + 1e-6
    assert figures.pooled_quantile(rows, 0.995) > 1000
    assert math.isnan(figures.pooled_quantile(rows.iloc[0:0], 0.99))


def test_history_figures_are_taken_over_the_hold_window_by_request_name():
    rows = [
        _row(10, "GET configmaps bystander", 50, 900, 2900, 3000, 3000, 3000),  # during fill: ignored
        _row(50, "GET configmaps bystander", 50, 5, 8, 9, 10, 12),
        _row(50, "PATCH configmaps bystander", 50, 10, 15, 20, 30, 40),
        _row(50, "LIST configmaps bystander", 10, 20, 30, 30, 30, 30),
        _row(50, "LIST workloads churn", 10, 100, 200, 300, 400, 400),
        _row(50, "GET workloads workload-status", 50, 3, 4, 5, 1500, 1600),
        _row(50, "LIST workloads workload-status-names", 5, 1, 1, 1, 1, 1),
    ]
    found = figures.from_history(pd.DataFrame(rows), window_start=40, query_mode="workload-status")
    assert 0.01 <= found["bystander_p99_seconds"] <= 0.04
    assert found["list_p99_seconds"] == pytest.approx(0.4, rel=1e-3)
    assert found["query_p99_seconds"] == pytest.approx(1.5, rel=0.05)


def test_a_history_with_no_interval_in_the_hold_has_no_client_figures():
    # the load ended before a sampling interval closed inside the hold: every row is from the fill,
    # and an empty selection must not be read as a list of column names
    rows = [_row(10, "GET configmaps bystander", 50, 5, 8, 9, 10, 12),
            _row(20, "GET workloads workload-status", 50, 3, 4, 5, 6, 7)]
    found = figures.from_history(pd.DataFrame(rows), window_start=40, query_mode="workload-status")
    assert found == {"bystander_p99_seconds": None, "list_p99_seconds": None, "query_p99_seconds": None}


def test_processes_and_combine_into_step_figures():
    procs = [summarising.ProcessSample(t, c, 1, rss, 0.0) for t, c, rss in
             ((1, "kube-apiserver", 100), (2, "kube-apiserver", 300), (2, "etcd", 50))]
    combined = figures.combine({"pending": 10.0, "staleness_p99_seconds": None}, figures.from_processes(procs))
    assert combined == conditions.StepFigures(pending=10.0, apiserver_rss_bytes=300.0, etcd_rss_bytes=50.0)


def test_throttling_counts_requests_but_not_watches_reestablishing():
    def api(t, watch_429, get_429, gets):
        request = "apiserver_request_total"
        values = {(request, samples.labels_of({"verb": "WATCH", "code": "429"})): watch_429,
                  (request, samples.labels_of({"verb": "WATCH", "code": "200"})): 50.0,
                  (request, samples.labels_of({"verb": "GET", "code": "429"})): get_429,
                  (request, samples.labels_of({"verb": "GET", "code": "200"})): gets}
        return samples.Scrape(catalog.APISERVER, t, values)

    bounds = figures.Boundaries({catalog.APISERVER: api(0, 0, 0, 0)}, {catalog.APISERVER: api(1, 0, 0, 0)},
                                {catalog.APISERVER: api(2, 5, 2, 998)})
    found = figures.from_scrapes(bounds)
    assert (found["throttled_requests"], found["requests"]) == (2, 1000)


def test_cores_over_the_hold_per_component_the_machine_and_the_rest():
    from harness.metrics.summarising import ProcessSample

    at_hold = [ProcessSample(0.0, "kube-apiserver", 1, 0, 100.0), ProcessSample(0.0, "scheduler", 2, 0, 10.0),
               ProcessSample(0.0, "etcd", 3, 0, 5.0)]
    # the scheduler restarted during the hold (a new pid): it counts from its first sample
    at_end = [ProcessSample(10.0, "kube-apiserver", 1, 0, 110.0), ProcessSample(10.0, "scheduler", 4, 0, 3.0),
              ProcessSample(10.0, "etcd", 3, 0, 6.0)]
    cores = figures.cores_over_hold(at_hold, at_end, machine_busy_seconds=18.0, seconds=10.0)
    assert cores == pytest.approx({"apiserver_cores": 1.0, "scheduler_cores": 0.3, "etcd_cores": 0.1,
                                   "machine_cores": 1.8, "others_cores": 0.4})
    assert figures.cores_over_hold(at_hold, at_end, None, 10.0)["machine_cores"] is None
    assert figures.cores_over_hold(at_hold, at_end, 18.0, 0.0) == {}


def test_the_schedulers_own_time_per_visibility_request_is_taken_over_the_hold():
    def fill(s):
        for _ in range(100):
            s.metrics.visibility_latency.labels("clusterqueue", "200").observe(5.0)  # before the hold: not counted

    def hold(s):
        for seconds in [0.001] * 98 + [0.2] * 2:
            s.metrics.visibility_latency.labels("clusterqueue", "200").observe(seconds)

    found = figures.from_scrapes(boundaries(Scheduler("aggregated-indexed"), fill, hold))
    assert found["visibility_server_mean_seconds"] == pytest.approx((98 * 0.001 + 2 * 0.2) / 100)
    assert 0.001 < found["visibility_server_p99_seconds"] <= 0.25
    quiet = figures.from_scrapes(boundaries(Scheduler("aggregated-indexed"), fill, lambda s: None))
    assert quiet["visibility_server_mean_seconds"] is None
