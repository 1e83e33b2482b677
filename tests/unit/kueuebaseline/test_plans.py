"""The kueue-baseline schedule: Kueue's baseline numbers, due times, names, quotas."""

from __future__ import annotations

import pytest

from harness.errors import KqbenchError
from harness.drivers import registry
from harness.load import arrivals
from harness.scenarios import loading


def baseline():
    return loading.load("kueue-baseline").scenario


def test_plan_of_the_shipped_scenario_is_kueues_baseline():
    plan = arrivals.from_scenario(baseline())
    assert [(c.name, c.count, c.cpu_milli, c.runtime_seconds, c.priority, c.interval_seconds) for c in plan.classes] == [
        ("small", 350, 1000, 0.2, 50, 0.1), ("medium", 100, 5000, 0.5, 100, 0.5), ("large", 50, 20000, 1.0, 200, 1.2)]
    assert len(plan.queues) == 30 and plan.total == 15_000
    assert set(plan.nominal_milli.values()) == {20_000} and len(plan.nominal_milli) == 30


def test_schedule_due_times_per_queue_and_class():
    schedule = arrivals.schedule(arrivals.from_scenario(baseline()))
    assert len(schedule) == 15_000 and len({c.name for c in schedule}) == 15_000
    assert [c.at for c in schedule] == sorted(c.at for c in schedule)
    one_queue = [c for c in schedule if c.queue.cluster_queue == "cq-2-3"]
    by_class = {name: [c.at for c in one_queue if c.workload_class.name == name] for name in ("small", "medium", "large")}
    assert by_class["small"][:3] == [0.1, 0.2, 0.3] and by_class["small"][-1] == pytest.approx(35.0)
    assert by_class["medium"][-1] == pytest.approx(50.0)
    assert by_class["large"][0] == pytest.approx(1.2) and by_class["large"][-1] == pytest.approx(60.0)
    assert one_queue[0].queue.local_queue == "lq-2-3"


@pytest.mark.parametrize("text, milli", [("1", 1000), ("500m", 500), (20, 20000), ("0.5", 500)])
def test_cpu_milli(text, milli):
    assert arrivals.cpu_milli(text) == milli


def test_cpu_milli_rejects_other_units():
    with pytest.raises(KqbenchError, match="CPU quantity"):
        arrivals.cpu_milli("1Gi")


def test_the_shipped_scenario_runs_its_phase_with_the_kueue_baseline_driver():
    scenario = baseline()
    assert [registry.drivers().for_kind(phase.kind).name for phase in scenario.phases.values()] == ["kueue-baseline"]
    quick = loading.load("quick").scenario
    assert {registry.drivers().for_kind(phase.kind).name for phase in quick.phases.values()} == {"locust"}


def test_count_without_rate_is_a_named_error():
    scenario = loading.load("kueue-baseline", ["load.mix=[{count: 3, cpu: '1'}]"]).scenario
    with pytest.raises(KqbenchError, match=r"load.mix\[0\]"):
        arrivals.from_scenario(scenario)


def test_preemption_reaches_the_cluster_queue_objects():
    from harness.scenarios import queueobjects

    cq = next(obj for _, obj in queueobjects.manifests(baseline().queues) if obj["kind"] == "ClusterQueue")
    assert cq["spec"]["preemption"] == {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}
