"""The held-queue scenario and the pure parts of its run: what it sweeps, what it fills and where."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.drivers.heldqueue import filling, phases, running
from harness.errors import KqbenchError
from harness.scenarios import loading, sections

SCENARIO = Path(__file__).resolve().parents[3] / "results" / "peer" / "scheduler-cluster.yaml"


def test_the_scenario_runs_ours_kueue_and_ours_without_its_page_cache_at_the_benchmarks_size():
    loaded = loading.load(str(SCENARIO))
    assert [c.id for c in loaded.cases] == ["implementation=reference,r0", "implementation=kueue,r0",
                                            "implementation=reference,page_cache=False,r0"]
    assert [(c.scenario.scheduler.implementation, c.scenario.scheduler.page_cache) for c in loaded.cases] == [
        ("reference", True), ("kueue", True), ("reference", False)]
    [phase] = loaded.scenario.phases.values()
    assert isinstance(phase, phases.HeldQueuePhase)
    assert (phase.workloads, phase.readers, phase.read_seconds, phase.churn_per_second) == (20_000, 50, 20.0, 25.0)
    assert running.held_queue(loaded.scenario) == ("cq", "kqbench-churn", tuple(f"lq-{i}" for i in range(10)))


def test_the_workloads_spread_over_the_local_queues_at_a_priority_each():
    batches = filling.batches(23, "ns", ("a", "b", "c"))
    assert [(b.queue, b.count, b.kind.priority) for b in batches] == [("a", 8, 0), ("b", 8, 1), ("c", 7, 2)]
    assert len({b.prefix for b in batches}) == 3  # each batch's names and selector its own
    body = batches[0].manifest(0)
    assert body["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1"}
    assert [b.queue for b in filling.batches(2, "ns", ("a", "b", "c"))] == ["a", "b"]  # no empty batch
    with pytest.raises(KqbenchError, match="no LocalQueue"):
        filling.batches(10, "ns", ())


def test_the_held_queue_is_the_first_cluster_queue_and_its_local_queues():
    queues = sections.QueuesSection.model_validate({
        "cluster_queues": [{"name": name, "resource_groups": [{"covered_resources": ["cpu"], "flavors": [
            {"flavor": "default", "resources": [{"name": "cpu", "nominal": 0}]}]}]} for name in ("held", "other")],
        "local_queues": [{"name": "x", "cluster_queue": "other"}, {"name": "lq-{i}", "cluster_queue": "held",
                                                                    "each": {"i": 2}, "namespace": "team"}]})
    scenario = sections.ScenarioFields(name="t", queues=queues)
    assert running.held_queue(scenario) == ("held", "team", ("lq-0", "lq-1"))
    alone = sections.ScenarioFields(name="t", queues=queues.model_copy(update={"local_queues": queues.local_queues[:1]}))
    with pytest.raises(KqbenchError, match="no LocalQueue points to held"):
        running.held_queue(alone)
