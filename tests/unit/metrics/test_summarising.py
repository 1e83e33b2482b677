"""Per-phase numbers from recorded scrapes: deltas, rates, gauges, histogram quantiles, processes."""

from __future__ import annotations

import math

import pytest

from harness.metrics import catalog, summarising
from tests.unit.metrics import recorded

WORK = summarising.Phase("work", 0.0, 10.0)


def _rows(source_component: str):
    scrapes = [recorded.scrape(source_component, "before", 0.0), recorded.scrape(source_component, "after", 10.0)]
    return summarising.summarise(scrapes, WORK, catalog.FAMILIES)


def _value(rows, metric, stat, **labels):
    found = [r.value for r in rows if r.metric == metric and r.stat == stat
             and all(dict(r.labels).get(k) == v for k, v in labels.items())]
    assert len(found) == 1, (metric, stat, labels, found)
    return found[0]


@pytest.mark.parametrize("verb, code, delta", [("POST", "201", 21.0), ("LIST", "200", 3.0), ("DELETE", "200", 10.0)])
def test_counter_delta_and_rate(verb, code, delta):
    rows = _rows(recorded.APISERVER)
    labels = dict(recorded.request(verb, code, "namespace" if verb == "LIST" else "resource")[1])
    assert _value(rows, "apiserver_request_total", "delta", **labels) == delta
    assert _value(rows, "apiserver_request_total", "rate", **labels) == delta / 10.0


def test_unchanged_counters_are_left_out():
    rows = _rows(recorded.APISERVER)
    put_404 = dict(recorded.request("PUT", "404", "resource")[1])  # 1 before, 1 after
    assert not [r for r in rows if r.metric == "apiserver_request_total" and dict(r.labels) == put_404]


def test_histogram_rows_per_request_key():
    rows = _rows(recorded.APISERVER)
    key = dict(verb="LIST", group="", resource="configmaps", subresource="", scope="namespace")
    assert _value(rows, "apiserver_request_duration_seconds", "count", **key) == 3.0
    p50, p99 = (_value(rows, "apiserver_request_duration_seconds", s, **key) for s in ("p50", "p99"))
    assert 0 < p50 <= p99
    mean = _value(rows, "apiserver_request_duration_seconds", "mean", **key)
    assert mean == pytest.approx(_value(rows, "apiserver_request_duration_seconds", "sum", **key) / 3.0)


def test_etcd_counters_and_gauges():
    rows = _rows(recorded.ETCD)
    puts = _value(rows, "etcd_mvcc_put_total", "delta")
    before = recorded.scrape(recorded.ETCD, "before", 0).values[("etcd_mvcc_put_total", ())]
    after = recorded.scrape(recorded.ETCD, "after", 0).values[("etcd_mvcc_put_total", ())]
    assert puts == after - before > 0
    assert _value(rows, "etcd_mvcc_db_total_size_in_bytes", "last") == 327680.0


def test_a_phase_with_one_scrape_has_no_numbers():
    scrapes = [recorded.scrape(recorded.ETCD, "before", 0.0), recorded.scrape(recorded.ETCD, "after", 20.0)]
    assert summarising.summarise(scrapes, WORK, catalog.FAMILIES) == []


def _process(t, cpu, rss, component="etcd"):
    return summarising.ProcessSample(t, component, 42, rss, cpu)


@pytest.mark.parametrize("series, expected", [
    ([_process(0, 1.0, 100), _process(5, 2.0, 300), _process(10, 3.5, 200)],
     {("rss_bytes", "first"): 100, ("rss_bytes", "last"): 200, ("rss_bytes", "max"): 300,
      ("cpu_seconds", "delta"): 2.5, ("cpu_seconds", "rate"): 0.25}),
    ([_process(3, 1.0, 100)],
     {("rss_bytes", "first"): 100, ("rss_bytes", "last"): 100, ("rss_bytes", "max"): 100}),
    ([_process(11, 1.0, 100)], {}),  # after the phase
])
def test_process_rows(series, expected):
    rows = summarising.summarise_processes(series, WORK)
    assert {(r.metric, r.stat): r.value for r in rows} == expected
    assert all(dict(r.labels) == {"component": "etcd", "pid": "42"} for r in rows)


def _reading(t, pid=42, **cpu_seconds):
    """One sampling of processes at t: component=CPU seconds so far."""
    return [summarising.ProcessSample(t, name, pid, 0, seconds) for name, seconds in cpu_seconds.items()]


@pytest.mark.parametrize("before, after, expected", [
    # both cores busy for 100 s between the readings: 2.0 in all, whatever the caller timed apart (the
    # cluster benchmark divided such readings by a 30 s wait inside them: 6.67 cores of 2)
    (_reading(0.0, apiserver=10.0, scheduler=5.0), _reading(100.0, apiserver=130.0, scheduler=85.0),
     {"apiserver": 1.2, "scheduler": 0.8}),
    # each component over its own samples' times
    (_reading(0.0, etcd=1.0) + _reading(0.5, apiserver=1.0), _reading(10.0, etcd=2.0) + _reading(10.5, apiserver=6.0),
     {"etcd": 0.1, "apiserver": 0.5}),
    # restarted in between (another pid): its CPU since start is not CPU in the window
    (_reading(0.0, pid=7, scheduler=50.0), _reading(10.0, pid=8, scheduler=3.0), {}),
    # absent at the start: its whole lifetime's CPU is not CPU in the window (cpu_share counted it)
    ([], _reading(10.0, scheduler=30.0), {}),
    # no time between the readings: no figure rather than a division by zero
    (_reading(5.0, etcd=1.0), _reading(5.0, etcd=1.0), {}),
])
def test_cores_between_divides_each_process_by_the_time_between_its_readings(before, after, expected):
    assert summarising.cores_between(before, after) == pytest.approx(expected)


def test_in_phase_drops_failed_scrapes():
    good = recorded.scrape(recorded.ETCD, "before", 1.0)
    bad = summarising.samples.failed("etcd", 2.0, "refused")
    assert summarising.in_phase([bad, good], WORK) == [good]
    assert math.isclose(WORK.seconds, 10.0)
