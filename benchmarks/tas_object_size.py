"""The size of a Workload whose pod set is placed one pod per host, as each encoding writes it (a model).

For pod sets of 1k to 100k pods at host level on the harness's KWOK nodes (named kwok-000000 ...,
harness.nodes.pools) this computes the JSON of ``status.admission`` with the assignment written

- as Kueue v0.17.0 writes v1beta2 (one compact slice: common prefix/suffix out, universal counts;
  what the reference scheduler writes too, scheduler.core.topologyconversion), and
- as a list of domains, each with its values and count (v1beta1's shape, before the compact encoding),

the bytes per domain of each, and the largest pod set whose Workload stays under etcd's default
request limit (1.5 MiB). It writes nothing to a cluster: what kube-apiserver and etcd do with these
objects (the write refused, the Workload left pending) is measured by ``bench_tas_object_size.py``.

    .venv/bin/python benchmarks/tas_object_size.py --out results/tas/object-size-model.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.nodes import pools
from scheduler.core import topologyconversion
from scheduler.core.topologies import HOSTNAME_LABEL, DomainAssignment, TopologyAssignment

ETCD_REQUEST_LIMIT = int(1.5 * 2**20)
"""etcd's --max-request-bytes default (1.5 MiB); kube-apiserver refuses a larger object first."""
POD_SETS = (1_000, 10_000, 100_000)
WORKLOAD_OVERHEAD_BYTES = 2_000
"""An allowance for the rest of a small Workload (metadata, spec with one pod template, conditions); not
measured: the measured half replaces it with the stored object's size."""
KUEUE_MAX_ROOTS = 100_000
"""Kueue's CRD caps ``individual.roots`` (and ``podCounts.individual``) at 100,000 items (workload_types.go)."""


def assignment(pods: int, pod_set: pools.NodePool) -> TopologyAssignment:
    return TopologyAssignment((HOSTNAME_LABEL,), tuple(DomainAssignment((pod_set.node_name(i),), 1) for i in range(pods)))


def sizes(pods: int, names: str = "indexed") -> dict[str, int]:
    """Bytes of the admission's JSON (compact separators, as kube-apiserver stores JSON) per encoding."""
    placed = assignment(pods, pools.NodePool(count=pods, names=names))
    compact = topologyconversion.assignment_to_dict(placed)
    listed = {"levels": list(placed.levels),
              "domains": [{"values": list(d.values), "count": d.count} for d in placed.domains]}
    out = {}
    for name, encoded in (("v1beta2-compact", compact), ("domain-list", listed)):
        admission = {"clusterQueue": "cq", "podSetAssignments": [
            {"name": "main", "count": pods, "flavors": {"cpu": "tas"}, "resourceUsage": {"cpu": str(pods)},
             "topologyAssignment": encoded}]}
        out[name] = len(json.dumps(admission, separators=(",", ":"))) + WORKLOAD_OVERHEAD_BYTES
    return out


def largest_fitting(encoding: str, names: str = "indexed", high: int = 2_000_000) -> int:
    """The largest pod set (one pod per host) whose Workload stays within the etcd request limit."""
    low = 1
    while low < high:
        middle = (low + high + 1) // 2
        if sizes(middle, names)[encoding] <= ETCD_REQUEST_LIMIT:
            low = middle
        else:
            high = middle - 1
    return low


def figures(names: str) -> dict:
    """Each pod set's bytes and bytes per domain in each encoding, and the largest that fits."""
    table = []
    for pods in POD_SETS:
        measured, one = sizes(pods, names), sizes(1, names)
        row = {"pods": pods, **{f"{k}_bytes": v for k, v in measured.items()}}
        row.update({f"{k}_bytes_per_domain": round((v - one[k]) / max(pods - 1, 1), 2) for k, v in measured.items()})
        table.append(row)
    return {"rows": table, "largest_pod_set_within_limit": {
        encoding: largest_fitting(encoding, names) for encoding in ("v1beta2-compact", "domain-list")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    result = {"schema_version": 2, "etcd_request_limit_bytes": ETCD_REQUEST_LIMIT, "node_names": "kwok-NNNNNN",
              "kueue_crd_max_roots": KUEUE_MAX_ROOTS, **figures("indexed"),
              "cloud": {"node_names": f"kwok-<8 hex per {pools.CLOUD_GROUP_SIZE:,} nodes>-<4 characters>",
                        **figures("cloud")}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
