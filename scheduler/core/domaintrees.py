"""The domains of one TAS flavor as a tree, with the usage of admitted workloads kept per leaf.

Kueue v0.17.0 rebuilds this tree at every scheduling cycle from all nodes and all usage
(pkg/cache/scheduler/tas_flavor.go ``snapshot``). Here the tree is built when its nodes change, and the
usage of admitted workloads (``DomainUsage``) is added and removed as they are admitted and leave
(Kueue's TASFlavorCache.addUsage/removeUsage); a cycle reads both.

A leaf is one node when the lowest level is ``kubernetes.io/hostname``, else the set of nodes sharing
all level values (their allocatable summed). Nodes lacking one of the levels' labels, or one of the
flavor's ``nodeLabels``, are not in the tree (Kueue's NodeMatchesFlavor). Usage of pods that Kueue
did not place (DaemonSets, static pods) is not modelled: the simulated nodes run none.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping

from scheduler.core.kinds import Toleration
from scheduler.core.topologies import DomainId, Node, Topology

PODS = "pods"
USAGE_LOG_LIMIT = 100_000
"""Usage changes kept for the counts of ``domaincounts`` to catch up with; one further behind counts anew."""


class Domain:
    """A domain at some level; the other fields are one placement's scratch counts (Kueue's domain):
    pods and slices that fit, whether a group's leader fits, and what fits beside it."""

    __slots__ = ("id", "values", "parent", "children", "state", "slice_state", "leader_state", "state_with_leader",
                 "slice_state_with_leader")

    def __init__(self, domain_id: DomainId, values: tuple[str, ...]) -> None:
        self.id = domain_id
        self.values = values
        self.parent: Domain | None = None
        self.children: list[Domain] = []
        self.state = self.slice_state = self.leader_state = 0
        self.state_with_leader = self.slice_state_with_leader = 0


class Leaf(Domain):
    __slots__ = ("free", "node", "nodes")

    def __init__(self, domain_id: DomainId, values: tuple[str, ...], node: Node | None) -> None:
        super().__init__(domain_id, values)
        self.free: dict[str, int] = {}
        self.node = node
        self.nodes = 0  # nodes whose allocatable ``free`` sums


def domain_id(values: Iterable[str]) -> DomainId:
    """Kueue's utiltas.DomainID."""
    return ",".join(values)


def node_matches(node: Node, node_labels: Mapping[str, str], levels: Iterable[str]) -> bool:
    """Kueue's NodeMatchesFlavor: the flavor's labels and every level's label."""
    labels = node.labels
    return all(labels.get(k) == v for k, v in node_labels.items()) and all(level in labels for level in levels)


def add_into(target: dict[str, int], amounts: Mapping[str, int], sign: int = 1) -> None:
    for resource, value in amounts.items():
        target[resource] = target.get(resource, 0) + sign * value


class DomainUsage:
    """The usage of admitted workloads per leaf id of one TAS flavor, pods included; by workload, so a
    removal is idempotent (Kueue's TASFlavorCache). It outlives the trees built over it."""

    def __init__(self) -> None:
        self.per_leaf: dict[DomainId, dict[str, int]] = {}
        self._by_workload: dict[Hashable, list[tuple[DomainId, dict[str, int]]]] = {}
        # Leaves whose usage changed, in order; log[0] is change number log_start.
        self.log: list[DomainId] = []
        self.log_start = 0

    @property
    def log_end(self) -> int:
        return self.log_start + len(self.log)

    def _changed(self, leaf_id: DomainId) -> None:
        self.log.append(leaf_id)
        if len(self.log) > USAGE_LOG_LIMIT:
            drop = len(self.log) // 2
            del self.log[:drop]
            self.log_start += drop

    def add_workload(self, key: Hashable, domains: Iterable[tuple[DomainId, Mapping[str, int], int]]) -> None:
        """Per leaf id, a workload's per-pod requests and pod count (Kueue adds the pods too)."""
        self.remove_workload(key)
        entries = []
        for leaf_id, per_pod, count in domains:
            total = {r: v * count for r, v in per_pod.items()}
            total[PODS] = total.get(PODS, 0) + count * 1000
            add_into(self.per_leaf.setdefault(leaf_id, {}), total)
            entries.append((leaf_id, total))
            self._changed(leaf_id)
        self._by_workload[key] = entries

    def remove_workload(self, key: Hashable) -> None:
        """Take a workload's usage back; a workload not added is ignored."""
        for leaf_id, total in self._by_workload.pop(key, ()):
            add_into(self.per_leaf[leaf_id], total, -1)
            self._changed(leaf_id)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._by_workload


class DomainTree:
    """One TAS flavor's topology over its nodes, reading the usage of admitted workloads."""

    def __init__(self, topology: Topology, nodes: Iterable[Node], tolerations: tuple[Toleration, ...] = (),
                 node_labels: Mapping[str, str] | None = None, usage: DomainUsage | None = None) -> None:
        self.topology = topology
        self.levels = topology.levels
        self.tolerations = tolerations
        self.node_labels = dict(node_labels or {})
        self.lowest_is_node = topology.lowest_is_node
        self.usage = usage if usage is not None else DomainUsage()
        self.leaves: dict[DomainId, Leaf] = {}
        self.per_level: list[dict[DomainId, Domain]] = [{} for _ in self.levels]
        # Pods that fit per domain, by pod shape (kept by ``domaincounts``).
        self.shapes: dict = {}
        for node in nodes:
            self.add_node(node)

    def add_node(self, node: Node) -> tuple[Leaf, list[Domain]] | None:
        """Put a node in the tree: its leaf and the domains made for it (leaf first, then up), or None when
        the node is not one of the flavor's."""
        levels = self.levels
        if not levels or not node_matches(node, self.node_labels, levels):
            return None
        values = tuple(node.labels[level] for level in levels)
        leaf_id = node.labels[levels[-1]] if self.lowest_is_node else domain_id(values)
        leaf = self.leaves.get(leaf_id)
        created: list[Domain] = []
        if leaf is None:
            leaf = self.leaves[leaf_id] = Leaf(leaf_id, values, node if self.lowest_is_node else None)
            self.per_level[-1][leaf_id] = leaf
            created.append(leaf)
            child: Domain = leaf
            for depth in range(len(levels) - 1, 0, -1):
                parent_values = child.values[:depth]
                parent_id = domain_id(parent_values)
                parent = self.per_level[depth - 1].get(parent_id)
                made = parent is None
                if parent is None:
                    parent = self.per_level[depth - 1][parent_id] = Domain(parent_id, parent_values)
                    created.append(parent)
                child.parent = parent
                parent.children.append(child)
                if not made:
                    break
                child = parent
        add_into(leaf.free, node.allocatable)
        leaf.nodes += 1
        return leaf, created

    def remove_node(self, node: Node) -> tuple[Leaf, list[Domain]] | None:
        """Take a node (as it was added) out: its leaf and the domains left empty (leaf first, then up;
        they keep their parent links), or None when the node was not in the tree."""
        levels = self.levels
        if not levels or not node_matches(node, self.node_labels, levels):
            return None
        values = tuple(node.labels[level] for level in levels)
        leaf = self.leaves.get(node.labels[levels[-1]] if self.lowest_is_node else domain_id(values))
        if leaf is None:
            return None
        add_into(leaf.free, node.allocatable, -1)
        leaf.nodes -= 1
        if leaf.nodes > 0:
            return leaf, []
        del self.leaves[leaf.id], self.per_level[-1][leaf.id]
        removed: list[Domain] = [leaf]
        child: Domain = leaf
        while child.parent is not None:
            parent = child.parent
            parent.children.remove(child)
            if parent.children:
                break
            del self.per_level[len(parent.values) - 1][parent.id]
            removed.append(parent)
            child = parent
        return leaf, removed

    @property
    def roots(self) -> list[Domain]:
        return list(self.per_level[0].values()) if self.levels else []

    def leaf_id(self, values: tuple[str, ...]) -> DomainId:
        """The leaf an assignment's domain names: its hostname, or all its level values."""
        return values[-1] if self.lowest_is_node else domain_id(values)

    def remaining(self, leaf: Leaf, simulate_empty: bool = False) -> dict[str, int]:
        """Free capacity of a leaf less the admitted usage (none when simulating an empty cluster)."""
        left = dict(leaf.free)
        if not simulate_empty:
            used = self.usage.per_leaf.get(leaf.id)
            if used:
                add_into(left, used, -1)
        return left

    def fits(self, domains: Iterable[tuple[DomainId, Mapping[str, int], int]],
             assumed: Mapping[DomainId, Mapping[str, int]] | None = None) -> bool:
        """Kueue's TASFlavorSnapshot.Fits: every leaf still holds its pods (``assumed``: usage of the cycle)."""
        for leaf_id, per_pod, count in domains:
            leaf = self.leaves.get(leaf_id)
            if leaf is None:
                return False
            left = self.remaining(leaf)
            if assumed and leaf_id in assumed:
                add_into(left, assumed[leaf_id], -1)
            if count_in(per_pod, left)[0] < count:
                return False
        return True


def count_in(per_pod: Mapping[str, int], capacity: Mapping[str, int]) -> tuple[int, str]:
    """How many pods of ``per_pod`` fit in ``capacity``, and the limiting resource (Kueue's
    CountInWithLimitingResource: a resource missing from capacity fits none; ties go to the smaller name)."""
    result: int | None = None
    limiting = ""
    for resource, value in per_pod.items():
        if resource not in capacity and value != 0:
            return 0, resource
        # Go's integer division truncates towards zero (capacity may be overdrawn).
        left = capacity[resource]
        count = 2**31 - 1 if value == 0 else left // value if left >= 0 else -(-left // value)
        if result is None or count < result or (count == result and resource < limiting):
            result, limiting = count, resource
    return (result or 0), limiting
