"""A bulk backlog: a fill's pending Workloads written straight into etcd, beneath the churn (pure).

A Locust fill makes its Workloads churn-owned, and every churn user LISTs its own each refresh: N
pending cost N listed objects every refresh period, which at 100k is the load generator's traffic,
not the design's. A backlog is owned by no churn user. It is spread over the scenario's LocalQueues
one priority below the lowest of the churn mix, so churn Workloads still go first (every backlog
position shifts under them, as under any churn) and the backlog fills the queues behind them.

A backlog Workload that does get admitted (no churn Workload was waiting) would hold its quota for
ever; the keeper (harness.workloads.keeping) finishes it once its runtime has passed and deletes it,
as a churn user would. `Ledger` is the keeper's bookkeeping: what is due when.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from harness.workloads import storing
from loadtests import settings as load_settings
from loadtests.workloads import Phase

PREFIX = "backlog"
"""Batch names are PREFIX-<LocalQueue>; every batch is labelled storing.BULK_LABEL=<its name>."""
SELECTOR = storing.BULK_LABEL
"""A label selector matching every bulk-loaded Workload, whatever its batch (the keeper watches it)."""


REFILL_PREFIX = "backlog-refill"
"""Names of the keeper's replacements: REFILL_PREFIX-<keeper token>-<count>."""


def replacement(taken: dict, name: str) -> dict:
    """The body of a new pending Workload in place of an admitted backlog one: its queue, pod sets,
    priority and labels (the backlog selector included), nothing of its status or identity."""
    metadata = taken.get("metadata") or {}
    return {"apiVersion": taken.get("apiVersion"), "kind": taken.get("kind", "Workload"),
            "metadata": {"name": name, "namespace": metadata.get("namespace"),
                         "labels": dict(metadata.get("labels") or {})},
            "spec": {**(taken.get("spec") or {}), "active": True}}


def kind(mix: Sequence[load_settings.WorkloadKind]) -> load_settings.WorkloadKind:
    """The backlog's Workload: the churn mix's most frequent kind, one priority below the mix's lowest."""
    if not mix:
        raise ValueError("a backlog needs the churn mix to take its Workload shape from")
    common = max(mix, key=lambda k: k.weight)
    return replace(common, weight=1, priority=min(k.priority for k in mix) - 1)


def batches(pending: int, namespace: str, queues: Sequence[str],
            mix: Sequence[load_settings.WorkloadKind]) -> list[storing.Batch]:
    """`pending` Workloads spread evenly over `queues` (the first ones take the remainder), one batch each."""
    if not queues:
        raise ValueError("a backlog needs at least one LocalQueue")
    shape = kind(mix)
    base, extra = divmod(pending, len(queues))
    return [storing.Batch(count=base + (index < extra), queue=queue, namespace=namespace,
                          prefix=f"{PREFIX}-{queue}", kind=shape)
            for index, queue in enumerate(queues) if base + (index < extra) > 0]


@dataclass(slots=True)
class Ledger:
    """Which admitted backlog Workloads are due to finish when (seconds on the caller's clock)."""

    due_at: dict[str, float] = field(default_factory=dict)
    _heap: list[tuple[float, str]] = field(default_factory=list)
    finished: int = 0
    """Finished and deleted by the keeper so far."""

    def observed(self, name: str, phase: Phase, runtime_seconds: float, admitted_ago: float | None, now: float) -> None:
        """One watch event's news of a backlog Workload: an admitted one is due `runtime` after its admission."""
        if phase is not Phase.ADMITTED or name in self.due_at:
            return
        at = now + max(0.0, runtime_seconds - (admitted_ago or 0.0))
        self.due_at[name] = at
        heapq.heappush(self._heap, (at, name))

    def gone(self, name: str) -> None:
        """Deleted (by the keeper or anyone): nothing is due for it any more."""
        self.due_at.pop(name, None)

    def due(self, now: float) -> list[str]:
        """Names whose runtime has passed, each handed out once (hand back with `retry` when it failed)."""
        out = []
        while self._heap and self._heap[0][0] <= now:
            at, name = heapq.heappop(self._heap)
            if self.due_at.get(name) == at:
                out.append(name)
        return out

    def done(self, name: str) -> None:
        self.due_at.pop(name, None)
        self.finished += 1

    def retry(self, name: str, at: float) -> None:
        """Finishing failed: due again at `at`."""
        self.due_at[name] = at
        heapq.heappush(self._heap, (at, name))
