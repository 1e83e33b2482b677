"""The jobs schedule and the Job each creation sends (pure).

The arrival pattern is kueue-baseline's (each load.mix entry: `count` per ClusterQueue, one per
1 / `per_second` s), so a scenario of Jobs and one of bare Workloads differ only in what is created.
A class's `pods` is the Job's parallelism and completions; `cpu` and `memory` are each pod's requests;
its `topology` becomes Kueue's pod template annotations (``core.jobs.topology_annotations``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import PositiveFloat

from harness.clusters import kwokconfig
from harness.load import arrivals
from harness.scenarios import base
from scheduler.core import jobs as corejobs

if TYPE_CHECKING:
    from harness.scenarios import sections

CLASS_LABEL = "kqbench.io/jobs-class"
"""On the Job and its pod template: the informers select our objects by it."""
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
"""Set by the job controller on every pod of a Job."""
IMAGE = "registry.invalid/kqbench/train:1"
"""Never pulled: kwok plays the pod's life."""


class JobMixFields(base.Model):
    """The fields of a load.mix entry only the jobs driver reads."""

    ready_after_seconds: PositiveFloat | Literal["never"] | None = None
    """Each pod of the class turns Ready this long after it runs (kwok's `kqbench.io/ready-after`; its run time
    counts from then), or "never": it runs and never gets Ready, which waitForPodsReady's timeout evicts.
    None: Ready as it runs. Read by the cluster's own pod stages (cluster.jobs, heartbeats off)."""


@dataclass(frozen=True, slots=True)
class JobShape:
    """What a class's Jobs look like beyond kueue-baseline's arrival fields."""

    pods: int
    memory: str
    ready_after: str | None = None
    """kwok's ready-after annotation (a Go duration or "never"); None: none."""


@dataclass(frozen=True, slots=True)
class Plan:
    arrivals: arrivals.Plan
    shapes: dict[str, JobShape]
    """Class name -> its Jobs' shape."""

    @property
    def total_jobs(self) -> int:
        return self.arrivals.total

    @property
    def total_pods(self) -> int:
        queues = len(self.arrivals.queues)
        return sum(c.count * self.shapes[c.name].pods * queues for c in self.arrivals.classes)

    def schedule(self) -> list[arrivals.Creation]:
        return arrivals.schedule(self.arrivals)


def from_scenario(scenario: sections.ScenarioFields, only: tuple[str, ...] = ()) -> Plan:
    """The phase's plan; ``only``: the LocalQueues its Jobs go to (empty: every one)."""
    plan = arrivals.from_scenario(scenario)
    if only:
        plan = dataclasses.replace(plan, queues=tuple(q for q in plan.queues if q.local_queue in only))
    shapes = {cls.name: JobShape(pods=mix.pods, memory=mix.memory,
                                 ready_after=ready_after_text(mix.ready_after_seconds))
              for cls, mix in zip(plan.classes, scenario.load.mix)}
    return Plan(plan, shapes)


def runtime_text(seconds: float) -> str:
    """A Go duration kwok reads from the pod's annotation: whole milliseconds."""
    return f"{int(round(seconds * 1000))}ms"


def ready_after_text(seconds: float | str | None) -> str | None:
    """The ready-after annotation of a mix entry's `ready_after_seconds`."""
    if seconds is None:
        return None
    return kwokconfig.READY_NEVER if seconds == "never" else runtime_text(float(seconds))


def job_manifest(creation: arrivals.Creation, shape: JobShape) -> dict:
    """A suspended Job in the creation's LocalQueue: `pods` pods, each running the class's runtime."""
    cls = creation.workload_class
    labels = {corejobs.QUEUE_LABEL: creation.queue.local_queue, CLASS_LABEL: cls.name}
    if cls.priority_class:
        labels[corejobs.PRIORITY_CLASS_LABEL] = cls.priority_class
    annotations = {kwokconfig.RUNTIME_ANNOTATION: runtime_text(cls.runtime_seconds),
                   **corejobs.topology_annotations(dict(cls.topology_request))}
    if shape.ready_after is not None:
        annotations[kwokconfig.READY_AFTER_ANNOTATION] = shape.ready_after
    requests = {"cpu": cls.cpu}
    if shape.memory and shape.memory != "0":
        requests["memory"] = shape.memory
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": creation.name, "namespace": creation.queue.namespace, "labels": labels},
        "spec": {
            "suspend": True, "parallelism": shape.pods, "completions": shape.pods, "backoffLimit": 0,
            "template": {
                "metadata": {"labels": {CLASS_LABEL: cls.name},
                             "annotations": annotations},
                "spec": {"restartPolicy": "Never",
                         "containers": [{"name": "main", "image": IMAGE, "resources": {"requests": requests}}]}}},
    }
