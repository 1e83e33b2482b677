"""The jobs plan and the Job each creation sends."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.clusters import kwokconfig
from harness.drivers.jobs import plans
from harness.scenarios import loading
from harness.scenarios.loading import ScenarioError
from scheduler.core import jobs as corejobs


def scenario(*overrides: str):
    return loading.load("jobs", list(overrides)).scenario


def test_every_class_runs_count_jobs_of_its_pods_per_cluster_queue():
    plan = plans.from_scenario(scenario("load.mix=[{pods: 3, cpu: '2', runtime_seconds: 5, per_second: 2, count: 10}]"))
    assert plan.total_jobs == 4 * 10 and plan.total_pods == 4 * 10 * 3
    first = plan.schedule()[0]
    assert first.at == pytest.approx(0.5)


def test_a_job_is_suspended_in_its_queue_and_its_pods_carry_the_runtime_for_kwok():
    plan = plans.from_scenario(scenario(
        "load.mix=[{pods: 3, cpu: '500m', memory: 2Gi, runtime_seconds: 2.5, per_second: 1, count: 1, "
        "priority_class: high, priority: 10}]",
        "queues.priority_classes=[{name: high, value: 10}]"))
    creation = plan.schedule()[0]
    job = plans.job_manifest(creation, plan.shapes[creation.workload_class.name])
    assert job["spec"]["suspend"] is True
    assert job["spec"]["parallelism"] == job["spec"]["completions"] == 3
    labels = job["metadata"]["labels"]
    assert labels[corejobs.QUEUE_LABEL] == creation.queue.local_queue
    assert labels[corejobs.PRIORITY_CLASS_LABEL] == "high"
    template = job["spec"]["template"]
    assert template["metadata"]["annotations"][kwokconfig.RUNTIME_ANNOTATION] == "2500ms"
    assert template["metadata"]["labels"][plans.CLASS_LABEL] == labels[plans.CLASS_LABEL]
    assert template["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "500m", "memory": "2Gi"}


def test_a_class_topology_becomes_the_annotations_its_workload_reads_back():
    plan = plans.from_scenario(scenario(
        "load.mix=[{pods: 4, cpu: '1', runtime_seconds: 1, per_second: 1, count: 1, "
        "topology: {podSetSliceRequiredTopology: rack, podSetSliceSize: 2, required: block}}]"))
    creation = plan.schedule()[0]
    job = plans.job_manifest(creation, plan.shapes[creation.workload_class.name])
    annotations = job["spec"]["template"]["metadata"]["annotations"]
    assert annotations[corejobs.REQUIRED_TOPOLOGY_ANNOTATION] == "block"
    assert annotations[corejobs.SLICE_SIZE_ANNOTATION] == "2"
    job["metadata"]["uid"] = "u"
    request = corejobs.workload_for(job)["spec"]["podSets"][0]["topologyRequest"]
    assert request == {"required": "block", "podSetSliceRequiredTopology": "rack", "podSetSliceSize": 2,
                       "podIndexLabel": corejobs.COMPLETION_INDEX_LABEL}
    unconstrained = corejobs.topology_annotations({"unconstrained": False})
    assert corejobs.topology_request(unconstrained)["unconstrained"] is False


def test_runtime_text_is_whole_milliseconds():
    assert plans.runtime_text(20) == "20000ms" and plans.runtime_text(0.0004) == "0ms"


def test_a_jobs_cluster_has_its_jobs_queued_by_default_and_a_jobs_phase_needs_one():
    assert scenario().scheduler.manage_jobs is True
    with pytest.raises(ScenarioError, match="set cluster.jobs: true"):
        scenario("cluster.jobs=false")
    with pytest.raises(ScenarioError, match="drop scheduler.manage_jobs: false"):
        scenario("scheduler.manage_jobs=false")
    with pytest.raises(ScenarioError, match=r"load.mix\[0\] needs count and per_second"):
        scenario("load.mix=[{pods: 2}]")


def test_a_cluster_without_jobs_leaves_the_scheduler_as_it_was():
    assert loading.load("quick").scenario.scheduler.manage_jobs is False


def test_kueue_baseline_as_jobs_keeps_kueues_classes_and_counts_with_one_pod_each():
    plan = plans.from_scenario(loading.load("kueue-baseline-jobs").scenario)
    assert plan.total_jobs == 15_000 and plan.total_pods == 15_000
    assert [c.name for c in plan.arrivals.classes] == ["small", "medium", "large"]
    assert {shape.pods for shape in plan.shapes.values()} == {1}


def test_a_class_ready_late_or_never_carries_kwoks_ready_after_on_its_pods():
    plan = plans.from_scenario(scenario(
        "load.mix=[{pods: 1, cpu: '1', runtime_seconds: 1, per_second: 1, count: 1, ready_after_seconds: 2.5}, "
        "{pods: 1, cpu: '1', runtime_seconds: 1, per_second: 1, count: 1, ready_after_seconds: never}, "
        "{pods: 1, cpu: '1', runtime_seconds: 1, per_second: 1, count: 1}]"))
    ready_after = {}
    for creation in plan.schedule():
        job = plans.job_manifest(creation, plan.shapes[creation.workload_class.name])
        annotations = job["spec"]["template"]["metadata"]["annotations"]
        ready_after[creation.workload_class.name] = annotations.get(kwokconfig.READY_AFTER_ANNOTATION)
    assert sorted(ready_after.values(), key=str) == ["2500ms", None, kwokconfig.READY_NEVER]


COST_10K = Path(__file__).parents[3] / "results" / "lifecycle" / "pods-ready-cost-10k.yaml"


def test_jobs_go_only_to_the_phases_local_queues_and_the_backlog_to_its_own():
    loaded = loading.load(str(COST_10K), []).scenario
    plan = plans.from_scenario(loaded, only=loaded.phases["jobs"].local_queues)
    assert {c.queue.local_queue for c in plan.schedule()} == {"lq"} and plan.total_jobs == 1000
    assert len(plans.from_scenario(loaded).arrivals.queues) == 2, "no selection: every LocalQueue"
    assert loaded.phases["backlog"].local_queues == ("lq-backlog",)


@pytest.mark.parametrize("override, message", [
    ("phases.jobs.local_queues=[lq-nowhere]", "local_queues names 'lq-nowhere', not in queues.local_queues"),
    ("phases.backlog.local_queues=[lq-nowhere]", "local_queues names 'lq-nowhere'"),
    ("phases.backlog.bulk=false", "fill.local_queues is read only with bulk: true"),
])
def test_a_phase_naming_a_local_queue_the_scenario_has_not_is_refused_in_one_line(override, message):
    with pytest.raises(ScenarioError, match=message):
        loading.load(str(COST_10K), [override])
