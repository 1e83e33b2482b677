"""Kueue's SchedulingEquivalenceHashing: a BestEffortFIFO head parked because it did not fit parks every
pending workload of its shape with it, and those that arrive until the next retry."""

import pytest

from scheduler.core.scheduling import run_cycle
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, admit, manager_with


def _summary(decisions):
    return [(type(d).__name__, d.workload.name) for d in decisions]


def _full_queue(hashing: bool, strict: bool = False, requeue_batch_seconds: float = 0.0):
    """cq has 4 cpu, 'running' holds 3; pending in queue order: big-1, big-2 (2 cpu each, same shape),
    other (2 cpu at priority 1, another shape: it comes first), small (1 cpu, fits)."""
    builder = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"}))
    manager = manager_with(builder.strict_fifo().obj() if strict else builder.obj(),
                           scheduling_equivalence_hashing=hashing, requeue_batch_seconds=requeue_batch_seconds)
    admit(manager, WorkloadBuilder("running").request(cpu="3").obj(), "cq")
    manager.add_workload(WorkloadBuilder("other").priority(1).created(1).request(cpu="2").obj())
    manager.add_workload(WorkloadBuilder("big-1").created(2).request(cpu="2").obj())
    manager.add_workload(WorkloadBuilder("big-2").created(3).request(cpu="2").obj())
    manager.add_workload(WorkloadBuilder("small").created(4).request(cpu="1").obj())
    return manager


def test_a_parked_head_parks_the_workloads_of_its_shape():
    manager = _full_queue(hashing=True)
    assert _summary(run_cycle(manager, now=10)) == [("Park", "other")]
    assert _summary(run_cycle(manager, now=11)) == [("Park", "big-1")]
    assert manager.pending_lists.is_parked(("ns", "big-2"))  # parked with big-1, never tried
    assert _summary(run_cycle(manager, now=12)) == [("Admit", "small")]


def test_without_hashing_each_equal_head_is_tried_in_turn():
    manager = _full_queue(hashing=False)
    assert [_summary(run_cycle(manager, now=t)) for t in (10, 11, 12, 13)] == [
        [("Park", "other")], [("Park", "big-1")], [("Park", "big-2")], [("Admit", "small")]]


def test_a_workload_of_a_parked_shape_arriving_before_the_retry_is_parked_at_once():
    manager = _full_queue(hashing=True)
    for t in (10, 11):
        run_cycle(manager, now=t)
    manager.add_workload(WorkloadBuilder("big-3").created(5).request(cpu="2").obj())
    assert manager.pending_lists.is_parked(("ns", "big-3"))
    manager.add_workload(WorkloadBuilder("tiny").created(6).request(cpu="500m").obj())
    assert not manager.pending_lists.is_parked(("ns", "tiny"))  # another shape
    # Capacity changes: every parked workload returns and the parked shapes are forgotten.
    manager.mark_finished(("ns", "running"))
    assert not any(manager.pending_lists.is_parked(("ns", name)) for name in ("other", "big-1", "big-2", "big-3"))
    manager.add_workload(WorkloadBuilder("big-4").created(7).request(cpu="2").obj())
    assert not manager.pending_lists.is_parked(("ns", "big-4"))


@pytest.mark.parametrize("strict", [True, False], ids=["StrictFIFO", "BestEffortFIFO"])
def test_only_best_effort_queues_park_by_shape(strict):
    manager = _full_queue(hashing=True, strict=strict)
    run_cycle(manager, now=10)
    run_cycle(manager, now=11)
    assert manager.pending_lists.is_parked(("ns", "big-2")) is (not strict)
