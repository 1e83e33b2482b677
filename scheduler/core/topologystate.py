"""The TAS world the scheduler keeps: Topologies, Ready nodes, TAS flavors, and where admitted pods are.

Kueue's tasCache (pkg/cache/scheduler/tas_cache.go) in memory: a ResourceFlavor with ``topologyName``
is a TAS flavor once its Topology exists. Its tree (``domaintrees``) is rebuilt only after the flavor or
its Topology changed, at the next read; a node is added to or taken from it in place. The usage of
admitted workloads is kept per flavor as they are admitted and leave. A cycle reads trees and adds what
it admits to a ``CycleUsage`` so later entries of the same cycle see it (Kueue's snapshot after assume).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping
from contextlib import contextmanager

from scheduler.core.domaintrees import DomainTree, DomainUsage, add_into
from scheduler.core.kinds import ClusterQueue, ResourceFlavor
from scheduler.core.topologies import DomainId, Node, Topology
from scheduler.core.workloads import Admission, PodSetAssignment

# (leaf id, per-pod requests, pods): one domain of an assignment as usage.
DomainRequest = tuple[DomainId, dict[str, int], int]
_ASSUMED = object()
"""First half of the keys under which CycleUsage.applied records the cycle's admissions (never a workload key)."""


class TopologyState:
    def __init__(self) -> None:
        self.topologies: dict[str, Topology] = {}
        self.nodes: dict[str, Node] = {}
        self.flavors: dict[str, ResourceFlavor] = {}
        self._usage: dict[str, DomainUsage] = {}
        self._trees: dict[str, DomainTree] = {}
        self._stale: set[str] = set()
        # False while the nodes are still to be listed (a feed that watches them only once a TAS flavor
        # exists says so): queues with TAS flavors wait rather than decide on no nodes.
        self.nodes_known = True

    # -- objects --------------------------------------------------------------------------------

    def set_topology(self, topology: Topology) -> None:
        self.topologies[topology.name] = topology
        self._stale.update(f.name for f in self.flavors.values() if f.topology_name == topology.name)

    def delete_topology(self, name: str) -> None:
        self.topologies.pop(name, None)
        self._stale.update(f.name for f in self.flavors.values() if f.topology_name == name)

    def set_flavor(self, flavor: ResourceFlavor) -> None:
        """Any ResourceFlavor: one without ``topologyName`` is forgotten here."""
        if flavor.topology_name:
            self.flavors[flavor.name] = flavor
        else:
            self.flavors.pop(flavor.name, None)
        self._stale.add(flavor.name)

    def delete_flavor(self, name: str) -> None:
        self.flavors.pop(name, None)
        self._stale.add(name)

    def set_node(self, name: str, node: Node | None) -> None:
        """A node as it is now; None when it is not Ready or not schedulable (out of every tree). Built
        trees take it in place, with their kept counts (a bulk of node events costs no rebuild)."""
        old = self.nodes.get(name)
        if old == node:
            return
        if node is None:
            del self.nodes[name]
        else:
            self.nodes[name] = node
        for flavor, tree in self._trees.items():
            if flavor in self._stale:
                continue
            if old is not None and (gone := tree.remove_node(old)) is not None:
                for counts in tree.shapes.values():
                    counts.node_removed(*gone)
            if node is not None and (added := tree.add_node(node)) is not None:
                for counts in tree.shapes.values():
                    counts.node_added(*added)

    # -- reading --------------------------------------------------------------------------------

    def is_tas_flavor(self, name: str) -> bool:
        return name in self.flavors

    def tree(self, flavor: str) -> DomainTree | None:
        """The flavor's tree over the Ready nodes, or None when it is no TAS flavor or lacks its Topology."""
        if flavor in self._stale:
            self._stale.discard(flavor)
            self._trees.pop(flavor, None)
            rf = self.flavors.get(flavor)
            topology = self.topologies.get(rf.topology_name) if rf else None
            if rf is not None and topology is not None:
                usage = self._usage.setdefault(flavor, DomainUsage())
                self._trees[flavor] = DomainTree(topology, self.nodes.values(), rf.tolerations, rf.node_labels, usage)
        return self._trees.get(flavor)

    def flavors_without_nodes(self) -> list[str]:
        """TAS flavors none of whose nodes carries every level of its Topology (and its nodeLabels) while
        nodes exist: their pod sets can only be told there are no domains."""
        if not self.nodes:
            return []
        return sorted(f for f in self.flavors if (tree := self.tree(f)) is not None and not tree.leaves)

    def awaiting_nodes(self, cq: ClusterQueue) -> bool:
        """Whether ``cq`` has a TAS flavor whose nodes are not listed yet (its heads wait a cycle)."""
        return not self.nodes_known and any(fq.name in self.flavors for g in cq.resource_groups for fq in g.flavors)

    def tas_only(self, cq: ClusterQueue) -> bool:
        """Kueue's isTASOnly: every flavor of the queue is a TAS flavor (its pod sets get TAS implied)."""
        return all(fq.name in self.flavors for group in cq.resource_groups for fq in group.flavors)

    # -- usage of admitted workloads ------------------------------------------------------------

    def add_workload(self, key: Hashable, admission: Admission) -> None:
        """Record where an admitted workload's pods are (nothing when it has no topology assignment)."""
        self.remove_workload(key)
        per_flavor: dict[str, list[DomainRequest]] = {}
        for flavor, domains in self.domain_requests(admission):
            per_flavor.setdefault(flavor, []).extend(domains)
        for flavor, domains in per_flavor.items():
            self._usage.setdefault(flavor, DomainUsage()).add_workload(key, domains)

    def remove_workload(self, key: Hashable) -> None:
        for usage in self._usage.values():
            usage.remove_workload(key)

    def domain_requests(self, admission: Admission) -> Iterator[tuple[str, list[DomainRequest]]]:
        """Per TAS pod set: its flavor and, per domain, the per-pod usage and pods (Kueue's ComputeTASNetUsage:
        the pod set's quota usage in the TAS flavor divided by its count)."""
        for psa in admission.pod_set_assignments:
            assignment = psa.topology_assignment
            flavor = _tas_flavor(psa, self.flavors)
            if assignment is None or flavor is None or psa.count <= 0:
                continue
            per_pod = {r: v // psa.count for r, v in psa.usage.items() if psa.flavors.get(r) == flavor}
            lowest_is_node = Topology("", assignment.levels).lowest_is_node
            yield flavor, [(d.values[-1] if lowest_is_node else ",".join(d.values), per_pod, d.count)
                           for d in assignment.domains]


class CycleUsage:
    """What a cycle admitted or reserved so far, per TAS flavor and leaf, on top of the admitted usage."""

    def __init__(self, state: TopologyState) -> None:
        self.state = state
        self._assumed: dict[str, dict[DomainId, dict[str, int]]] = {}
        self._admissions: list[Admission] = []

    def fits(self, admission: Admission, gone: Iterable[Admission] = ()) -> bool:
        """Whether the admission's pods still fit where it places them, the ``gone`` admissions' pods
        taken away (Kueue's fits on its snapshot less the cycle's preempted workloads)."""
        freed: dict[str, dict[DomainId, dict[str, int]]] = {}
        for other in gone:
            self._add(freed, other, -1)
        for flavor, domains in self.state.domain_requests(admission):
            tree = self.state.tree(flavor)
            extra = {leaf: dict(u) for leaf, u in self._assumed.get(flavor, {}).items()}
            for leaf, u in freed.get(flavor, {}).items():
                add_into(extra.setdefault(leaf, {}), u)
            if tree is None or not tree.fits(domains, extra):
                return False
        return True

    def assume(self, admission: Admission) -> None:
        self._add(self._assumed, admission, 1)
        self._admissions.append(admission)

    @contextmanager
    def applied(self) -> Iterator[None]:
        """The state with what the cycle assumed so far recorded in it, for the block: a placement made
        inside sees the nodes as the cycle has left them (Kueue's snapshot, which the walk adds to)."""
        keys = [(_ASSUMED, index) for index in range(len(self._admissions))]
        for key, admission in zip(keys, self._admissions):
            self.state.add_workload(key, admission)
        try:
            yield
        finally:
            for key in keys:
                self.state.remove_workload(key)

    def _add(self, into: dict[str, dict[DomainId, dict[str, int]]], admission: Admission, sign: int) -> None:
        for flavor, domains in self.state.domain_requests(admission):
            per_leaf = into.setdefault(flavor, {})
            for leaf_id, per_pod, count in domains:
                total = {r: v * count for r, v in per_pod.items()}
                total["pods"] = total.get("pods", 0) + count * 1000
                add_into(per_leaf.setdefault(leaf_id, {}), total, sign)


def _tas_flavor(psa: PodSetAssignment, flavors: Mapping[str, ResourceFlavor]) -> str | None:
    names = sorted({f for f in psa.flavors.values() if f in flavors})
    return names[0] if names else None
