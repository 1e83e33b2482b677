"""``batch/v1`` Jobs queued through a Workload, Kueue's job integration (pure: decides, never writes).

Facts carried over from Kueue (pkg/controller/jobs/job, pkg/controller/jobframework):

- a Job with the label ``kueue.x-k8s.io/queue-name`` is managed; it must be created suspended
  (Kueue's webhook suspends it; we have no webhook, so an unsuspended one is left alone);
- its Workload is named ``job-<job name>-<5 hex of a sha1 over kind, group, name, uid>``, is
  controlled by the Job (ownerReference, controller=true: the garbage collector deletes it with
  the Job), carries the label ``kueue.x-k8s.io/job-uid`` and one pod set ``main`` whose template
  is the Job's (without the labels the job controller manages) and whose count is
  min(parallelism, completions);
- its pod set's ``topologyRequest`` comes from the template's annotations
  (``kueue.x-k8s.io/podset-required-topology`` and the others, jobframework/tas.go) and always names the
  Job's completion index as the pod index label, as Kueue's Job integration does with TAS on (its default);
- admitted (``Admitted=True``: with admission checks that is after the reservation, once all are Ready;
  a Job whose Workload only holds quota stays suspended, reconciler.go steps 7 and 8), the Job is unsuspended with the node labels of its assigned flavors merged into the
  pod template's nodeSelector and the label ``kueue.x-k8s.io/podset``; a pod set placed by topology
  also gets the scheduling gate ``kueue.x-k8s.io/topology`` and the annotation ``kueue.x-k8s.io/workload``
  (and ``podset-unconstrained-topology: "true"`` when it asked for no topology), so that its pods wait
  until the topology ungater (``ungating``) gives each its domain; the Workload's pod set keeps the
  original, which is what a stop restores (podset.FromAssignment, podset.RestorePodSpec);
- a Job whose Complete or Failed condition is True finishes its Workload (``Finished``, reason
  ``Succeeded`` or ``Failed``), which releases its quota;
- a Workload that loses its admission (evicted) suspends its Job, and once the Job's pods are gone
  its nodeSelector is restored. Kubernetes lets a suspended Job's scheduling directives change only
  while ``status.startTime`` is unset, so that is cleared first, as Kueue does.

Where the reference scheduler differs: its eviction write clears the admission at once (quota is
released before the Job's pods are gone, where Kueue waits for the job reconciler to stop the Job);
flavor tolerations, partial admission, a changed parallelism and plain Pods are not handled. A stop
restores the owned labels and annotations from what the Workload's pod set implies, not from its
template (Kueue's RestorePodSpec puts back the whole template's labels and annotations): a user's own
``kueue.x-k8s.io/podset`` label, or an unconstrained-topology annotation beside a required one, is
dropped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.api import groups
from scheduler.core import podsready
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

POD_SET_LABEL = "kueue.x-k8s.io/podset"
TOPOLOGY_GATE = "kueue.x-k8s.io/topology"
WORKLOAD_ANNOTATION = "kueue.x-k8s.io/workload"
REQUIRED_TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED_TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE_REQUIRED_TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE_ANNOTATION = "kueue.x-k8s.io/podset-slice-size"
GROUP_NAME_ANNOTATION = "kueue.x-k8s.io/podset-group-name"
COMPLETION_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
"""An Indexed Job's pods carry their index here: the pod index label of a Job's topology request."""
OWNED_LABELS = (POD_SET_LABEL,)
OWNED_ANNOTATIONS = (UNCONSTRAINED_TOPOLOGY_ANNOTATION, WORKLOAD_ANNOTATION)
"""The template's labels and annotations a start writes and a stop takes back (no other key is read)."""

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
class Template:
    """What a start writes into a Job's pod template and a stop takes back (Kueue's podset.PodSetInfo,
    of the fields this integration sets): of labels and annotations only the owned keys."""

    node_selector: Selector = ()
    scheduling_gates: tuple[str, ...] = ()
    labels: Selector = ()
    annotations: Selector = ()


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
    template: Template
    started: bool
    """status.startTime is set (a suspended Job's nodeSelector is immutable until it is cleared)."""
    active_pods: int
    ready_pods: int = 0
    """status.ready + status.succeeded + the succeeded pods not yet counted (Kueue's Job.PodsReady sums these)."""

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    @property
    def node_selector(self) -> Selector:
        return self.template.node_selector


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
    pod_template = spec.get("template") or {}
    return Job(
        namespace=meta.get("namespace", "default"), name=meta["name"], uid=meta.get("uid", ""),
        resource_version=meta.get("resourceVersion", ""),
        queue_name=(meta.get("labels") or {}).get(QUEUE_LABEL, ""),
        suspended=spec.get("suspend") is True, finish=finish, pod_count=_pod_count(spec),
        template=template_from_dict(pod_template),
        started=bool(status.get("startTime")), active_pods=int(status.get("active") or 0),
        ready_pods=int(status.get("ready") or 0) + int(status.get("succeeded") or 0)
        + len((status.get("uncountedTerminatedPods") or {}).get("succeeded") or ()))


def template_from_dict(template: Obj) -> Template:
    meta = template.get("metadata") or {}
    pod_spec = template.get("spec") or {}
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    return Template(
        node_selector=tuple(sorted((pod_spec.get("nodeSelector") or {}).items())),
        scheduling_gates=tuple(g.get("name", "") for g in pod_spec.get("schedulingGates") or ()),
        labels=tuple(sorted((k, v) for k, v in labels.items() if k in OWNED_LABELS)),
        annotations=tuple(sorted((k, v) for k, v in annotations.items() if k in OWNED_ANNOTATIONS)))


def topology_request(annotations: Mapping[str, str]) -> Obj:
    """A Job's pod set ``topologyRequest`` from its template's annotations (Kueue's
    podSetTopologyRequestBuilder: required, else preferred, else unconstrained; the slice layer beside
    them; the pod index label always, which is why a Job's pod set always has a request)."""
    request: Obj = {}
    if REQUIRED_TOPOLOGY_ANNOTATION in annotations:
        request["required"] = annotations[REQUIRED_TOPOLOGY_ANNOTATION]
    elif PREFERRED_TOPOLOGY_ANNOTATION in annotations:
        request["preferred"] = annotations[PREFERRED_TOPOLOGY_ANNOTATION]
    elif UNCONSTRAINED_TOPOLOGY_ANNOTATION in annotations:
        request["unconstrained"] = _parse_bool(annotations[UNCONSTRAINED_TOPOLOGY_ANNOTATION])
    if SLICE_REQUIRED_TOPOLOGY_ANNOTATION in annotations and SLICE_SIZE_ANNOTATION in annotations:
        request["podSetSliceRequiredTopology"] = annotations[SLICE_REQUIRED_TOPOLOGY_ANNOTATION]
        request["podSetSliceSize"] = int(annotations[SLICE_SIZE_ANNOTATION])
    request["podIndexLabel"] = COMPLETION_INDEX_LABEL
    if GROUP_NAME_ANNOTATION in annotations and ("required" in request or "preferred" in request):
        request["podSetGroupName"] = annotations[GROUP_NAME_ANNOTATION]
    return request


_REQUEST_ANNOTATIONS = {"required": REQUIRED_TOPOLOGY_ANNOTATION, "preferred": PREFERRED_TOPOLOGY_ANNOTATION,
                        "unconstrained": UNCONSTRAINED_TOPOLOGY_ANNOTATION,
                        "podSetSliceRequiredTopology": SLICE_REQUIRED_TOPOLOGY_ANNOTATION,
                        "podSetSliceSize": SLICE_SIZE_ANNOTATION, "podSetGroupName": GROUP_NAME_ANNOTATION}


def topology_annotations(request: Mapping[str, object]) -> dict[str, str]:
    """The pod template annotations that ask for ``request`` (a ``topologyRequest`` in Kueue's field
    names): what a user writes on a Job so that ``topology_request`` reads it back."""
    return {_REQUEST_ANNOTATIONS[field]: (str(value).lower() if isinstance(value, bool) else str(value))
            for field, value in request.items() if field in _REQUEST_ANNOTATIONS and value is not None}


def _parse_bool(text: str) -> bool:
    """Go's strconv.ParseBool, which Kueue reads the annotation with (any other text: no Workload)."""
    if text in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if text in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    raise ValueError(f"{UNCONSTRAINED_TOPOLOGY_ANNOTATION}: {text!r} is not a boolean")


def _parses_as(text: str, value: bool) -> bool:
    try:
        return _parse_bool(text) == value
    except ValueError:
        return False


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
        "podSets": [{"name": POD_SET_NAME, "count": _pod_count(spec), "template": template,
                     "topologyRequest": topology_request(template_meta.get("annotations") or {})}],
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
    """Unsuspend, with the template as admission makes it (``admitted_template``)."""

    job: Job
    template: Template

    @property
    def node_selector(self) -> Selector:
        return self.template.node_selector


@dataclass(frozen=True, slots=True)
class StopJob:
    job: Job


@dataclass(frozen=True, slots=True)
class ClearStartTime:
    """Unset status.startTime of a stopped Job so that its nodeSelector may change again."""

    job: Job


@dataclass(frozen=True, slots=True)
class RestoreJob:
    """Put the template the Job was created with back on a stopped Job."""

    job: Job
    template: Template

    @property
    def node_selector(self) -> Selector:
        return self.template.node_selector


@dataclass(frozen=True, slots=True)
class FinishWorkload:
    job: Job
    workload: Workload
    finish: Finish


@dataclass(frozen=True, slots=True)
class SetPodsReady:
    """Write the Workload's PodsReady condition as the Job's pods make it (``pods_ready_condition``)."""

    job: Job
    workload: Workload
    status: str
    reason: str
    message: str


Step = CreateWorkload | StartJob | StopJob | ClearStartTime | RestoreJob | FinishWorkload | SetPodsReady

# generatePodsReadyCondition's messages (pkg/controller/jobframework/reconciler.go).
NOT_READY_MESSAGE = "Not all pods are ready or succeeded"
WAITING_FOR_RECOVERY_MESSAGE = "At least one pod has failed, waiting for recovery"
READY_MESSAGE = "All pods reached readiness and the workload is running"
STARTED = "Started"
RECOVERED = "Recovered"


def pods_ready_condition(job: Job, workload: Workload,
                         current: podsready.PodsReadyCondition | None) -> tuple[str, str, str]:
    """(status, reason, message) of the PodsReady condition the Job's pods give its Workload, as Kueue's job
    reconciler writes it with waitForPodsReady on (generatePodsReadyCondition; Job.PodsReady: ready + succeeded
    pods reach min(parallelism, completions))."""
    if workload.admitted_since is None:  # not admitted (checks pending), or evicted and released
        return "False", podsready.WAIT_FOR_START, NOT_READY_MESSAGE
    if job.ready_pods >= job.pod_count:
        recovered = current is not None and current.reason in (podsready.WAIT_FOR_RECOVERY, RECOVERED)
        return "True", RECOVERED if recovered else STARTED, READY_MESSAGE
    if current is not None and (current.status == "True" or current.reason == podsready.WAIT_FOR_RECOVERY):
        return "False", podsready.WAIT_FOR_RECOVERY, WAITING_FOR_RECOVERY_MESSAGE
    return "False", podsready.WAIT_FOR_START, NOT_READY_MESSAGE


def original_template(job: Job, workload: Workload) -> Template:
    """The template the Job was created with: the Workload's pod set keeps its nodeSelector; of the owned
    keys only an unconstrained-topology annotation can be the user's (it made the pod set's request);
    its own scheduling gates are the Job's without the topology gate."""
    pod_set = workload.pod_sets[0] if workload.pod_sets else None
    request = pod_set.topology_request if pod_set is not None else None
    annotations: Selector = ()
    if request is not None and request.unconstrained is not None and request.required is None \
            and request.preferred is None:
        written = dict(job.template.annotations).get(UNCONSTRAINED_TOPOLOGY_ANNOTATION)
        text = written if written is not None and _parses_as(written, request.unconstrained) else \
            ("true" if request.unconstrained else "false")
        annotations = ((UNCONSTRAINED_TOPOLOGY_ANNOTATION, text),)
    return Template(node_selector=pod_set.node_selector if pod_set is not None else (),
                    scheduling_gates=tuple(g for g in job.template.scheduling_gates if g != TOPOLOGY_GATE),
                    annotations=annotations)


def admitted_template(job: Job, workload: Workload, flavors: Mapping[str, ResourceFlavor]) -> Template:
    """The original template with the node labels of every flavor assigned to the pod set and the pod set
    label; placed by topology, also the topology gate and the Workload's name (podset.FromAssignment).

    The flavor assigner only picks flavors whose labels agree with the pod set's selector, so a
    merge never contradicts it; a flavor deleted meanwhile adds nothing.
    """
    original = original_template(job, workload)
    merged = dict(original.node_selector)
    gates = original.scheduling_gates
    annotations = dict(original.annotations)
    if workload.admission is not None:
        for assignment in workload.admission.pod_set_assignments:
            for flavor_name in sorted(set(assignment.flavors.values())):
                flavor = flavors.get(flavor_name)
                if flavor is not None:
                    merged.update(flavor.node_labels)
            if assignment.topology_assignment is not None:
                gates = (*gates, TOPOLOGY_GATE)
                annotations[WORKLOAD_ANNOTATION] = workload.name
                request = workload.pod_sets[0].topology_request if workload.pod_sets else None
                if request is None or (request.required is None and request.preferred is None
                                       and request.unconstrained is None):
                    annotations[UNCONSTRAINED_TOPOLOGY_ANNOTATION] = "true"  # implicit TAS
    return Template(tuple(sorted(merged.items())), gates, ((POD_SET_LABEL, POD_SET_NAME),),
                    tuple(sorted(annotations.items())))


def next_step(job: Job, workload: Workload | None, flavors: Mapping[str, ResourceFlavor],
              wait_for_pods_ready: bool = False, pods_ready: podsready.PodsReadyCondition | None = None) -> Step | None:
    """The one write that brings a Job and its Workload closer to agreement, or None. ``pods_ready``: the
    Workload's PodsReady condition (None: it has none), kept up with the Job's pods when ``wait_for_pods_ready``.
    Kueue's order: finish, create, then PodsReady before the admission is acted on (reconciler.go steps 3-8)."""
    if job.finish is not None:
        if workload is not None and not workload.finished:
            return FinishWorkload(job, workload, job.finish)
        return None
    if workload is None:
        return CreateWorkload(job) if job.suspended else None
    if workload.finished:
        return None
    if wait_for_pods_ready:
        status, reason, message = pods_ready_condition(job, workload, pods_ready)
        # Kueue writes only when no condition of this type, status and reason is there (HasConditionWithTypeAndReason)
        if pods_ready is None or (pods_ready.status, pods_ready.reason) != (status, reason):
            return SetPodsReady(job, workload, status, reason, message)
    if workload.admitted_since is not None and workload.active:
        if not job.suspended:
            return None
        template = admitted_template(job, workload, flavors)
        # Admitted again before a stop was undone: the template can change only once startTime is unset.
        if job.started and job.template != template:
            return ClearStartTime(job)
        return StartJob(job, template)
    if not job.suspended:
        return StopJob(job)
    original = original_template(job, workload)
    if job.template == original:
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


def template_patch(current: Template, desired: Template) -> Obj:
    """A JSON merge patch of a pod template from ``current`` to ``desired`` (the gates, a list, whole)."""
    meta: Obj = {}
    labels, annotations = selector_patch(current.labels, desired.labels), selector_patch(current.annotations,
                                                                                         desired.annotations)
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    spec: Obj = {"nodeSelector": selector_patch(current.node_selector, desired.node_selector)}
    if current.scheduling_gates != desired.scheduling_gates:
        spec["schedulingGates"] = [{"name": gate} for gate in desired.scheduling_gates] or None
    return {"metadata": meta, "spec": spec} if meta else {"spec": spec}


def start_patch(step: StartJob) -> Obj:
    template = template_patch(step.job.template, step.template)
    return _guarded(step.job, {"spec": {"suspend": False, "template": template}})


def stop_patch(step: StopJob) -> Obj:
    return _guarded(step.job, {"spec": {"suspend": True}})


def clear_start_time_patch(step: ClearStartTime) -> Obj:
    """For the status subresource."""
    return _guarded(step.job, {"status": {"startTime": None}})


def restore_patch(step: RestoreJob) -> Obj:
    return _guarded(step.job, {"spec": {"template": template_patch(step.job.template, step.template)}})


def finished_condition(finish: Finish, now_text: str) -> Obj:
    """Kueue's Finished condition for a Workload whose Job ended (``now_text``: RFC 3339)."""
    reason = FINISHED_SUCCEEDED if finish.succeeded else FINISHED_FAILED
    message = finish.message or ("Job finished successfully" if finish.succeeded else "Job failed")
    return {"type": "Finished", "status": "True", "reason": reason, "message": message,
            "lastTransitionTime": now_text}
