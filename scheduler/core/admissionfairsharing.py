"""Admission fair sharing: LocalQueues' decayed usage and the order it gives a ClusterQueue's pending
workloads (Kueue v0.17.0: pkg/util/admissionfairsharing, pkg/cache/queue/afs, the LocalQueue and
Workload controllers' AFS updates, and the ClusterQueue heap's queueOrderingFunc).

Pure: the caller passes the time and the LocalQueue's admitted usage. Quantities are milli-units, as
everywhere in the core; Kueue scales them with ``resource.MulByFloat``, which works on milli-values
and truncates, so integers here give Kueue's numbers exactly.

What Kueue keeps per LocalQueue, and who changes it:

- *consumed* resources with the time of their last update (AfsConsumedResources): set when the
  LocalQueue is first seen (its admitted usage then), decayed towards the admitted usage every
  ``usageSamplingInterval`` by the LocalQueue controller (``sample``), and when a workload of it is
  admitted by the Workload controller (``admitted``), which also moves that workload's entry penalty
  from the pending penalties into the consumed resources;
- *entry penalties* (AfsEntryPenalties): added by the scheduler when it assumes a workload (the
  requests times the decay of one sampling interval), taken back if the admission write fails, so
  that a LocalQueue that just had a workload admitted sorts later before its usage is resampled.

A LocalQueue's *usage* is the sum over resources of weight x (consumed + penalty), in units, divided
by its ``fairSharing.weight``. In a ClusterQueue with admissionMode UsageBasedAdmissionFairSharing the
pending workloads are ordered by that usage first, then as usual (priority, queue-order timestamp,
uid); Kueue's sticky preemptor comes first only among equal usages. Preemption candidates of one
ClusterQueue from different LocalQueues go higher usage first, after "other queues first" and before
priority (``candidate_usage_key``; victims.candidate_order uses it for the preemptor's own candidates).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from scheduler.core.kinds import AdmissionFairSharing, ClusterQueue, FlavorResource, LocalQueue, LocalQueueKey
from scheduler.core.quantities import MILLI_PER_UNIT
from scheduler.core.workloads import OrderKey, Workload

Resources = dict[str, int]
"""Milli-units per resource name (Kueue's corev1.ResourceList, flavors folded)."""


def alpha_rate(elapsed_seconds: float, half_life_seconds: float) -> float:
    """The weight of the new sample after ``elapsed`` seconds: 1 - 0.5^(elapsed/halfLife); 0 when the
    half-life is 0 (calculateAlphaRate)."""
    if half_life_seconds == 0:
        return 0.0
    return 1.0 - math.pow(0.5, elapsed_seconds / half_life_seconds)


def scaled(resources: Mapping[str, int], factor: float) -> Resources:
    """Every quantity times ``factor``, truncated to a milli-unit (resource.MulByFloat)."""
    return {name: int(milli * factor) for name, milli in resources.items()}


def summed(a: Mapping[str, int], b: Mapping[str, int]) -> Resources:
    """The union of both lists, quantities of a shared name added (MergeResourceListKeepSum)."""
    total = dict(a)
    for name, milli in b.items():
        total[name] = total.get(name, 0) + milli
    return total


def entry_penalty(requests: Mapping[str, int], config: AdmissionFairSharing) -> Resources:
    """What admitting a workload with these requests adds to its LocalQueue until the next sample
    (CalculateEntryPenalty)."""
    return scaled(requests, alpha_rate(config.usage_sampling_interval_seconds, config.usage_half_life_seconds))


def decayed(old: Mapping[str, int], new: Mapping[str, int], elapsed_seconds: float,
            half_life_seconds: float) -> Resources:
    """Old usage decayed over ``elapsed`` seconds plus the current usage's part (CalculateDecayedConsumed)."""
    alpha = alpha_rate(elapsed_seconds, half_life_seconds)
    return summed(scaled(old, 1 - alpha), scaled(new, alpha))


def queue_usage(consumed: Mapping[str, int], penalty: Mapping[str, int], queue_weight: float,
                resource_weights: Mapping[str, float]) -> float:
    """A LocalQueue's usage, the number its workloads are ordered by (CalcFSUsageFromResources).

    Weight 0 gives Go's float division: +Inf for a positive sum, NaN for none.
    """
    total = 0.0
    for name, milli in sorted(summed(consumed, penalty).items()):
        total += resource_weights.get(name, 1.0) * (milli / MILLI_PER_UNIT)
    if queue_weight == 0:
        return math.nan if total == 0 else math.copysign(math.inf, total)
    return total / queue_weight


def usage_key(usage: float) -> tuple[int, float]:
    """A sort key that compares usages as Go's cmp.Compare does: NaN before every number."""
    return (0, 0.0) if math.isnan(usage) else (1, usage)


def workload_requests(workload: Workload) -> Resources:
    """The requests of all its pod sets summed, without the implicit pods resource (SumTotalRequests)."""
    total: Resources = {}
    for pod_set in workload.pod_sets:
        total = summed(total, pod_set.total_requests(with_pods=False))
    return total


@dataclass(slots=True)
class Consumed:
    resources: Resources
    last_update: float
    """POSIX seconds."""


class LocalQueueUsages:
    """The consumed resources and entry penalties of every LocalQueue, and the updates Kueue's
    scheduler and controllers make to them. Admitted usage is the caller's (from the quota book):
    per resource over all flavors, of the LocalQueue's admitted workloads."""

    __slots__ = ("config", "_consumed", "_penalties")

    def __init__(self, config: AdmissionFairSharing) -> None:
        self.config = config
        self._consumed: dict[LocalQueueKey, Consumed] = {}
        self._penalties: dict[LocalQueueKey, Resources] = {}

    def consumed(self, queue: LocalQueueKey) -> Consumed | None:
        return self._consumed.get(queue)

    def penalty(self, queue: LocalQueueKey) -> Resources:
        return dict(self._penalties.get(queue, {}))

    def initialize(self, queue: LocalQueueKey, admitted_usage: Mapping[str, int], now: float) -> bool:
        """First sight of a LocalQueue: its consumed resources start at its admitted usage
        (initializeAfsIfNeeded). False when it was known already."""
        if queue in self._consumed:
            return False
        self._consumed[queue] = Consumed(dict(admitted_usage), now)
        return True

    def assumed(self, queue: LocalQueueKey, requests: Mapping[str, int]) -> None:
        """The scheduler assumed a workload of ``queue``: its entry penalty is pushed."""
        self._penalties[queue] = summed(self._penalties.get(queue, {}), entry_penalty(requests, self.config))

    def admission_failed(self, queue: LocalQueueKey, requests: Mapping[str, int]) -> None:
        """The admission write failed: the penalty ``assumed`` pushed is taken back."""
        self._subtract_penalty(queue, entry_penalty(requests, self.config))

    def admitted(self, queue: LocalQueueKey, requests: Mapping[str, int], admitted_usage: Mapping[str, int],
                 now: float) -> None:
        """The Workload controller saw a workload of ``queue`` admitted (its usage already in
        ``admitted_usage``): consumed decays towards it, and the entry penalty moves into it
        (updateAfsConsumedUsage)."""
        penalty = entry_penalty(requests, self.config)
        old = self._consumed.get(queue)
        old_resources, last_update = (old.resources, old.last_update) if old is not None else ({}, now)
        fresh = decayed(old_resources, admitted_usage, now - last_update, self.config.usage_half_life_seconds)
        self._consumed[queue] = Consumed(summed(fresh, penalty), now)
        self._subtract_penalty(queue, penalty)

    def sample_due(self, queue: LocalQueueKey, now: float) -> bool:
        """Whether the LocalQueue controller resamples ``queue`` now: a sampling interval has passed
        or a penalty was ever pushed for it (HasPendingFor keeps an emptied entry)."""
        entry = self._consumed.get(queue)
        if entry is None:
            return False
        return now - entry.last_update >= self.config.usage_sampling_interval_seconds or queue in self._penalties

    def sample(self, queue: LocalQueueKey, admitted_usage: Mapping[str, int], now: float) -> Resources:
        """Fold the current admitted usage into ``queue``'s consumed resources (reconcileConsumedUsage);
        returns what Kueue writes to status.fairSharing.admissionFairSharingStatus.consumedResources."""
        half_life = self.config.usage_half_life_seconds
        if half_life == 0:
            fresh: Resources = {}
        else:
            old = self._consumed.get(queue) or Consumed({}, now)
            fresh = decayed(old.resources, admitted_usage, now - old.last_update, half_life)
        self._consumed[queue] = Consumed(fresh, now)
        return dict(fresh)

    def forget(self, queue: LocalQueueKey) -> None:
        """The LocalQueue was deleted."""
        self._consumed.pop(queue, None)
        self._penalties.pop(queue, None)

    def has_pending_penalties(self, queues: Iterable[LocalQueueKey]) -> bool:
        """Whether a pop must re-sort the queue first: some LocalQueue has a penalty entry, even one
        that went back to zero (resource.IsZero is true only for an empty list)."""
        return any(self._penalties.get(queue) for queue in queues)

    def usage(self, queue: LocalQueueKey, queue_weight: float) -> float:
        """``queue``'s usage now (CalcLocalQueueFSUsage)."""
        entry = self._consumed.get(queue)
        return queue_usage(entry.resources if entry is not None else {}, self._penalties.get(queue, {}),
                           queue_weight, dict(self.config.resource_weights))

    def _subtract_penalty(self, queue: LocalQueueKey, penalty: Mapping[str, int]) -> None:
        self._penalties[queue] = summed(self._penalties.get(queue, {}), {k: -v for k, v in penalty.items()})


SortKey = Callable[[Workload], tuple[tuple[int, float], bool, OrderKey]]


def sort_key(usage_of: Callable[[LocalQueueKey], float], sticky: tuple[str, str] | None = None) -> SortKey:
    """The admission-fair-sharing order as a sort key (ClusterQueue.Snapshot: each LocalQueue's usage
    read once, then usage, sticky, priority, queue-order timestamp, uid)."""
    usages: dict[LocalQueueKey, tuple[int, float]] = {}

    def key(workload: Workload) -> tuple[tuple[int, float], bool, OrderKey]:
        queue = workload.local_queue
        if queue not in usages:
            usages[queue] = usage_key(usage_of(queue))
        return usages[queue], workload.key != sticky, workload.order_key

    return key


def pending_order(workloads: Iterable[Workload], usage_of: Callable[[LocalQueueKey], float],
                  sticky: tuple[str, str] | None = None) -> list[Workload]:
    """A ClusterQueue's pending workloads in admission-fair-sharing order."""
    return sorted(workloads, key=sort_key(usage_of, sticky))


def first(workloads: Iterable[Workload], usage_of: Callable[[LocalQueueKey], float],
          sticky: tuple[str, str] | None = None) -> Workload | None:
    """The head ``pending_order`` would give, in one pass (Kueue's heap after its rebuild)."""
    return min(workloads, key=sort_key(usage_of, sticky), default=None)


class AdmissionFairness:
    """What the queue manager keeps for admission fair sharing: every LocalQueue's usages, the usage of
    its admitted workloads (flavors folded, as Kueue's cache LocalQueue.GetAdmittedUsage), and which
    LocalQueues a workload event touched since the last ``tick`` (Kueue's LocalQueue reconciler runs
    on those events and resamples then, since HasPendingFor stays true once a penalty was pushed).

    The scheduler writes an admission itself, so ``workload_assumed`` also does what Kueue's Workload
    controller does when the admitted workload comes back (the write taken as landed at once)."""

    __slots__ = ("config", "usages", "_admitted", "_touched")

    def __init__(self, config: AdmissionFairSharing) -> None:
        self.config = config
        self.usages = LocalQueueUsages(config)
        self._admitted: dict[LocalQueueKey, Resources] = {}
        self._touched: set[LocalQueueKey] = set()

    def applies(self, cq: ClusterQueue | None) -> bool:
        """Whether ``cq``'s pending workloads go by usage (on, and its admissionScope asks for it)."""
        return self.config.enabled and cq is not None and cq.usage_based_admission

    def admitted_usage(self, queue: LocalQueueKey) -> Resources:
        return dict(self._admitted.get(queue, {}))

    def usage_added(self, queue: LocalQueueKey, usage: Mapping[FlavorResource, int]) -> None:
        """An admitted workload of ``queue`` holds ``usage`` (per flavor and resource)."""
        self._admitted[queue] = summed(self._admitted.get(queue, {}), _folded(usage, 1))
        self._touched.add(queue)

    def usage_removed(self, queue: LocalQueueKey, usage: Mapping[FlavorResource, int]) -> None:
        self._admitted[queue] = summed(self._admitted.get(queue, {}), _folded(usage, -1))
        self._touched.add(queue)

    def workload_assumed(self, workload: Workload, now: float) -> None:
        """A cycle admitted ``workload`` (its usage already added): the entry penalty is pushed, then
        folded in as the Workload controller does when it sees the admission."""
        queue, requests = workload.local_queue, workload_requests(workload)
        self.usages.initialize(queue, self.admitted_usage(queue), now)
        self.usages.assumed(queue, requests)
        self.usages.admitted(queue, requests, self.admitted_usage(queue), now)

    def tick(self, now: float, queues: Iterable[LocalQueueKey]) -> dict[LocalQueueKey, Resources]:
        """First sight of new LocalQueues and the samples that are due (LocalQueue reconciler): those a
        workload event touched, and those whose sampling interval has passed. Returns each resampled
        queue's consumed resources, what Kueue writes to its status."""
        written = {}
        for queue in queues:
            fresh = self.usages.initialize(queue, self.admitted_usage(queue), now)
            reconciled = fresh or queue in self._touched or self._interval_passed(queue, now)
            if reconciled and (fresh or self.usages.sample_due(queue, now)):
                written[queue] = self.usages.sample(queue, self.admitted_usage(queue), now)
        self._touched.clear()
        return written

    def _interval_passed(self, queue: LocalQueueKey, now: float) -> bool:
        """The reconciler's RequeueAfter of one sampling interval has come."""
        consumed = self.usages.consumed(queue)
        return consumed is not None and now - consumed.last_update >= self.config.usage_sampling_interval_seconds

    def local_queue_removed(self, queue: LocalQueueKey) -> None:
        self.usages.forget(queue)
        self._touched.discard(queue)

    def usage_of(self, local_queues: Mapping[LocalQueueKey, LocalQueue]) -> Callable[[LocalQueueKey], float]:
        """Each LocalQueue's usage now, with its weight (1 for a LocalQueue not known)."""

        def usage(queue: LocalQueueKey) -> float:
            lq = local_queues.get(queue)
            return self.usages.usage(queue, lq.fair_weight if lq is not None else 1.0)

        return usage


def _folded(usage: Mapping[FlavorResource, int], sign: int) -> Resources:
    folded: Resources = {}
    for (_, resource), milli in usage.items():
        folded[resource] = folded.get(resource, 0) + sign * milli
    return folded


def candidate_usage_key(candidate_usage: float | None) -> float:
    """The part of a preemption candidate's order that admission fair sharing adds (CandidatesOrdering
    step 2, after "other ClusterQueues first" and before priority): a candidate of a LocalQueue with
    higher usage goes first (ascending key); ``None`` for a candidate whose ClusterQueue does not order
    by usage. Kueue compares it only between two candidates of one ClusterQueue and different
    LocalQueues (one LocalQueue's share a usage, so the key ties them anyway); a key gives exactly that
    where the candidates before priority all come from one ClusterQueue, as the preemptor's own do."""
    if candidate_usage is None or math.isnan(candidate_usage):
        return 0.0
    return -candidate_usage
