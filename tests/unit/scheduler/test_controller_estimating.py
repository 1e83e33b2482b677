"""The estimate refresh (scheduler.controller.estimating) on a live core fed Workload objects, as the
controller feeds it: what it takes from the objects, the snapshot it hands an estimator, the estimates of
each estimator on one hand-checked queue, and the metrics of a refresh.

The queue: ClusterQueue "cq" with 1 CPU, now T0 (whole seconds), every Workload 1 CPU.
- r: entered at T0-100, admitted at T0-2, declares 5 s: ends at T0+3;
- a (priority 2): declares 3 s;  b (priority 1): spec.maximumExecutionTimeSeconds 20, nothing declared;
- c (priority 0, in LocalQueue lq-b): no runtime at all.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
from prometheus_client import CollectorRegistry

from scheduler.controller import estimating
from scheduler.core import conversion, estimates, estimators
from scheduler.core.queues import QueueManager
from scheduler_builders import ClusterQueueBuilder, manager_with

T0 = 1_700_000_000.0


def workload_object(name: str, created: float, *, runtime: str | None = None, admitted: float | None = None,
                    finished: float | None = None, priority: int = 0, queue: str = "lq",
                    max_execution: int | None = None) -> dict:
    """A Kueue v1beta2 Workload as the API serves it (1 CPU), admitted to "cq" when ``admitted`` is given."""
    metadata = {"name": name, "namespace": "ns", "uid": f"uid-{name}",
                "creationTimestamp": conversion.format_timestamp(created)}
    if runtime is not None:
        metadata["annotations"] = {estimating.RUNTIME_ANNOTATION: runtime}
    spec = {"queueName": queue, "priority": priority, "podSets": [{"name": "main", "count": 1, "template": {"spec": {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}]}
    if max_execution is not None:
        spec["maximumExecutionTimeSeconds"] = max_execution
    conditions, status = [], {}
    if admitted is not None:
        status["admission"] = {"clusterQueue": "cq", "podSetAssignments": [
            {"name": "main", "flavors": {"cpu": "default"}, "resourceUsage": {"cpu": "1"}, "count": 1}]}
        conditions.append({"type": "QuotaReserved", "status": "True",
                           "lastTransitionTime": conversion.format_timestamp(admitted)})
    if finished is not None:
        conditions.append({"type": "Finished", "status": "True", "lastTransitionTime": conversion.format_timestamp(finished)})
    if conditions:
        status["conditions"] = conditions
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": metadata, "spec": spec,
            "status": status}


QUEUE = (
    workload_object("r", T0 - 100, runtime="5", admitted=T0 - 2),
    workload_object("a", T0 - 50, runtime="3", priority=2),
    workload_object("b", T0 - 40, priority=1, max_execution=20),
    workload_object("c", T0 - 30, queue="lq-b"),
)


def fed(estimator: str, objects=QUEUE, registry: CollectorRegistry | None = None,
        ) -> tuple[QueueManager, estimating.EstimateRefresher]:
    """A core and a refresher fed ``objects`` as the controller feeds them (decoded, then both take them)."""
    manager = manager_with(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "1"})).obj(),
                           local_queues={"lq": "cq", "lq-b": "cq"})
    refresher = estimating.create(manager, estimator, 1.0, 1.0, 10_000, registry or CollectorRegistry(), lambda: T0)
    assert refresher is not None
    decoder = conversion.WorkloadDecoder()
    for obj in objects:
        workload = decoder.decode(obj)
        manager.add_workload(workload)
        refresher.observe_workload(obj, workload)
    return manager, refresher


def refreshed(refresher: estimating.EstimateRefresher) -> estimating.Board:
    with ThreadPoolExecutor(max_workers=1) as pool:
        return asyncio.run(refresher.refresh(pool))


def answers(board: estimating.Board) -> dict[str, float | str]:
    """name -> seconds after T0, or the reason."""
    return {key[1]: e.admission_at - T0 if e.admission_at is not None else e.reason
            for key, e in board.estimates.items()}


# -- what is read from the objects -----------------------------------------------------------------------

@pytest.mark.parametrize(("annotation", "expected"), [
    (None, None), ("2.5", 2.5), ("0", 0.0), ("soon", None), ("-1", None), ("nan", None), ("inf", None)])
def test_a_declared_runtime_is_a_non_negative_number_of_seconds(annotation, expected):
    assert estimating.declared_runtime(workload_object("w", T0, runtime=annotation)) == expected


def test_history_keeps_each_admission_once_within_the_window():
    history = estimating.History(window_seconds=60)
    decoder = conversion.WorkloadDecoder()
    for obj in (workload_object("x", T0 - 200, admitted=T0 - 100),   # admitted before the window
                workload_object("y", T0 - 50, admitted=T0 - 30),
                workload_object("y", T0 - 50, admitted=T0 - 30),      # the same admission seen again
                workload_object("z", T0 - 40, admitted=T0 - 20),
                workload_object("z", T0 - 40, admitted=T0 - 5)):     # readmitted after an eviction: another one
        history.observe(obj, decoder.decode(obj))
    records = history.admissions(T0)
    assert [(r.workload[1], r.queued_at - T0, r.admitted_at - T0, r.wait) for r in records] == [
        ("y", -50, -30, 20.0), ("z", -40, -20, 20.0), ("z", -40, -5, 35.0)]
    assert history.admissions(T0 + 41) == records[2:]  # the window is now (T0-19, T0+41]: T0-30 and T0-20 left


def test_history_keeps_at_most_its_count_of_admissions():
    history = estimating.History(window_seconds=3600, kept=2)
    decoder = conversion.WorkloadDecoder()
    for i in range(3):
        obj = workload_object(f"w{i}", T0 - 10, admitted=T0 - 9 + i)
        history.observe(obj, decoder.decode(obj))
    assert [r.workload[1] for r in history.admissions(T0)] == ["w1", "w2"]


def test_history_learns_runtimes_per_local_queue_from_finished_workloads():
    history = estimating.History(window_seconds=3600)
    decoder = conversion.WorkloadDecoder()
    for obj in (workload_object("p", T0 - 60, runtime="7", admitted=T0 - 50),
                workload_object("p", T0 - 60, runtime="7", admitted=T0 - 50, finished=T0 - 44),  # ran 6 s
                workload_object("p", T0 - 60, runtime="7", admitted=T0 - 50, finished=T0 - 44),  # counted once
                workload_object("q", T0 - 60, admitted=T0 - 40, finished=T0 - 30),               # ran 10 s
                workload_object("s", T0 - 60, queue="lq-b", admitted=T0 - 40, finished=T0 - 41),  # ends before: none
                workload_object("t", T0 - 60, runtime="4")):
        history.observe(obj, decoder.decode(obj))
    assert history.learned() == {"ns/lq": 8.0}  # (6 + 10) / 2
    assert history.declared == {("ns", "t"): 4.0}  # p finished: its runtime is no longer needed
    history.forget(("ns", "t"))
    assert history.declared == {}


# -- the snapshot -----------------------------------------------------------------------------------------

def test_the_simulators_snapshot_carries_the_world_and_the_runtimes():
    _, refresher = fed(estimators.SIMULATOR)
    snapshot, declared, learned = refresher.take()
    assert snapshot.now == T0
    assert {cq: [w.name for w in pending] for cq, pending in snapshot.pending.items()} == {"cq": ["a", "b", "c"]}
    assert snapshot.world is not None and sorted(w.name for w in snapshot.world.workloads) == ["a", "b", "c", "r"]
    assert [(r.workload[1], r.wait) for r in snapshot.admissions] == [("r", 98.0)]
    assert declared == {("ns", "r"): 5.0, ("ns", "a"): 3.0} and learned == {}


@pytest.mark.parametrize("estimator", [estimators.MOVING_AVERAGE, estimators.RATE])
def test_the_other_estimators_snapshot_has_no_world_and_no_runtimes(estimator):
    _, refresher = fed(estimator)
    snapshot, declared, learned = refresher.take()
    assert snapshot.world is None and (declared, learned) == ({}, {})
    assert [w.name for w in snapshot.pending["cq"]] == ["a", "b", "c"] and len(snapshot.admissions) == 1


# -- the estimates of a refresh ------------------------------------------------------------------------------

@pytest.mark.parametrize(("estimator", "expected"), [
    # r ends at T0+3 when a is admitted; a runs 3 s: b at T0+6; b runs its 20 s limit: c at T0+26, but nothing
    # says how long c runs, so it gets the reason.
    (estimators.SIMULATOR, {"a": 3.0, "b": 6.0, "c": estimates.NO_RUNTIME}),
    # r waited 98 s (T0-100 to T0-2): each is expected 98 s after it entered the queue.
    (estimators.MOVING_AVERAGE, {"a": 48.0, "b": 58.0, "c": 68.0}),
    # 1 admission in the 600 s window: one every 600 s, the first for a.
    (estimators.RATE, {"a": 600.0, "b": 1200.0, "c": 1800.0}),
])
def test_each_estimator_on_the_hand_checked_queue(estimator, expected):
    _, refresher = fed(estimator)
    board = refreshed(refresher)
    assert (board.estimator, board.generation) == (estimator, 1)
    assert answers(board) == expected
    assert all(e.computed_at == e.served_at == T0 for e in board.estimates.values())
    assert refreshed(refresher).generation == 2


def test_declared_runtimes_that_change_reach_the_next_refresh():
    _, refresher = fed(estimators.SIMULATOR)
    refreshed(refresher)
    obj = workload_object("c", T0 - 30, queue="lq-b", runtime="1")
    refresher.observe_workload(obj, conversion.WorkloadDecoder().decode(obj))
    assert answers(refreshed(refresher))["c"] == 26.0


def test_nothing_admitted_yet_is_said_not_guessed():
    _, refresher = fed(estimators.RATE, QUEUE[1:])
    assert set(answers(refreshed(refresher)).values()) == {estimates.NO_ADMISSIONS}


# -- the metrics ---------------------------------------------------------------------------------------------

def sample(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


def test_a_refresh_observes_each_wait_and_counts_the_rest_by_reason():
    registry = CollectorRegistry()
    _, refresher = fed(estimators.SIMULATOR, registry=registry)
    refreshed(refresher)
    wait = "kqbench_scheduler_estimated_wait_seconds"
    # waits of 3 s (a) and 6 s (b): le=1 none, le=5 a, le=10 both.
    assert [sample(registry, f"{wait}_bucket", cluster_queue="cq", le=le) for le in ("1.0", "5.0", "10.0", "+Inf")] == [
        0.0, 1.0, 2.0, 2.0]
    assert sample(registry, f"{wait}_sum", cluster_queue="cq") == 9.0
    assert sample(registry, "kqbench_scheduler_estimates_without_time", cluster_queue="cq",
                  reason=estimates.NO_RUNTIME) == 1.0


def test_wait_buckets_and_counts_without_a_time_replace_the_last_refreshs():
    registry = CollectorRegistry()
    _, refresher = fed(estimators.SIMULATOR, registry=registry)
    refresher.record(estimating.Tally({"cq": [0.0, 30.0, 45.0, 4000.0]}, {("cq", estimates.NO_RUNTIME): 2}))
    refresher.record(estimating.Tally({"cq": [0.5]}, {("cq", estimating.NOT_ESTIMATED): 1}))
    counts = {le: sample(registry, "kqbench_scheduler_estimated_wait_seconds_bucket", cluster_queue="cq", le=le)
              for le in ("1.0", "30.0", "60.0", "3600.0", "7200.0", "+Inf")}
    # 0 and 0.5 <= 1; 30 <= 30 (a bound is inclusive); 45 <= 60; 4000 <= 7200.
    assert counts == {"1.0": 2.0, "30.0": 3.0, "60.0": 4.0, "3600.0": 4.0, "7200.0": 5.0, "+Inf": 5.0}
    assert sample(registry, "kqbench_scheduler_estimated_wait_seconds_sum", cluster_queue="cq") == 4075.5
    without = "kqbench_scheduler_estimates_without_time"
    assert sample(registry, without, cluster_queue="cq", reason=estimates.NO_RUNTIME) is None
    assert sample(registry, without, cluster_queue="cq", reason=estimating.NOT_ESTIMATED) == 1.0


def test_tally_counts_a_pending_workload_the_estimator_left_out_as_not_estimated():
    _, refresher = fed(estimators.SIMULATOR)
    snapshot, _, _ = refresher.take()
    only_a = {key: e for key, e in refreshed(refresher).estimates.items() if key[1] == "a"}
    assert estimating.tally(snapshot, only_a) == estimating.Tally(
        {"cq": [3.0]}, {("cq", estimating.NOT_ESTIMATED): 2})


def test_the_cpu_of_a_refresh_is_the_snapshots_and_the_estimates():
    registry = CollectorRegistry()
    _, refresher = fed(estimators.MOVING_AVERAGE, registry=registry)
    ticks = iter(range(100))
    refresher.cpu_clock = lambda: next(ticks) * 0.25  # 0.25 s between any two readings
    refreshed(refresher)
    # snapshot: readings 0 and 1 (0.25 s); estimate: readings 2 and 3 (0.25 s).
    assert sample(registry, "kqbench_scheduler_estimate_refresh_cpu_seconds_sum") == 0.5
    assert sample(registry, "kqbench_scheduler_estimate_refresh_cpu_seconds_count") == 1.0


def test_a_failed_refresh_keeps_the_last_board_and_is_counted():
    registry = CollectorRegistry()
    _, refresher = fed(estimators.RATE, registry=registry)
    before = refreshed(refresher)

    class Failing:
        name = estimators.RATE

        def estimate(self, snapshot):
            raise RuntimeError("estimator bug")

    async def once() -> None:
        stop = asyncio.Event()
        refresher.estimator = Failing()
        refresher.refresh_seconds = 0.01
        task = asyncio.create_task(refresher.run(stop))
        for _ in range(500):  # bounded: the first refresh fails within a few loop turns
            if sample(registry, "kqbench_scheduler_estimate_refresh_failures_total"):
                break
            await asyncio.sleep(0.01)
        stop.set()
        await asyncio.wait_for(task, timeout=10)

    asyncio.run(once())
    assert sample(registry, "kqbench_scheduler_estimate_refresh_failures_total") >= 1
    assert refresher.board is before


def test_create_refuses_an_unknown_name_and_makes_nothing_for_none():
    manager = QueueManager()
    assert estimating.create(manager, estimating.NONE, 1.0, 1.0, 1, CollectorRegistry()) is None
    with pytest.raises(ValueError, match="estimator 'eta' is unknown: use one of moving-average, rate, simulator"):
        estimating.create(manager, "eta", 1.0, 1.0, 1, CollectorRegistry())
    assert estimating.NAMES == ("none", "moving-average", "rate", "simulator")
