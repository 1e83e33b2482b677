"""What the jobs informers saw, per Job and per pod, placed in the cluster's own order (pure).

Each watch event is folded into records of first times: a Job's creation (its POST returned),
admission (its Workload first seen admitted), unsuspension, first pod Running, completion; a pod's
creation, binding (spec.nodeName set), Running and Succeeded.

Three watches deliver these, each at its own pace: timed by arrival, a Job's pod could be "Running"
before its Workload was "admitted" (seen on a loaded machine). The API's own timestamps have 1 s
resolution, too coarse for pod steps of tens of milliseconds. So each step keeps the resourceVersion
of the write that made it, which is etcd's revision, one counter for every resource of the cluster
(comparable, as Kubernetes' comparable resource versions say), and `settle` times it at the first
arrival, on any watch or create call, of a revision at least as new: no earlier than the write, no
later than its own event, to this process's clock (sub-millisecond). Steps in causal order (admitted,
then unsuspended, then a pod Running) are then in time order too; a step whose object carries no
resourceVersion keeps its arrival time.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from harness.drivers.jobs import plans
from scheduler.core import conditions


@dataclass(slots=True)
class JobRecord:
    namespace: str
    name: str
    job_class: str
    cluster_queue: str
    pods: int
    created: float | None = None
    """When the create call returned."""
    admitted: float | None = None
    """Its Workload first seen admitted (Admitted=True with an admission)."""
    unsuspended: float | None = None
    first_running: float | None = None
    """Its first pod first seen Running."""
    completed: float | None = None
    """Complete=True (or Failed=True: then `failed`)."""
    workload_finished: float | None = None
    failed: bool = False
    suspensions: int = 0
    """Times it was suspended again after running (its Workload evicted)."""
    _running: bool = False
    revisions: dict[str, int] = field(default_factory=dict)
    """Step (a time field's name) -> the revision of the write that made it."""

    @property
    def key(self) -> tuple[str, str]:
        return self.namespace, self.name


@dataclass(slots=True)
class PodRecord:
    job: tuple[str, str]
    created: float
    bound: float | None = None
    running: float | None = None
    succeeded: float | None = None
    failed: float | None = None
    node: str | None = None
    """The node it was bound to."""
    revisions: dict[str, int] = field(default_factory=dict)
    """Step (a time field's name) -> the revision of the write that made it."""


def revision_of(obj: dict) -> int | None:
    """metadata.resourceVersion as a number (None when absent or not etcd's revision)."""
    version = (obj.get("metadata") or {}).get("resourceVersion")
    try:
        return int(version) if version else None
    except ValueError:
        return None


@dataclass(slots=True)
class RevisionClock:
    """When each revision of the cluster was first seen: the first arrival of it or of any newer one."""

    _seen: list[tuple[int, float]] = field(default_factory=list)
    _revisions: list[int] = field(default_factory=list)
    _earliest: list[float] = field(default_factory=list)

    def saw(self, revision: int, now: float) -> None:
        self._seen.append((revision, now))
        self._revisions.clear()

    def time_of(self, revision: int) -> float:
        """The earliest arrival of a revision >= this one (it is at least its own)."""
        if not self._revisions:
            self._seen.sort()
            self._revisions[:] = [r for r, _ in self._seen]
            self._earliest[:] = [t for _, t in self._seen]
            for i in range(len(self._earliest) - 2, -1, -1):  # suffix minimum
                self._earliest[i] = min(self._earliest[i], self._earliest[i + 1])
        return self._earliest[bisect.bisect_left(self._revisions, revision)]


def _step(record: JobRecord | PodRecord, name: str, now: float, revision: int | None) -> None:
    setattr(record, name, now)
    if revision is not None:
        record.revisions[name] = revision


@dataclass(slots=True)
class Recorder:
    """Folds Job, Workload and pod events into records; `jobs` is filled as Jobs are planned."""

    jobs: dict[tuple[str, str], JobRecord] = field(default_factory=dict)
    pods: dict[tuple[str, str], PodRecord] = field(default_factory=dict)
    """(namespace, pod name) -> record."""
    workload_events: int = 0
    job_events: int = 0
    pod_events: int = 0
    clock: RevisionClock = field(default_factory=RevisionClock)

    def _saw(self, obj: dict, now: float) -> int | None:
        revision = revision_of(obj)
        if revision is not None:
            self.clock.saw(revision, now)
        return revision

    def on_created(self, record: JobRecord, obj: dict, now: float) -> None:
        """The create call returned `obj` (the Job as stored)."""
        _step(record, "created", now, self._saw(obj, now))

    def on_job(self, obj: dict, now: float) -> JobRecord | None:
        self.job_events += 1
        revision = self._saw(obj, now)
        meta = obj.get("metadata") or {}
        record = self.jobs.get((meta.get("namespace", ""), meta.get("name", "")))
        if record is None:
            return None
        suspended = (obj.get("spec") or {}).get("suspend", False)
        if not suspended and record.unsuspended is None:
            _step(record, "unsuspended", now, revision)
        if suspended and record._running:
            record.suspensions += 1
        record._running = not suspended
        if record.completed is None and (conditions.is_true(obj, "Complete") or conditions.is_true(obj, "Failed")):
            _step(record, "completed", now, revision)
            record.failed = conditions.is_true(obj, "Failed")
        return record

    def on_workload(self, obj: dict, now: float) -> JobRecord | None:
        self.workload_events += 1
        revision = self._saw(obj, now)
        meta = obj.get("metadata") or {}
        owner = next((o for o in meta.get("ownerReferences") or () if o.get("kind") == "Job"), None)
        record = self.jobs.get((meta.get("namespace", ""), owner.get("name", ""))) if owner else None
        if record is None:
            return None
        if record.admitted is None and conditions.is_true(obj, "Admitted") and (obj.get("status") or {}).get("admission"):
            _step(record, "admitted", now, revision)
        if record.workload_finished is None and conditions.is_true(obj, "Finished"):
            _step(record, "workload_finished", now, revision)
        return record

    def on_pod(self, obj: dict, now: float) -> PodRecord | None:
        self.pod_events += 1
        revision = self._saw(obj, now)
        meta = obj.get("metadata") or {}
        job = (meta.get("namespace", ""), (meta.get("labels") or {}).get(plans.JOB_NAME_LABEL, ""))
        if job not in self.jobs:
            return None
        key = (meta.get("namespace", ""), meta.get("name", ""))
        pod = self.pods.get(key)
        if pod is None:
            pod = self.pods[key] = PodRecord(job=job, created=now)
            if revision is not None:
                pod.revisions["created"] = revision
        phase = (obj.get("status") or {}).get("phase", "")
        if pod.bound is None and (obj.get("spec") or {}).get("nodeName"):
            _step(pod, "bound", now, revision)
            pod.node = obj["spec"]["nodeName"]
        if pod.running is None and phase in ("Running", "Succeeded"):
            _step(pod, "running", now, revision)
            record = self.jobs[job]
            if record.first_running is None:
                _step(record, "first_running", now, revision)
        if pod.succeeded is None and phase == "Succeeded":
            _step(pod, "succeeded", now, revision)
        if pod.failed is None and phase == "Failed":
            _step(pod, "failed", now, revision)
        return pod

    def settle(self) -> None:
        """Time every step that has a revision by the revision clock (once every event is in)."""
        for record in (*self.jobs.values(), *self.pods.values()):
            for name, revision in record.revisions.items():
                setattr(record, name, self.clock.time_of(revision))

    def done(self) -> bool:
        """Every planned Job completed and its Workload finished."""
        return bool(self.jobs) and all(r.completed is not None and r.workload_finished is not None
                                       for r in self.jobs.values())
