"""How long a Workload runs once admitted, as the forecast needs it: declared, or learned per class (pure).

In order of trust:

1. ``declared``: seconds per Workload read at the edge (an annotation, say); the core reads no
   annotations itself;
2. ``spec.maximumExecutionTimeSeconds`` less the seconds already accumulated: an upper bound, Kueue
   deactivates the Workload then (``executiontime``), so forecasts built on it are late rather than early;
3. ``learned``: the mean runtime of finished Workloads of the same class (``learn``); the class is the
   LocalQueue unless ``class_of`` says otherwise.

None of them: no runtime, and the forecast says so instead of guessing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from scheduler.core import executiontime
from scheduler.core.workloads import Workload, WorkloadKey


def local_queue_class(workload: Workload) -> str:
    """The default class: ``namespace/localqueue``."""
    return f"{workload.namespace}/{workload.queue_name}"


@dataclass(frozen=True, slots=True)
class RuntimeBook:
    declared: Mapping[WorkloadKey, float] = field(default_factory=dict)
    """Seconds per Workload, from whatever the edge reads (annotation, job template)."""
    learned: Mapping[str, float] = field(default_factory=dict)
    """Seconds per class (``learn``)."""
    class_of: Callable[[Workload], str] = local_queue_class
    use_max_execution_time: bool = True
    """Take spec.maximumExecutionTimeSeconds as the runtime when nothing is declared."""

    def runtime(self, workload: Workload) -> float | None:
        """Seconds the Workload runs from an admission now; None when nothing says."""
        declared = self.declared.get(workload.key)
        if declared is not None:
            return declared
        if self.use_max_execution_time and workload.max_execution_seconds:
            return float(workload.max_execution_seconds - (workload.accumulated_execution_seconds or 0))
        return self.learned.get(self.class_of(workload))

    def end(self, workload: Workload) -> float | None:
        """When an admitted Workload finishes (POSIX seconds); None when nothing says."""
        declared = self.declared.get(workload.key)
        if declared is not None:
            return workload.admitted_at + declared
        if self.use_max_execution_time:
            deadline = executiontime.deadline(workload)
            if deadline is not None:
                return deadline
        learned = self.learned.get(self.class_of(workload))
        return None if learned is None else workload.admitted_at + learned


def learn(finished: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Mean runtime per class from (class, seconds) of finished Workloads."""
    sums: dict[str, list[float]] = {}
    for name, seconds in finished:
        total = sums.setdefault(name, [0.0, 0])
        total[0] += seconds
        total[1] += 1
    return {name: total / count for name, (total, count) in sums.items()}
