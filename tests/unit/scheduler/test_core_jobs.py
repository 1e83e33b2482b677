"""The job integration's pure part: a Job's Workload, and the step each (Job, Workload) state calls for."""

from __future__ import annotations

import copy
import dataclasses
import hashlib

import pytest

from scheduler.core import conversion, jobs
from scheduler.core.kinds import ResourceFlavor
from scheduler.core.topologies import DomainAssignment, TopologyAssignment
from scheduler.core.workloads import Admission, PodSetAssignment

FLAVORS = {"on-demand": ResourceFlavor("on-demand", {"pool": "on-demand", "zone": "a"}),
           "spot": ResourceFlavor("spot", {"pool": "spot"})}


class JobBuilder:
    """A batch/v1 Job as the API returns it, in the spirit of Kueue's testingjob.MakeJob."""

    def __init__(self, name: str = "train", namespace: str = "ns") -> None:
        self._obj = {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "resourceVersion": "7",
                         "labels": {jobs.QUEUE_LABEL: "lq"}},
            "spec": {"suspend": True, "parallelism": 2, "completions": 4, "template": {
                "metadata": {"labels": {"app": "train", "batch.kubernetes.io/job-name": name,
                                        "controller-uid": f"uid-{name}"}},
                "spec": {"restartPolicy": "Never", "containers": [
                    {"name": "c", "image": "x", "resources": {"requests": {"cpu": "500m"}}}]}}},
            "status": {},
        }

    def set(self, path: str, value) -> JobBuilder:
        *parents, leaf = path.split(".")
        node = self._obj
        for part in parents:
            node = node.setdefault(part, {})
        if value is None:
            node.pop(leaf, None)
        else:
            node[leaf] = value
        return self

    def selector(self, **labels: str) -> JobBuilder:
        return self.set("spec.template.spec.nodeSelector", dict(labels))

    def running(self, active: int = 2) -> JobBuilder:
        return self.set("spec.suspend", False).set("status.startTime", "2026-01-01T00:00:00Z").set("status.active",
                                                                                                  active)

    def condition(self, kind: str, status: str = "True", message: str = "") -> JobBuilder:
        conditions = self._obj["status"].setdefault("conditions", [])
        conditions.append({"type": kind, "status": status, "message": message})
        return self

    def obj(self) -> dict:
        return copy.deepcopy(self._obj)

    def job(self) -> jobs.Job:
        return jobs.job_from_dict(self.obj())


def workload_of(builder: JobBuilder, admitted_to: str | None = None, finished: bool = False, active: bool = True):
    """The core Workload the integration creates for the Job, optionally admitted to a flavor."""
    workload = conversion.workload_from_dict(jobs.workload_for(builder.obj()))
    admission = None
    if admitted_to is not None:
        admission = Admission("cq", (PodSetAssignment("main", {"cpu": admitted_to}, {"cpu": 1000}, 2),))
    return dataclasses.replace(workload, admission=admission, finished=finished, active=active)


# -- the Workload of a Job -----------------------------------------------------------------------

def test_the_workload_is_named_and_owned_as_kueue_does():
    workload = jobs.workload_for(JobBuilder("train").obj())
    meta = workload["metadata"]
    # Kueue's GetWorkloadNameForOwnerWithGVK("train", "uid-train", batch/v1 Job).
    assert meta["name"] == "job-train-" + hashlib.sha1(b"Job\nbatch\ntrain\nuid-train").hexdigest()[:5]
    assert meta["namespace"] == "ns"
    assert meta["labels"] == {jobs.JOB_UID_LABEL: "uid-train"}
    assert meta["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "uid-train",
                                        "controller": True, "blockOwnerDeletion": True}]
    assert jobs.owner_job(workload) == ("train", "uid-train")
    assert workload["spec"]["queueName"] == "lq"


def test_a_recreated_job_gets_another_workload_and_long_names_are_cut():
    assert jobs.workload_name("train", "uid-1") != jobs.workload_name("train", "uid-2")
    long = jobs.workload_name("x" * 300, "uid")
    assert len(long) == 253 and long.startswith("job-xxx")


@pytest.mark.parametrize("parallelism, completions, count", [
    (2, 4, 2), (4, 2, 2), (3, None, 3), (None, None, 1), (None, 5, 1),
])
def test_the_pod_set_counts_min_of_parallelism_and_completions(parallelism, completions, count):
    job = JobBuilder().set("spec.parallelism", parallelism).set("spec.completions", completions).obj()
    pod_set = jobs.workload_for(job)["spec"]["podSets"][0]
    assert (pod_set["name"], pod_set["count"]) == ("main", count)


def test_the_pod_set_template_is_the_jobs_without_the_labels_the_job_controller_manages():
    obj = JobBuilder().selector(disk="ssd").obj()
    template = jobs.workload_for(obj)["spec"]["podSets"][0]["template"]
    assert template["metadata"]["labels"] == {"app": "train"}
    assert template["spec"] == obj["spec"]["template"]["spec"]
    assert obj["spec"]["template"]["metadata"]["labels"]["controller-uid"] == "uid-train", "the Job is not changed"
    workload = conversion.workload_from_dict(jobs.workload_for(obj))
    assert workload.pod_sets[0].requests == (("cpu", 500),)
    assert workload.pod_sets[0].node_selector == (("disk", "ssd"),)


def test_a_priority_class_label_becomes_the_workloads_priority_class():
    obj = JobBuilder().obj()
    obj["metadata"]["labels"] = {jobs.QUEUE_LABEL: "lq", jobs.PRIORITY_CLASS_LABEL: "high"}
    spec = jobs.workload_for(obj)["spec"]
    assert spec["priorityClassRef"] == {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"}
    assert conversion.workload_from_dict(jobs.workload_for(obj)).priority_class == "high"
    assert "priorityClassRef" not in jobs.workload_for(JobBuilder().obj())["spec"]


def test_only_jobs_naming_a_queue_are_managed_and_other_owners_are_not_jobs():
    assert jobs.is_managed(JobBuilder().obj())
    assert not jobs.is_managed(JobBuilder().set("metadata.labels", {"app": "x"}).obj())
    workload = jobs.workload_for(JobBuilder().obj())
    workload["metadata"]["ownerReferences"][0]["kind"] = "JobSet"
    assert jobs.owner_job(workload) is None
    assert jobs.owner_job({"metadata": {}}) is None


def test_job_state_is_read_from_spec_and_status():
    job = JobBuilder().running(active=3).selector(zone="a").condition("Failed", "True", "BackoffLimitExceeded").job()
    assert (job.suspended, job.started, job.active_pods) == (False, True, 3)
    assert job.finish == jobs.Finish(False, "BackoffLimitExceeded")
    assert job.node_selector == (("zone", "a"),)
    assert JobBuilder().condition("Complete", "False").job().finish is None
    assert JobBuilder().condition("Complete").job().finish == jobs.Finish(True, "")


# -- the step each state calls for ---------------------------------------------------------------

def _step_name(step) -> str | None:
    return None if step is None else type(step).__name__


STATES = [
    # (what, job, workload, expected step)
    ("a new suspended job gets its workload", JobBuilder(), None, "CreateWorkload"),
    ("an unsuspended job without a workload is not ours (no webhook suspended it)",
     JobBuilder().running(), None, None),
    ("pending workload, suspended job: wait", JobBuilder(), "pending", None),
    ("admitted workload, suspended job: start it", JobBuilder(), "admitted", "StartJob"),
    ("admitted workload, running job: nothing", JobBuilder().running().selector(pool="spot"), "admitted", None),
    ("evicted workload (admission cleared), running job: stop it", JobBuilder().running().selector(pool="spot"),
     "pending", "StopJob"),
    ("inactive workload still admitted, running job: stop it", JobBuilder().running().selector(pool="spot"),
     "inactive", "StopJob"),
    ("stopped job that had started: clear startTime before the selector may change",
     JobBuilder().selector(pool="spot").set("status.startTime", "2026-01-01T00:00:00Z"), "pending", "ClearStartTime"),
    ("stopped job whose pods are still going: wait", JobBuilder().selector(pool="spot").set("status.active", 1),
     "pending", None),
    ("stopped job, pods gone: restore its selector", JobBuilder().selector(pool="spot"), "pending", "RestoreJob"),
    ("stopped job with its selector back: nothing", JobBuilder(), "pending", None),
    ("readmitted before its selector was restored, startTime set: clear it first",
     JobBuilder().selector(pool="spot").set("status.startTime", "2026-01-01T00:00:00Z"), "admitted-on-demand",
     "ClearStartTime"),
    ("complete job finishes its workload", JobBuilder().running(0).condition("Complete"), "admitted",
     "FinishWorkload"),
    ("failed job finishes its workload, even one never admitted", JobBuilder().condition("Failed"), "pending",
     "FinishWorkload"),
    ("finished job with a finished workload: nothing", JobBuilder().condition("Complete"), "finished", None),
    ("finished job whose workload is gone: nothing", JobBuilder().condition("Complete"), None, None),
    ("finished workload, job still running: nothing (its end comes from the job)",
     JobBuilder().running(), "finished", None),
]


@pytest.mark.parametrize("what, builder, state, expected", STATES, ids=[s[0] for s in STATES])
def test_the_step_each_state_calls_for(what, builder, state, expected):
    workload = {
        None: None,
        "pending": lambda: workload_of(JobBuilder()),
        "admitted": lambda: workload_of(JobBuilder(), "spot"),
        "admitted-on-demand": lambda: workload_of(JobBuilder(), "on-demand"),
        "inactive": lambda: workload_of(JobBuilder(), "spot", active=False),
        "finished": lambda: workload_of(JobBuilder(), "spot", finished=True),
    }[state]
    step = jobs.next_step(builder.job(), workload() if workload else None, FLAVORS)
    assert _step_name(step) == expected


def test_start_merges_the_flavor_labels_into_the_selector_and_unsuspends_guarded_by_resource_version():
    builder = JobBuilder().selector(disk="ssd")
    step = jobs.next_step(builder.job(), workload_of(builder, "on-demand"), FLAVORS)
    assert step.node_selector == (("disk", "ssd"), ("pool", "on-demand"), ("zone", "a"))
    assert jobs.start_patch(step) == {
        "metadata": {"resourceVersion": "7"},
        "spec": {"suspend": False, "template": {"metadata": {"labels": {jobs.POD_SET_LABEL: "main"}},
                                                "spec": {"nodeSelector": {"pool": "on-demand", "zone": "a"}}}},
    }


def test_a_flavor_deleted_meanwhile_adds_no_labels():
    builder = JobBuilder()
    step = jobs.next_step(builder.job(), workload_of(builder, "gone"), FLAVORS)
    assert isinstance(step, jobs.StartJob) and step.node_selector == ()


def test_stop_then_restore_puts_back_the_selector_the_job_was_created_with():
    created = JobBuilder().selector(disk="ssd")
    workload = workload_of(created)  # evicted: no admission
    running = JobBuilder().running().selector(disk="ssd", pool="on-demand", zone="a")
    stop = jobs.next_step(running.job(), workload, FLAVORS)
    assert jobs.stop_patch(stop) == {"metadata": {"resourceVersion": "7"}, "spec": {"suspend": True}}

    started = JobBuilder().selector(disk="ssd", pool="on-demand", zone="a").set("status.startTime", "2026-01-01T00:00:00Z")
    clear = jobs.next_step(started.job(), workload, FLAVORS)
    assert jobs.clear_start_time_patch(clear) == {"metadata": {"resourceVersion": "7"}, "status": {"startTime": None}}

    stopped = JobBuilder().selector(disk="ssd", pool="on-demand", zone="a").set(
        "spec.template.metadata.labels", {"app": "train", jobs.POD_SET_LABEL: "main"})
    restore = jobs.next_step(stopped.job(), workload, FLAVORS)
    assert restore.node_selector == (("disk", "ssd"),)
    assert jobs.restore_patch(restore) == {
        "metadata": {"resourceVersion": "7"},
        "spec": {"template": {"metadata": {"labels": {jobs.POD_SET_LABEL: None}},
                              "spec": {"nodeSelector": {"pool": None, "zone": None}}}},
    }


@pytest.mark.parametrize("current, desired, patch", [
    ({}, {"a": "1"}, {"a": "1"}),
    ({"a": "1"}, {}, {"a": None}),
    ({"a": "1", "b": "2"}, {"a": "1", "b": "3"}, {"b": "3"}),
    ({"a": "1"}, {"a": "1"}, {}),
])
def test_selector_patch_sets_changed_keys_and_deletes_removed_ones(current, desired, patch):
    assert jobs.selector_patch(tuple(sorted(current.items())), tuple(sorted(desired.items()))) == patch


def test_finished_condition_says_how_the_job_ended():
    ok = jobs.finished_condition(jobs.Finish(True, ""), "2026-01-01T00:00:00Z")
    assert (ok["type"], ok["status"], ok["reason"]) == ("Finished", "True", "Succeeded")
    failed = jobs.finished_condition(jobs.Finish(False, "BackoffLimitExceeded"), "2026-01-01T00:00:00Z")
    assert (failed["reason"], failed["message"]) == ("Failed", "BackoffLimitExceeded")


def test_a_finished_workload_releases_its_quota_in_the_core():
    from scheduler.core.scheduling import run_cycle
    from scheduler_builders import ClusterQueueBuilder, manager_with

    manager = manager_with(ClusterQueueBuilder("cq").flavors(("spot", {"cpu": "1"})).obj(), flavors=("spot",))
    first = conversion.workload_from_dict(jobs.workload_for(JobBuilder("first").obj()))
    second = conversion.workload_from_dict(jobs.workload_for(JobBuilder("second").obj()))
    manager.add_workload(dataclasses.replace(first, queue_name="lq"))
    manager.add_workload(dataclasses.replace(second, queue_name="lq", creation_timestamp=1.0))
    admitted = [d.workload.name for d in run_cycle(manager, now=1) if type(d).__name__ == "Admit"]
    assert admitted == [first.name], "1 cpu: two pods of 500m fill it"
    step = jobs.next_step(JobBuilder("first").running(0).condition("Complete").job(), manager.workload(first.key),
                          FLAVORS)
    assert isinstance(step, jobs.FinishWorkload)
    manager.mark_finished(first.key)  # what the controller does when the Finished condition comes back
    assert [d.workload.name for d in run_cycle(manager, now=2) if type(d).__name__ == "Admit"] == [second.name]


# -- topology-aware scheduling: the Job's request, and the gate a topology-placed start adds -------

def test_the_pod_set_topology_request_comes_from_the_template_annotations_and_names_the_completion_index():
    plain = jobs.workload_for(JobBuilder().obj())["spec"]["podSets"][0]
    assert plain["topologyRequest"] == {"podIndexLabel": jobs.COMPLETION_INDEX_LABEL}, "Kueue's Job with TAS on"
    assert conversion.workload_from_dict(jobs.workload_for(JobBuilder().obj())).pod_sets[0].topology_request is None

    both = {jobs.REQUIRED_TOPOLOGY_ANNOTATION: "rack", jobs.PREFERRED_TOPOLOGY_ANNOTATION: "block",
            jobs.SLICE_REQUIRED_TOPOLOGY_ANNOTATION: "host", jobs.SLICE_SIZE_ANNOTATION: "2",
            jobs.GROUP_NAME_ANNOTATION: "g"}
    request = jobs.workload_for(JobBuilder().set("spec.template.metadata.annotations", both).obj())[
        "spec"]["podSets"][0]["topologyRequest"]
    assert request == {"required": "rack", "podSetSliceRequiredTopology": "host", "podSetSliceSize": 2,
                       "podIndexLabel": jobs.COMPLETION_INDEX_LABEL, "podSetGroupName": "g"}, "required wins"
    unconstrained = {jobs.UNCONSTRAINED_TOPOLOGY_ANNOTATION: "True", jobs.GROUP_NAME_ANNOTATION: "g"}
    request = jobs.workload_for(JobBuilder().set("spec.template.metadata.annotations", unconstrained).obj())[
        "spec"]["podSets"][0]["topologyRequest"]
    assert request == {"unconstrained": True, "podIndexLabel": jobs.COMPLETION_INDEX_LABEL}, "a group needs a level"
    with pytest.raises(ValueError, match="not a boolean"):
        jobs.workload_for(JobBuilder().set("spec.template.metadata.annotations",
                                           {jobs.UNCONSTRAINED_TOPOLOGY_ANNOTATION: "yes"}).obj())


def _placed(builder: JobBuilder, flavor: str = "spot"):
    """The Job's Workload admitted to a TAS flavor: two pods in rack r1."""
    placement = TopologyAssignment(("rack",), (DomainAssignment(("r1",), 2),))
    workload = workload_of(builder)
    assignment = PodSetAssignment("main", {"cpu": flavor}, {"cpu": 1000}, 2, placement)
    return dataclasses.replace(workload, admission=Admission("cq", (assignment,)))


def test_a_start_placed_by_topology_gates_the_pods_and_names_the_workload():
    builder = JobBuilder().set("spec.template.spec.schedulingGates", [{"name": "user/gate"}])
    workload = _placed(builder)
    step = jobs.next_step(builder.job(), workload, FLAVORS)
    assert isinstance(step, jobs.StartJob)
    assert step.template.scheduling_gates == ("user/gate", jobs.TOPOLOGY_GATE)
    template = jobs.start_patch(step)["spec"]["template"]
    assert template["metadata"] == {
        "labels": {jobs.POD_SET_LABEL: "main"},
        "annotations": {jobs.UNCONSTRAINED_TOPOLOGY_ANNOTATION: "true", jobs.WORKLOAD_ANNOTATION: workload.name}}
    assert template["spec"]["schedulingGates"] == [{"name": "user/gate"}, {"name": jobs.TOPOLOGY_GATE}]


def test_an_explicit_request_gets_no_unconstrained_annotation():
    builder = JobBuilder().set("spec.template.metadata.annotations", {jobs.REQUIRED_TOPOLOGY_ANNOTATION: "rack"})
    step = jobs.next_step(builder.job(), _placed(builder), FLAVORS)
    assert dict(step.template.annotations).keys() == {jobs.WORKLOAD_ANNOTATION}


def test_a_stop_takes_back_the_gate_label_and_annotations_once_the_pods_are_gone():
    created = JobBuilder().set("spec.template.metadata.annotations", {jobs.UNCONSTRAINED_TOPOLOGY_ANNOTATION: "True"})
    workload = _placed(created)
    started_obj = created.obj()
    template = started_obj["spec"]["template"]
    template["metadata"]["labels"][jobs.POD_SET_LABEL] = "main"
    template["metadata"]["annotations"][jobs.WORKLOAD_ANNOTATION] = workload.name
    template["spec"]["schedulingGates"] = [{"name": jobs.TOPOLOGY_GATE}]
    template["spec"]["nodeSelector"] = {"pool": "spot"}
    started = jobs.job_from_dict(started_obj)
    again = jobs.next_step(started, workload, FLAVORS)
    assert jobs.start_patch(again)["spec"]["template"] == {"spec": {"nodeSelector": {}}}, "a user's True is kept"
    evicted = dataclasses.replace(workload, admission=None)
    restore = jobs.next_step(started, evicted, FLAVORS)
    assert jobs.restore_patch(restore)["spec"]["template"] == {
        "metadata": {"labels": {jobs.POD_SET_LABEL: None}, "annotations": {jobs.WORKLOAD_ANNOTATION: None}},
        "spec": {"nodeSelector": {"pool": None}, "schedulingGates": None}}
    restored = jobs.job_from_dict(created.obj())
    assert jobs.next_step(restored, evicted, FLAVORS) is None, "nothing more to take back"
