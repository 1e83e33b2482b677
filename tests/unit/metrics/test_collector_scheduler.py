"""The scheduler's own /metrics in the run's tables, from text its real metric classes expose."""

from __future__ import annotations

import pytest
from prometheus_client import generate_latest

from harness.metrics import catalog, collector, frames, scraping
from scheduler.controller import metering
from scheduler.publishing import metering as publish_metering
from tests.unit.metrics import test_collector as base


class LiveScheduler:
    """The scheduler's metrics objects, changed by the test between scrapes, exposed as the process does."""

    def __init__(self) -> None:
        self.metrics = metering.SchedulerMetrics()
        self.publish = publish_metering.PublishMetrics("status-field", self.metrics.registry)

    def text(self) -> str:
        return generate_latest(self.metrics.registry).decode()


def make(live: LiveScheduler, clock: base.FakeClock, fail_scheduler: bool = False) -> collector.Collector:
    recorded = base.Recorded({catalog.APISERVER: ["before"] * 5, catalog.ETCD: ["before"] * 5})

    def fetch(target: scraping.Target, timeout: float) -> str:
        if target.source == catalog.SCHEDULER:
            if fail_scheduler:
                raise base.KqbenchError("scheduler http://127.0.0.1:3/metrics is not reachable")
            return live.text()
        return recorded(target, timeout)

    edges = collector._Edges(fetch=fetch, sample_processes=base._processes, read_sizes=lambda url, snapshot: iter([]),
                             clock=clock, wall_clock=lambda: 1.7e9)
    settings = collector.CollectorSettings(interval_seconds=0, census_at_stop=False)
    return collector.Collector(base.CLUSTER, settings, targets=list(base.TARGETS), edges=edges)


def test_scheduler_metrics_become_per_phase_numbers_like_the_apiservers():
    live, clock = LiveScheduler(), base.FakeClock()
    run = make(live, clock)
    run.watch_metrics(scraping.scheduler_target("http://127.0.0.1:3/metrics"))
    live.metrics.pending.labels("cq-0").set(100)
    run.start("fill")
    clock.now += 10
    live.publish.changes.labels("status-field").inc(500)
    for _ in range(200):
        live.publish.wrote("workloads/status", 60)
    live.publish.failed("TooManyRequests")
    for age in [0.2] * 98 + [40.0, 50.0]:
        live.publish.staleness.labels("status-field").observe(age)
    live.publish.backlog.labels("status-field").set(300)
    live.metrics.pending.labels("cq-0").set(2000)
    run.mark_phase("churn")
    clock.now += 10
    result = run.stop()

    summary = frames.pick(result.summary, source=catalog.SCHEDULER, phase="fill")
    assert frames.total(summary, metric="kqbench_positions_changes_total", stat="delta") == 500
    assert frames.total(summary, metric="kqbench_positions_writes_total", stat="rate") == pytest.approx(20.0)
    assert frames.total(summary, metric="kqbench_positions_write_failures_total", stat="delta",
                        reason="TooManyRequests") == 1
    assert frames.total(summary, metric="kqbench_positions_staleness_seconds", stat="p99") > 30
    assert frames.total(summary, metric="kqbench_scheduler_pending_workloads", stat="max", cluster_queue="cq-0") == 2000
    assert frames.total(summary, metric="kqbench_positions_backlog", stat="last") == 300
    names = result.names.set_index("family")
    assert names.loc["kqbench_positions_staleness_seconds", "exposed_as"] == "kqbench_positions_staleness_seconds"
    assert not frames.pick(result.observations, source=catalog.SCHEDULER).empty


def test_a_restarted_scheduler_replaces_its_target_and_counter_resets_count_as_restarts():
    live, clock = LiveScheduler(), base.FakeClock()
    run = make(live, clock)
    run.watch_metrics(scraping.scheduler_target("http://127.0.0.1:3/metrics"))
    run.start("a")
    for _ in range(3):
        live.metrics.observe_write("patch", "workloads/status", 200, 100)
    clock.now += 5
    run.mark_phase("b")
    live.metrics = metering.SchedulerMetrics()  # a new process: counters from zero
    live.metrics.observe_write("patch", "workloads/status", 200, 100)
    run.watch_metrics(scraping.scheduler_target("http://127.0.0.1:4/metrics"))
    clock.now += 5
    result = run.stop()
    scheduler_scrapes = result.scrapes[result.scrapes["source"] == catalog.SCHEDULER]
    assert len(scheduler_scrapes) == 3
    assert frames.total(result.summary, metric="kqbench_scheduler_api_writes_total", stat="delta", phase="b") == 1
    assert frames.total(result.summary, metric="kqbench_scheduler_api_writes_total", stat="delta", phase="a") == 3


def test_a_scheduler_that_does_not_answer_leaves_a_gap_not_a_failed_run():
    live, clock = LiveScheduler(), base.FakeClock()
    run = make(live, clock, fail_scheduler=True)
    run.watch_metrics(scraping.scheduler_target("http://127.0.0.1:3/metrics"))
    run.start()
    clock.now += 5
    result = run.stop()
    errors = result.scrapes[(result.scrapes["source"] == catalog.SCHEDULER) & (result.scrapes["error"] != "")]
    assert len(errors) == 2
    assert frames.pick(result.summary, source=catalog.SCHEDULER).empty
