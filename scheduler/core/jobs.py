"""``batch/v1`` Jobs queued through a Workload, Kueue's job integration (pure: decides, never writes).

Facts carried over from Kueue (pkg/controller/jobs/job, pkg/controller/jobframework):

- a Job with the label ``kueue.x-k8s.io/queue-name`` is managed; it must be created suspended
  (Kueue's webhook suspends it; we have no webhook, so an unsuspended one is left alone);
- its Workload is named ``job-<job name>-<5 hex of a sha1 over kind, group, name, uid>``, is
  controlled by the Job (ownerReference, controller=true: the garbage collector deletes it with
  the Job), carries the label ``kueue.x-k8s.io/job-uid`` and one pod set ``main`` whose template
  is the Job's (without the labels the job controller manages) and whose count is
  min(parallelism, completions);
- admitted, the Job is unsuspended with the node labels of its assigned flavors merged into the
  pod template's nodeSelector; the Workload's pod set keeps the original, which is what a stop
  restores;
- a Job whose Complete or Failed condition is True finishes its Workload (``Finished``, reason
  ``Succeeded`` or ``Failed``), which releases its quota;
- a Workload that loses its admission (evicted) suspends its Job, and once the Job's pods are gone
  its nodeSelector is restored. Kubernetes lets a suspended Job's scheduling directives change only
  while ``status.startTime`` is unset, so that is cleared first, as Kueue does.

Where the reference scheduler differs: its eviction write clears the admission at once (quota is
released before the Job's pods are gone, where Kueue waits for the job reconciler to stop the Job);
flavor tolerations, partial admission, a changed parallelism and plain Pods are not handled.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.api import groups
from scheduler.core.kinds import ResourceFlavor
from scheduler.core.workloads import Workload

Obj = dict[str, Any]
Selector = tuple[tuple[str, str], ...]

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
POD_SET_NAME = "main"
JOB_API_VERSION = "batch/v1"
JOB_KIND = "Job"
FINISHED_SUCCEEDED = "Succeeded"
FINISHED_FAILED = "Failed"

# The job controller sets these on every pod template; a Workload's template leaves them out.
JOB_MANAGED_LABELS = ("job-name", "controller-uid", "batch.kubernetes.io/job-name",
                      "batch.kubernetes.io/controller-uid")
_HASH_LENGTH = 5
_MAX_PREFIX = 252 - _HASH_LENGTH  # 253 characters for an object name, less '-' and the hash


@dataclass(frozen=True, slots=True)
class Finish:
    succeeded: bool
    message: str


@dataclass(frozen=True, slots=True)
class Job:
    """What the integration reads of a Job."""

    namespace: str
    name: str
    uid: str
    resource_version: str
    queue_name: str
    suspended: bool
    finish: Finish | None
    """Set once a Complete or Failed condition is True."""
    pod_count: int
    node_selector: Selector
    started: bool
    """status.startTime is set (a suspended Job's nodeSelector is immutable until it is cleared)."""
    active_pods: int

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)


def is_managed(obj: Obj) -> bool:
    """A Job the integration queues: it names a LocalQueue."""
    return bool(((obj.get("metadata") or {}).get("labels") or {}).get(QUEUE_LABEL))


def _pod_count(spec: Obj) -> int:
    parallelism = spec.get("parallelism")
    count = 1 if parallelism is None else int(parallelism)  # the apiserver defaults it to 1
    completions = spec.get("completions")
    return count if completions is None else min(count, int(completions))


def job_from_dict(obj: Obj) -> Job:
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    finish = None
    for condition in status.get("conditions") or ():
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            finish = Finish(condition["type"] == "Complete", condition.get("message") or "")
            break
    pod_spec = (spec.get("template") or {}).get("spec") or {}
    return Job(
        namespace=meta.get("namespace", "default"), name=meta["name"], uid=meta.get("uid", ""),
        resource_version=meta.get("resourceVersion", ""),
        queue_name=(meta.get("labels") or {}).get(QUEUE_LABEL, ""),
        suspended=spec.get("suspend") is True, finish=finish, pod_count=_pod_count(spec),
        node_selector=tuple(sorted((pod_spec.get("nodeSelector") or {}).items())),
        started=bool(status.get("startTime")), active_pods=int(status.get("active") or 0))


def workload_name(job_name: str, job_uid: str) -> str:
    """Kueue's name for a Job's Workload: stable for one Job, different for a recreated one."""
    digest = hashlib.sha1("\n".join((JOB_KIND, "batch", job_name, job_uid)).encode()).hexdigest()
    return f"{('job-' + job_name)[:_MAX_PREFIX]}-{digest[:_HASH_LENGTH]}"


def owner_job(workload: Obj) -> tuple[str, str] | None:
    """(name, uid) of the Job that controls a Workload, or None for any other Workload."""
    for ref in (workload.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller") and ref.get("kind") == JOB_KIND and ref.get("apiVersion") == JOB_API_VERSION:
            return ref.get("name", ""), ref.get("uid", "")
    return None


def workload_for(obj: Obj) -> Obj:
    """The Workload that queues a Job (``obj`` as the API returned it: it has a uid)."""
    meta = obj["metadata"]
    spec = obj.get("spec") or {}
    template = dict(spec.get("template") or {})
    template_meta = dict(template.get("metadata") or {})
    labels = {k: v for k, v in (template_meta.get("labels") or {}).items() if k not in JOB_MANAGED_LABELS}
    if labels:
        template_meta["labels"] = labels
    else:
        template_meta.pop("labels", None)
    template["metadata"] = template_meta
    job_labels = meta.get("labels") or {}
    workload_spec: Obj = {
        "queueName": job_labels.get(QUEUE_LABEL, ""),
        "podSets": [{"name": POD_SET_NAME, "count": _pod_count(spec), "template": template}],
    }
    priority_class = job_labels.get(PRIORITY_CLASS_LABEL)
    if priority_class:
        workload_spec["priorityClassRef"] = {"group": groups.GROUP, "kind": "WorkloadPriorityClass",
                                             "name": priority_class}
    return {
        "apiVersion": groups.API_VERSION, "kind": "Workload",
        "metadata": {
            "name": workload_name(meta["name"], meta["uid"]),
            "namespace": meta.get("namespace", "default"),
            "labels": {JOB_UID_LABEL: meta["uid"]},
            "ownerReferences": [{"apiVersion": JOB_API_VERSION, "kind": JOB_KIND, "name": meta["name"],
                                 "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": workload_spec,
    }


# -- what a Job and its Workload call for ------------------------------------------------------

@dataclass(frozen=True, slots=True)
class CreateWorkload:
    job: Job


@dataclass(frozen=True, slots=True)
class StartJob:
    """Unsuspend, with the flavors' node labels merged into the pod template's nodeSelector."""

    job: Job
    node_selector: Selector


@dataclass(frozen=True, slots=True)
class StopJob:
    job: Job


@dataclass(frozen=True, slots=True)
class ClearStartTime:
    """Unset status.startTime of a stopped Job so that its nodeSelector may change again."""

    job: Job


@dataclass(frozen=True, slots=True)
class RestoreJob:
    """Put the nodeSelector the Job was created with back on a stopped Job."""

    job: Job
    node_selector: Selector


@dataclass(frozen=True, slots=True)
class FinishWorkload:
    job: Job
    workload: Workload
    finish: Finish


Step = CreateWorkload | StartJob | StopJob | ClearStartTime | RestoreJob | FinishWorkload


def original_selector(workload: Workload) -> Selector:
    """The nodeSelector the Job was created with: its Workload's pod set keeps it."""
    return workload.pod_sets[0].node_selector if workload.pod_sets else ()


def admitted_selector(workload: Workload, flavors: Mapping[str, ResourceFlavor]) -> Selector:
    """The original nodeSelector with the node labels of every flavor assigned to the pod set.

    The flavor assigner only picks flavors whose labels agree with the pod set's selector, so a
    merge never contradicts it; a flavor deleted meanwhile adds nothing.
    """
    merged = dict(original_selector(workload))
    if workload.admission is not None:
        for assignment in workload.admission.pod_set_assignments:
            for flavor_name in sorted(set(assignment.flavors.values())):
                flavor = flavors.get(flavor_name)
                if flavor is not None:
                    merged.update(flavor.node_labels)
    return tuple(sorted(merged.items()))


def next_step(job: Job, workload: Workload | None, flavors: Mapping[str, ResourceFlavor]) -> Step | None:
    """The one write that brings a Job and its Workload closer to agreement, or None."""
    if job.finish is not None:
        if workload is not None and not workload.finished:
            return FinishWorkload(job, workload, job.finish)
        return None
    if workload is None:
        return CreateWorkload(job) if job.suspended else None
    if workload.finished:
        return None
    if workload.admission is not None and workload.active:
        if not job.suspended:
            return None
        selector = admitted_selector(workload, flavors)
        # Admitted again before a stop was undone: the selector can change only once startTime is unset.
        if job.started and job.node_selector != selector:
            return ClearStartTime(job)
        return StartJob(job, selector)
    if not job.suspended:
        return StopJob(job)
    original = original_selector(workload)
    if job.node_selector == original:
        return None
    if job.started:
        return ClearStartTime(job)
    return RestoreJob(job, original) if job.active_pods == 0 else None


# -- the bodies of those writes ----------------------------------------------------------------

def selector_patch(current: Selector, desired: Selector) -> dict[str, str | None]:
    """A JSON merge patch of a nodeSelector from ``current`` to ``desired`` (None deletes a key)."""
    want = dict(desired)
    patch: dict[str, str | None] = {k: None for k, _ in current if k not in want}
    have = dict(current)
    patch.update({k: v for k, v in want.items() if have.get(k) != v})
    return patch


def _guarded(job: Job, body: Obj) -> Obj:
    """A merge patch that fails (409) if the Job changed since it was read, as Kueue's updates do."""
    return {"metadata": {"resourceVersion": job.resource_version}, **body}


def start_patch(step: StartJob) -> Obj:
    template = {"spec": {"nodeSelector": selector_patch(step.job.node_selector, step.node_selector)}}
    return _guarded(step.job, {"spec": {"suspend": False, "template": template}})


def stop_patch(step: StopJob) -> Obj:
    return _guarded(step.job, {"spec": {"suspend": True}})


def clear_start_time_patch(step: ClearStartTime) -> Obj:
    """For the status subresource."""
    return _guarded(step.job, {"status": {"startTime": None}})


def restore_patch(step: RestoreJob) -> Obj:
    template = {"spec": {"nodeSelector": selector_patch(step.job.node_selector, step.node_selector)}}
    return _guarded(step.job, {"spec": {"template": template}})


def finished_condition(finish: Finish, now_text: str) -> Obj:
    """Kueue's Finished condition for a Workload whose Job ended (``now_text``: RFC 3339)."""
    reason = FINISHED_SUCCEEDED if finish.succeeded else FINISHED_FAILED
    message = finish.message or ("Job finished successfully" if finish.succeeded else "Job failed")
    return {"type": "Finished", "status": "True", "reason": reason, "message": message,
            "lastTransitionTime": now_text}
