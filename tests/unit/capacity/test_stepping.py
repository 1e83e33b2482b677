"""One step's sequence on fake edges: reset, fill mark, hold mark when pending is reached, judge."""

from __future__ import annotations

import threading

import pandas as pd
import pytest
from prometheus_client import generate_latest

from harness.drivers.capacity import conditions, searching, stepping
from harness.errors import KqbenchError
from harness.metrics import catalog, samples, summarising
from scheduler.controller import metering
from scheduler.publishing import metering as publish_metering


class World:
    """A scheduler's metrics that grow while the fake load runs, and a log of what the step did."""

    def __init__(self, reach: bool = True, refuse: bool = False) -> None:
        self.metrics = metering.SchedulerMetrics()
        self.publish = publish_metering.PublishMetrics("single-object", self.metrics.registry)
        self.log: list[str] = []
        self.held = threading.Event()
        self.hold_marked = False
        self.reach = reach
        self.refuse = refuse
        self.now = 0.0
        self.target = 0
        self.backlog = 0

    def edges(self) -> stepping.Edges:
        return stepping.Edges(reset=lambda: self.log.append("reset"), scrape=self.scrape, processes=self.processes,
                              pending=lambda: self.backlog + self.target if self.reach else 0.0,
                              run_load=self.run_load, mark_phase=self.mark, clock=lambda: self.now,
                              load_backlog=self.load_backlog)

    def load_backlog(self, count: int) -> float:
        self.log.append(f"backlog {count}")
        self.backlog = count
        return 1.0

    def mark(self, name: str) -> None:
        self.log.append(name)
        self.hold_marked = self.hold_marked or name.endswith("hold")

    def processes(self) -> list[summarising.ProcessSample]:
        # The watcher reads the processes after the hold's scrape: only then may the load go on (else its
        # refused write could land before the scrape that the step's deltas start from).
        if self.hold_marked:
            self.held.set()
        return [summarising.ProcessSample(self.now, "etcd", 1, 500, 0.0)]

    def scrape(self) -> dict[str, samples.Scrape]:
        text = generate_latest(self.metrics.registry).decode()
        return {catalog.SCHEDULER: samples.parse(text, catalog.SCHEDULER, self.now)}

    def run_load(self, pending: int, seconds: float, name: str) -> stepping.LoadOutcome:
        self.log.append(f"load {pending} for {seconds:.0f}s")
        self.target = pending
        if not self.reach:
            self.now += seconds  # the fill budget runs out
        assert self.held.wait(5), "the watcher never marked the hold"
        self.now += 60
        self.metrics.admitted_total.labels("cq").inc(600)
        self.publish.largest_object.labels("single-object").set(pending * 100)
        if self.refuse:
            self.publish.failed("TooLarge")
        self.metrics.pending.labels("cq").set(pending)
        history = pd.DataFrame([{"t": 100.0, "verb": "GET", "name": "GET queuepositions single-object",
                                 "requests": 10, "failures": 0, "rps": 1.0, "bytes": 0, "p50_ms": 1.0, "p90_ms": 2.0,
                                 "p95_ms": 3.0, "p99_ms": 1500.0, "max_ms": 1600.0}])
        return stepping.LoadOutcome(history, {"load_totals": pd.DataFrame({"n": [1]})})


SETTINGS = stepping.StepSettings("capacity", hold_seconds=60, fill_timeout_seconds=900, create_per_second=100,
                                 query_mode="single-object", thresholds=conditions.BreakThresholds())


def test_a_step_resets_fills_holds_and_is_judged_on_what_the_hold_measured():
    world = World()
    emitted = []
    step = stepping.Stepper(SETTINGS, world.edges(), on_tables=lambda phase, tables: emitted.append(phase),
                            poll_seconds=0.01)
    verdict = step(2000)
    assert world.log == ["reset", "capacity-00-fill", "load 2000 for 106s", "capacity-00-hold"]
    assert verdict.broken == (conditions.QUERY,)
    assert verdict.figures["admissions_per_second"] == pytest.approx(10.0)  # 600 over the 60 s step
    assert verdict.figures["largest_object_bytes"] == 200_000
    assert verdict.figures["etcd_rss_bytes"] == 500
    assert emitted == ["capacity-00-load"]
    assert step.phase_of(step.index, "fill") == "capacity-01-fill"


def test_a_refused_write_breaks_and_so_does_a_fill_that_never_reached_its_load():
    world = World(reach=False, refuse=True)
    verdict = stepping.Stepper(SETTINGS, world.edges(), poll_seconds=0.01)(1000)
    assert verdict.broken == (conditions.WRITE_REFUSED, conditions.QUERY, conditions.FILL_SHORT)
    assert verdict.detail.endswith("; pending at the hold / target 0 < 80.00%")
    assert verdict.figures["fill_share"] == 0


def test_a_failing_reset_fails_the_step_which_the_search_counts_as_broken():
    world = World()
    edges = world.edges()
    edges.reset = lambda: (_ for _ in ()).throw(KqbenchError("Workloads still present after 300s"))
    search = searching.Search(searching.SearchPlan(start=1000, stop=1000))
    outcome = searching.run(search, stepping.Stepper(SETTINGS, edges, poll_seconds=0.01))
    assert outcome.steps[0].verdict.broken == (searching.ERROR,)
    assert "still present" in outcome.steps[0].verdict.detail


def test_a_bulk_step_loads_all_but_the_churns_share_first_and_the_churn_keeps_only_that():
    world = World()
    bulk = stepping.StepSettings("capacity", hold_seconds=60, fill_timeout_seconds=900, create_per_second=100,
                                 query_mode="single-object", thresholds=conditions.BreakThresholds(),
                                 churn_pending=50)
    verdict = stepping.Stepper(bulk, world.edges(), poll_seconds=0.01)(20_000)
    # fill budget of the churn's 50 alone: 50 / 100 * 1.3 + 20 s floor, then the 60 s hold
    assert world.log == ["reset", "capacity-00-fill", "backlog 19950", "load 50 for 81s", "capacity-00-hold"]
    assert verdict.figures["fill_share"] == pytest.approx(1.0)
    assert stepping.estimate_seconds(bulk, [20_000]) < stepping.estimate_seconds(SETTINGS, [20_000])


def test_a_bulk_step_in_a_world_without_a_bulk_path_says_so():
    world = World()
    edges = world.edges()
    edges.load_backlog = None
    bulk = stepping.StepSettings("capacity", hold_seconds=60, fill_timeout_seconds=900, create_per_second=100,
                                 query_mode="single-object", thresholds=conditions.BreakThresholds(),
                                 churn_pending=50)
    with pytest.raises(KqbenchError, match="etcd"):
        stepping.Stepper(bulk, edges, poll_seconds=0.01)(1000)
