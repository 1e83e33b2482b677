"""The size of a Workload whose pod set is placed one pod per host, as each encoding writes it (a model, pure).

For a pod set of P pods on the first P nodes of a node pool (its names: indexed `kwok-000042` or cloud-style,
harness.nodes.pools) this computes the JSON of ``status.admission`` with the assignment written

- as Kueue v0.17.0 writes v1beta2 (one compact slice: common prefix/suffix out, universal counts),
- as Kueue v0.19 writes it by default (a slice per run of hosts sharing a name prefix,
  TASAssignmentsEncodingByHostnamePrefix), both also what the reference scheduler writes when it decides
  as that version (scheduler.core.topologyconversion), and
- as a list of domains, each with its values and count (v1beta1's shape, before the compact encoding),

plus an allowance for the rest of the Workload. The phase puts it beside the stored size it measures.
"""

from __future__ import annotations

import json

from harness.nodes import pools
from scheduler.core import topologyconversion
from scheduler.core.topologies import HOSTNAME_LABEL, DomainAssignment, TopologyAssignment

ETCD_REQUEST_LIMIT = int(1.5 * 2**20)
"""etcd's --max-request-bytes default (1.5 MiB); kube-apiserver refuses a larger object first."""
WORKLOAD_OVERHEAD_BYTES = 2_000
"""An allowance for the rest of a small Workload (metadata, spec with one pod template, conditions); not
measured: the phase measures the stored object's size beside it."""
KUEUE_MAX_ROOTS = 100_000
"""Kueue's CRD caps ``individual.roots`` (and ``podCounts.individual``) at 100,000 items (workload_types.go)."""
COMPACT, PREFIX_RUNS, DOMAIN_LIST = "v1beta2-compact", "v1beta2-prefix-runs", "domain-list"
ENCODINGS = (COMPACT, PREFIX_RUNS, DOMAIN_LIST)


def assignment(pods: int, pool: pools.NodePool) -> TopologyAssignment:
    """One pod on each of the pool's first `pods` nodes."""
    return TopologyAssignment((HOSTNAME_LABEL,), tuple(DomainAssignment((pool.node_name(i),), 1) for i in range(pods)))


def encoded(placed: TopologyAssignment, encoding: str) -> dict:
    if encoding == DOMAIN_LIST:
        return {"levels": list(placed.levels),
                "domains": [{"values": list(d.values), "count": d.count} for d in placed.domains]}
    return topologyconversion.assignment_to_dict(placed, hostname_prefix_runs=encoding == PREFIX_RUNS)


def sizes(pods: int, pool: pools.NodePool) -> dict[str, int]:
    """Bytes of the Workload per encoding: the admission's JSON (compact separators, as kube-apiserver stores
    JSON) plus the allowance for the rest."""
    placed = assignment(pods, pool)
    out = {}
    for encoding in ENCODINGS:
        admission = {"clusterQueue": "cq", "podSetAssignments": [
            {"name": "main", "count": pods, "flavors": {"cpu": "tas"}, "resourceUsage": {"cpu": str(pods)},
             "topologyAssignment": encoded(placed, encoding)}]}
        out[encoding] = len(json.dumps(admission, separators=(",", ":"))) + WORKLOAD_OVERHEAD_BYTES
    return out


def largest_fitting(encoding: str, pool: pools.NodePool, limit: int = ETCD_REQUEST_LIMIT, high: int = 2_000_000) -> int:
    """The largest pod set (one pod per host, at most `high`) whose Workload stays within `limit` bytes."""
    low = 1
    while low < high:  # a binary search: about log2(high) steps
        middle = (low + high + 1) // 2
        if sizes(middle, pool)[encoding] <= limit:
            low = middle
        else:
            high = middle - 1
    return low
