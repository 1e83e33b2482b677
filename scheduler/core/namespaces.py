"""Namespace labels, and which ClusterQueue's ``namespaceSelector`` selects which namespace.

A ClusterQueue admits only from namespaces its ``namespaceSelector`` selects: the scheduling cycle
parks a head from any other namespace, in either queueing strategy, and unparking leaves it parked
while its namespace is still not selected (pkg/cache/queue/inadmissible_workloads.go). A namespace
whose labels change so that a ClusterQueue newly selects it unparks that queue and its cohort
(pkg/controller/core/clusterqueue_controller.go, cqNamespaceHandler). A namespace not seen yet
counts as one without labels.

Apart from ``queues`` because it is a concern of its own, with its own cache: the queue manager
asks it whether a namespace is selected and what a relabelling changed, and acts on the pending
queues itself. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from scheduler.core.kinds import EVERYTHING, ClusterQueue, Namespace
from scheduler.core.workloads import Workload


@dataclass(frozen=True, slots=True)
class Relabelling:
    """What a namespace's new labels changed: the ClusterQueues that select it now and did not
    before, and those that selected it and no longer do."""

    namespace: str
    now_selecting: tuple[ClusterQueue, ...]
    no_longer_selecting: tuple[ClusterQueue, ...]


class NamespaceSelection:
    """Known namespaces' labels and a cache of (ClusterQueue, namespace) selections."""

    def __init__(self) -> None:
        self.labels: dict[str, dict[str, str]] = {}
        # (ClusterQueue, namespace) -> whether its selector selects the namespace; dropped on any change.
        self._selected: dict[tuple[str, str], bool] = {}

    def selects(self, cq: ClusterQueue, namespace: str) -> bool:
        """Whether ``cq``'s namespaceSelector selects ``namespace`` (Kueue's nominate checks this)."""
        key = (cq.name, namespace)
        selected = self._selected.get(key)
        if selected is None:
            selected = self._selected[key] = cq.namespace_selector.matches(self.labels.get(namespace, {}))
        return selected

    def stays_parked(self, cq: ClusterQueue) -> Callable[[Workload], bool] | None:
        """What keeps a parked workload of ``cq`` parked when capacity changes: a namespace the queue
        does not select (Kueue's queueInadmissibleWorkloads); None when it selects every namespace."""
        if cq.namespace_selector == EVERYTHING:
            return None
        return lambda workload: not self.selects(cq, workload.namespace)

    def cluster_queues_changed(self) -> None:
        """A ClusterQueue was added, changed or deleted: its selector may differ, so forget every answer."""
        self._selected.clear()

    def relabel(self, namespace: Namespace, cluster_queues: Iterable[ClusterQueue]) -> Relabelling | None:
        """Record a Namespace's labels (added or updated); what that changed for ``cluster_queues``,
        or None when the labels are the ones already known."""
        old = self.labels.get(namespace.name)
        if old == namespace.labels:
            return None
        self.labels[namespace.name] = dict(namespace.labels)
        self._selected.clear()
        now_selecting, no_longer_selecting = [], []
        for cq in cluster_queues:
            before, now = cq.namespace_selector.matches(old or {}), cq.namespace_selector.matches(namespace.labels)
            if now and not before:
                now_selecting.append(cq)
            elif before and not now:
                no_longer_selecting.append(cq)
        return Relabelling(namespace.name, tuple(now_selecting), tuple(no_longer_selecting))

    def remove(self, name: str) -> None:
        """Forget a Namespace's labels."""
        if self.labels.pop(name, None) is not None:
            self._selected.clear()
