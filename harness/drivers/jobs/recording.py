"""What the jobs informers saw, per Job and per pod, by the generator's clock (pure).

Each watch event is folded into records of first times: a Job's creation (its POST returned),
admission (its Workload first seen admitted), unsuspension, first pod Running, completion; a pod's
creation, binding (spec.nodeName set), Running and Succeeded. Times are this process's clock when
the event arrived: sub-second, where the API's own timestamps have 1 s resolution.
"""

from __future__ import annotations

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


@dataclass(slots=True)
class Recorder:
    """Folds Job, Workload and pod events into records; `jobs` is filled as Jobs are planned."""

    jobs: dict[tuple[str, str], JobRecord] = field(default_factory=dict)
    pods: dict[tuple[str, str], PodRecord] = field(default_factory=dict)
    """(namespace, pod name) -> record."""
    workload_events: int = 0
    job_events: int = 0
    pod_events: int = 0

    def on_job(self, obj: dict, now: float) -> JobRecord | None:
        self.job_events += 1
        meta = obj.get("metadata") or {}
        record = self.jobs.get((meta.get("namespace", ""), meta.get("name", "")))
        if record is None:
            return None
        suspended = (obj.get("spec") or {}).get("suspend", False)
        if not suspended and record.unsuspended is None:
            record.unsuspended = now
        if suspended and record._running:
            record.suspensions += 1
        record._running = not suspended
        if record.completed is None and (conditions.is_true(obj, "Complete") or conditions.is_true(obj, "Failed")):
            record.completed = now
            record.failed = conditions.is_true(obj, "Failed")
        return record

    def on_workload(self, obj: dict, now: float) -> JobRecord | None:
        self.workload_events += 1
        meta = obj.get("metadata") or {}
        owner = next((o for o in meta.get("ownerReferences") or () if o.get("kind") == "Job"), None)
        record = self.jobs.get((meta.get("namespace", ""), owner.get("name", ""))) if owner else None
        if record is None:
            return None
        if record.admitted is None and conditions.is_true(obj, "Admitted") and (obj.get("status") or {}).get("admission"):
            record.admitted = now
        if record.workload_finished is None and conditions.is_true(obj, "Finished"):
            record.workload_finished = now
        return record

    def on_pod(self, obj: dict, now: float) -> PodRecord | None:
        self.pod_events += 1
        meta = obj.get("metadata") or {}
        job = (meta.get("namespace", ""), (meta.get("labels") or {}).get(plans.JOB_NAME_LABEL, ""))
        if job not in self.jobs:
            return None
        key = (meta.get("namespace", ""), meta.get("name", ""))
        pod = self.pods.get(key)
        if pod is None:
            pod = self.pods[key] = PodRecord(job=job, created=now)
        phase = (obj.get("status") or {}).get("phase", "")
        if pod.bound is None and (obj.get("spec") or {}).get("nodeName"):
            pod.bound = now
        if pod.running is None and phase in ("Running", "Succeeded"):
            pod.running = now
            record = self.jobs[job]
            if record.first_running is None:
                record.first_running = now
        if pod.succeeded is None and phase == "Succeeded":
            pod.succeeded = now
        if pod.failed is None and phase == "Failed":
            pod.failed = now
        return pod

    def done(self) -> bool:
        """Every planned Job completed and its Workload finished."""
        return bool(self.jobs) and all(r.completed is not None and r.workload_finished is not None
                                       for r in self.jobs.values())
