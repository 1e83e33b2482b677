"""Topology-aware scheduling's objects from and to their Kueue-shaped dicts (pure).

Topology and Node objects in, a pod set's ``topologyRequest`` in, and ``topologyAssignment`` out in
Kueue's v1beta2 encoding (pkg/util/tas/tas_assignment.go ``V1Beta2From``): in v0.17.0 one slice holding
every domain, each level's values as one ``universal`` value when all are equal, else ``individual``
roots with their common ``prefix``/``suffix`` taken out, and ``podCounts`` universal when all counts
are equal; from v0.19 by default one such slice per run of hosts sharing a name prefix, which halves a
cloud-named assignment. Reading decodes any number of slices.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar

from scheduler.core.kinds import Taint, Toleration
from scheduler.core.quantities import parse_quantity
from scheduler.core.topologies import (
    HOSTNAME_LABEL,
    DomainAssignment,
    Node,
    Topology,
    TopologyAssignment,
    TopologyRequest,
)

Obj = dict[str, Any]
T = TypeVar("T")


def topology_from_dict(obj: Obj) -> Topology:
    spec = obj.get("spec") or {}
    levels = tuple(level.get("nodeLabel", "") for level in spec.get("levels") or ())
    return Topology((obj.get("metadata") or {}).get("name", ""), levels)


def node_from_dict(obj: Obj) -> Node | None:
    """A Node as placement sees it, or None when it is not Ready or is unschedulable (Kueue's nodesCache)."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or ())
    if spec.get("unschedulable") or not ready:
        return None
    taints = tuple(Taint(t.get("key", ""), t.get("value", ""), t.get("effect", "")) for t in spec.get("taints") or ())
    allocatable = {r: parse_quantity(v) for r, v in (status.get("allocatable") or {}).items()}
    metadata = obj.get("metadata") or {}
    return Node(metadata.get("name", ""), dict(metadata.get("labels") or {}), allocatable, taints)


def tolerations_from_list(items: list[Obj] | None) -> tuple[Toleration, ...]:
    """core/v1 tolerations (an absent operator is Equal)."""
    return tuple(Toleration(t.get("key", ""), t.get("operator", "Equal"), t.get("value", ""), t.get("effect", ""))
                 for t in items or ())


def topology_request_from_dict(obj: Obj | None) -> TopologyRequest | None:
    """A pod set's ``topologyRequest``; None when absent or when it sets none of the fields read here."""
    if not obj:
        return None
    size = obj.get("podSetSliceSize")
    request = TopologyRequest(
        required=obj.get("required"),
        preferred=obj.get("preferred"),
        unconstrained=obj.get("unconstrained"),
        slice_required=obj.get("podSetSliceRequiredTopology"),
        slice_size=None if size is None else int(size),
        group=obj.get("podSetGroupName"),
    )
    return request if request.explicit or request.group is not None else None


MAX_DOMAINS_PER_SLICE = 100_000
"""v1beta2's MaxItems of a slice's roots and individual pod counts."""
MAX_SLICES = 1_000
"""v1beta2's MaxItems of a topologyAssignment's slices."""


def assignment_to_dict(assignment: TopologyAssignment, hostname_prefix_runs: bool = False) -> Obj:
    """Kueue's v1beta2 ``topologyAssignment`` (pkg/util/tas/tas_assignment.go V1Beta2From): v0.17.0's single
    compact slice, or with ``hostname_prefix_runs`` (Kueue v0.19's TASAssignmentsEncodingByHostnamePrefix,
    beta and on by default) consecutive hosts that share a reusable '-'-delimited name prefix as a slice each,
    unless one compact slice serialises smaller (and fits a slice's limit)."""
    levels, domains = list(assignment.levels), list(assignment.domains)
    if not domains:
        return {"levels": levels}  # Go's omitempty drops the empty slices
    single = {"levels": levels, "slices": [_slice(levels, domains)]}
    if not hostname_prefix_runs:
        return single
    runs = _prefix_runs(levels, domains)
    if len(runs["slices"]) <= 1 or len(domains) > MAX_DOMAINS_PER_SLICE:
        return runs
    return single if _json_size(single) < _json_size(runs) else runs


def _json_size(obj: Obj) -> int:
    """Bytes of Go's json.Marshal of the same object (compact; host names are ASCII)."""
    return len(json.dumps(obj, separators=(",", ":")))


def _prefix_runs(levels: list[str], domains: list[DomainAssignment]) -> Obj:
    """compactTopologyAssignmentEncodingWithHostnamePrefixRuns: a slice per run of hosts with the same
    reusable prefix, each cut at MAX_DOMAINS_PER_SLICE."""
    keys = _hostname_prefix_keys(domains) if len(domains) > 1 and levels[-1] == HOSTNAME_LABEL else None
    return {"levels": levels, "slices": [_slice(levels, list(run[start:start + MAX_DOMAINS_PER_SLICE]))
                                         for run in _runs(domains, keys)
                                         for start in range(0, len(run), MAX_DOMAINS_PER_SLICE)]}


def _slice(levels: list[str], domains: list[DomainAssignment]) -> Obj:
    """compactSliceEncoding: one slice with every compressing option it can use."""
    per_level = [_compact([d.values[i] for d in domains]) for i in range(len(levels))]
    counts = [d.count for d in domains]
    pod_counts = {"universal": counts[0]} if len(set(counts)) == 1 else {"individual": counts}
    return {"domainCount": len(domains), "valuesPerLevel": per_level, "podCounts": pod_counts}


def _runs(domains: Sequence[T], keys: list[str] | None) -> list[Sequence[T]]:
    """compactDomainRuns: consecutive domains of the same key (keys a, a, b, a: three runs); no keys, one run."""
    if not keys:
        return [domains]
    runs: list[Sequence[T]]
    runs, start = [], 0
    for i in range(1, len(domains)):
        if keys[i] != keys[start]:
            runs.append(domains[start:i])
            start = i
    return [*runs, domains[start:]]


def _hostname_prefix_keys(domains: list[DomainAssignment]) -> list[str] | None:
    """reusableHostnamePrefixKeys: per host, its longest '-'-delimited prefix that another host of the
    assignment shares ("pool-a-node-0" and "pool-a-node-1": "pool-a-node-"); the deepest such prefixes whose
    runs fit MAX_SLICES slices, else shallower ones; None when none does (one run)."""
    hosts = [d.values[-1] for d in domains]
    ends = [[i + 1 for i in range(len(host) - 1) if host[i] == "-"] for host in hosts]
    seen: dict[str, int] = {}
    for host, host_ends in zip(hosts, ends):
        for end in host_ends:
            seen[host[:end]] = seen.get(host[:end], 0) + 1
    for depth in range(max(map(len, ends), default=0), 0, -1):
        keys = [next((host[:end] for end in reversed(host_ends[:depth]) if seen[host[:end]] >= 2), "")
                for host, host_ends in zip(hosts, ends)]
        slices = sum(-(-len(run) // MAX_DOMAINS_PER_SLICE) for run in _runs(list(range(len(keys))), keys))
        if slices <= MAX_SLICES:
            return keys
    return None


def _compact(values: list[str]) -> Obj:
    """fillSingleCompactSliceValues: one universal value, or roots without their common prefix and suffix."""
    prefix = suffix = values[0]
    shortest = longest = len(values[0])
    for value in values[1:]:
        shortest, longest = min(shortest, len(value)), max(longest, len(value))
        prefix = prefix[:_common_prefix(prefix, value)]
        suffix = suffix[len(suffix) - _common_prefix(suffix[::-1], value[::-1]):]
    if len(prefix) == longest:
        return {"universal": prefix}
    if len(prefix) + len(suffix) > shortest:
        prefix = prefix[:shortest - len(suffix)]
    individual: Obj = {}
    if prefix:
        individual["prefix"] = prefix
    if suffix:
        individual["suffix"] = suffix
    individual["roots"] = [v[len(prefix):len(v) - len(suffix)] for v in values]
    return {"individual": individual}


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def assignment_from_dict(obj: Obj) -> TopologyAssignment:
    """Every slice's domains, in order (Kueue's InternalFrom)."""
    return TopologyAssignment(tuple(obj.get("levels") or ()), tuple(_domains(obj.get("slices") or ())))


def _domains(slices: Iterable[Obj]) -> Iterator[DomainAssignment]:
    for piece in slices:
        n = int(piece.get("domainCount", 0))
        columns = [_level_values(level, n) for level in piece.get("valuesPerLevel") or ()]
        counts = piece.get("podCounts") or {}
        individual = counts.get("individual")
        for i in range(n):
            count = int(individual[i]) if individual is not None else int(counts.get("universal", 0))
            yield DomainAssignment(tuple(column[i] for column in columns), count)


def _level_values(level: Obj, n: int) -> list[str]:
    if "universal" in level and level["universal"] is not None:
        return [level["universal"]] * n
    individual = level.get("individual") or {}
    prefix, suffix = individual.get("prefix") or "", individual.get("suffix") or ""
    return [prefix + root + suffix for root in individual.get("roots") or ()]
