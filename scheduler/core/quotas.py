"""Quota accounting: what each ClusterQueue uses, and what it may still use, in a cohort.

Follows Kueue's resource-node model (pkg/cache, "available"): a ClusterQueue keeps
``guaranteed = nominal - lendingLimit`` for itself and lends the rest to its cohort; the
cohort's pool is the sum of what its members lend plus the cohort's own quota; what a
queue may take from the pool is capped by its ``borrowingLimit``. Cohorts are flat: a
cohort's parent is not consulted yet.

``QuotaBook`` is plain data plus arithmetic, so a scheduling cycle can ``copy()`` it and
simulate admissions and preemptions without touching the real one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from scheduler.core.kinds import ClusterQueue, Cohort, FlavorResource

Usage = dict[FlavorResource, int]


class QuotaBook:
    """Specs of ClusterQueues and Cohorts, plus the usage admitted into each queue."""

    def __init__(self) -> None:
        self.cluster_queues: dict[str, ClusterQueue] = {}
        self.cohorts: dict[str, Cohort] = {}
        self.usage: dict[str, Usage] = {}
        self._members: dict[str, set[str]] = {}

    # -- specs ------------------------------------------------------------------
    def set_cluster_queue(self, cq: ClusterQueue) -> None:
        old = self.cluster_queues.get(cq.name)
        if old is not None and old.cohort:
            self._members[old.cohort].discard(cq.name)
        self.cluster_queues[cq.name] = cq
        self.usage.setdefault(cq.name, {})
        if cq.cohort:
            self._members.setdefault(cq.cohort, set()).add(cq.name)

    def remove_cluster_queue(self, name: str) -> None:
        # Usage stays: admitted workloads still hold it if the queue comes back.
        cq = self.cluster_queues.pop(name, None)
        if cq is not None and cq.cohort:
            self._members[cq.cohort].discard(name)

    def set_cohort(self, cohort: Cohort) -> None:
        self.cohorts[cohort.name] = cohort

    def remove_cohort(self, name: str) -> None:
        self.cohorts.pop(name, None)

    def cohort_members(self, cohort: str) -> set[str]:
        return self._members.get(cohort, set())

    def neighbours(self, cq_name: str) -> set[str]:
        """The queue itself and every queue sharing its cohort."""
        cq = self.cluster_queues.get(cq_name)
        if cq is None or not cq.cohort:
            return {cq_name}
        return set(self.cohort_members(cq.cohort)) | {cq_name}

    # -- usage ------------------------------------------------------------------
    def add_usage(self, cq_name: str, usage: Mapping[FlavorResource, int]) -> None:
        book = self.usage.setdefault(cq_name, {})
        for flavor_resource, milli in usage.items():
            book[flavor_resource] = book.get(flavor_resource, 0) + milli

    def remove_usage(self, cq_name: str, usage: Mapping[FlavorResource, int]) -> None:
        book = self.usage.setdefault(cq_name, {})
        for flavor_resource, milli in usage.items():
            book[flavor_resource] = book.get(flavor_resource, 0) - milli

    def used(self, cq_name: str, flavor_resource: FlavorResource) -> int:
        return self.usage.get(cq_name, {}).get(flavor_resource, 0)

    def copy(self) -> QuotaBook:
        """A copy whose usage can change independently; specs are shared (immutable)."""
        clone = QuotaBook()
        clone.cluster_queues = self.cluster_queues
        clone.cohorts = self.cohorts
        clone._members = self._members
        clone.usage = {name: dict(usage) for name, usage in self.usage.items()}
        return clone

    # -- quota arithmetic ---------------------------------------------------------
    def nominal(self, cq_name: str, flavor_resource: FlavorResource) -> int:
        quota = self.cluster_queues[cq_name].quota(flavor_resource)
        return 0 if quota is None else quota.nominal

    def guaranteed(self, cq_name: str, flavor_resource: FlavorResource) -> int:
        """Quota the queue keeps for itself: ``nominal - lendingLimit`` (0 without a limit)."""
        quota = self.cluster_queues[cq_name].quota(flavor_resource)
        if quota is None or quota.lending_limit is None:
            return 0
        return max(0, quota.nominal - quota.lending_limit)

    def available(self, cq_name: str, flavor_resource: FlavorResource) -> int:
        """How much more of ``flavor_resource`` the queue can admit now, borrowing included."""
        return self._available(cq_name, flavor_resource, with_usage=True)

    def potential_available(self, cq_name: str, flavor_resource: FlavorResource) -> int:
        """The most the queue could ever hold if nothing else were admitted anywhere."""
        return self._available(cq_name, flavor_resource, with_usage=False)

    def is_borrowing(self, cq_name: str, flavor_resource: FlavorResource) -> bool:
        return self.used(cq_name, flavor_resource) > self.nominal(cq_name, flavor_resource)

    def borrowing_level(self, cq_name: str, flavor_resource: FlavorResource, value: int) -> int:
        """How far from the queue ``value`` more must come: 0 within its nominal quota, 1 from its cohort.

        Kueue's classical.FindHeightOfLowestSubtreeThatFits: the height of the smallest cohort subtree
        that holds the extra usage, or the whole tree's. Cohorts are flat here, so any borrowing is 1;
        a queue without a cohort never borrows.
        """
        if not self.cluster_queues[cq_name].cohort:
            return 0
        return int(self.used(cq_name, flavor_resource) + value > self.nominal(cq_name, flavor_resource))

    def fits(self, cq_name: str, request: Mapping[FlavorResource, int], allow_borrowing: bool) -> bool:
        """Whether ``request`` fits now; without borrowing it must also stay within nominal."""
        for flavor_resource, milli in request.items():
            if milli <= 0:
                continue
            if not allow_borrowing and (
                self.used(cq_name, flavor_resource) + milli > self.nominal(cq_name, flavor_resource)
            ):
                return False
            if milli > self.available(cq_name, flavor_resource):
                return False
        return True

    def _available(self, cq_name: str, fr: FlavorResource, with_usage: bool) -> int:
        cq = self.cluster_queues[cq_name]
        quota = cq.quota(fr)
        nominal = 0 if quota is None else quota.nominal
        used = self.used(cq_name, fr) if with_usage else 0
        if not cq.cohort:
            return max(0, nominal - used)
        guaranteed = self.guaranteed(cq_name, fr)
        local = max(0, guaranteed - used)
        from_cohort = self._cohort_pool(cq.cohort, fr, with_usage)
        if quota is not None and quota.borrowing_limit is not None:
            lent = nominal - guaranteed
            used_from_cohort = max(0, used - guaranteed)
            from_cohort = min(from_cohort, lent - used_from_cohort + quota.borrowing_limit)
        # A cohort in debt (quota shrank, or a head's reservation) takes from the local part too:
        # Kueue adds the parent's possibly negative availability (pkg/cache/scheduler/resource_node.go).
        return max(0, local + from_cohort)

    def _cohort_pool(self, cohort: str, fr: FlavorResource, with_usage: bool) -> int:
        """Unused lendable quota in the cohort: members' lent quota + own quota - usage."""
        spec = self.cohorts.get(cohort)
        pool = spec.nominal(fr) if spec is not None else 0
        for member in self._members.get(cohort, ()):
            guaranteed = self.guaranteed(member, fr)
            pool += self.nominal(member, fr) - guaranteed
            if with_usage:
                pool -= max(0, self.used(member, fr) - guaranteed)
        return pool


def sum_usage(usages: Iterable[Mapping[FlavorResource, int]]) -> Usage:
    """Add several usage maps together."""
    total: Usage = {}
    for usage in usages:
        for flavor_resource, milli in usage.items():
            total[flavor_resource] = total.get(flavor_resource, 0) + milli
    return total
