"""The estimators' contract and registry: records, reasons, ages, selection by name."""

from __future__ import annotations

import pytest

from scheduler.core import estimates, estimators, scheduling, worlds
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, manager_with


def test_an_estimate_has_a_time_or_a_reason() -> None:
    with pytest.raises(ValueError):
        estimates.Estimate(("ns", "a"), "rate", 5.0, estimates.NO_ADMISSIONS, 1.0, 1.0)
    with pytest.raises(ValueError):
        estimates.Estimate(("ns", "a"), "rate", None, "", 1.0, 1.0)


def test_served_again_an_estimate_ages() -> None:
    fresh = estimates.at(("ns", "a"), "simulator", 1_100.0, 1_000.0)
    assert fresh.age == 0.0
    assert fresh.served(1_030.0).age == 30.0
    assert fresh.served(1_030.0).admission_at == 1_100.0


@pytest.mark.parametrize("name", ["moving-average", "rate", "simulator"])
def test_estimators_by_name(name: str) -> None:
    assert estimators.create(name).name == name


def test_unknown_estimator_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="moving-average, rate, simulator"):
        estimators.create("crystal-ball")


def test_admission_record_of_an_admitted_workload() -> None:
    # created at 1000, admitted by the cycle at 1250: a wait of 250 s, in flavor "default".
    manager = manager_with(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj())
    manager.add_workload(WorkloadBuilder("a").created(1_000.0).obj())
    scheduling.run_cycle(manager, 1_250.0)
    admitted = manager.workload(("ns", "a"))
    assert admitted is not None
    taken = estimates.record_of(admitted)
    assert (taken.cluster_queue, taken.local_queue, taken.wait, taken.flavors) == (
        "cq", ("ns", "lq"), 250.0, frozenset({"default"}))


def test_world_copy_leaves_the_live_manager_alone() -> None:
    manager = manager_with(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj())
    manager.add_workload(WorkloadBuilder("a").request(cpu="4").created(1.0).obj())
    scheduling.run_cycle(manager, 900.0)
    manager.add_workload(WorkloadBuilder("b").request(cpu="4").created(2.0).obj())
    copy = worlds.manager_from(worlds.world_of(manager))
    copy.mark_finished(("ns", "a"))
    scheduling.run_cycle(copy, 1_000.0)
    b_copy, b_live = copy.workload(("ns", "b")), manager.workload(("ns", "b"))
    assert b_copy is not None and b_copy.admission is not None
    assert b_live is not None and b_live.admission is None
    assert manager.workload(("ns", "a")) is not None
