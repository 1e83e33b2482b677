"""Node objects as kube-apiserver keeps them in etcd, for loading nodes without POSTs (pure).

A stored node is the pool's manifest (pools.NodePool.manifest) plus what the POST path would have
added by the time the node is Ready: the uid and creationTimestamp kube-apiserver sets, the
`node.kubernetes.io/not-ready` taint its TaintNodesByCondition admission adds where that plugin is on,
and the Ready status kwok's node stage writes (kwokconfig: conditions, nodeInfo, phase; capacity and
allocatable as the pool gives them). Nothing else: no resourceVersion (etcd's revision is the
version kube-apiserver reports), no managedFields (a client's field-manager history; kube-apiserver
starts one on the first update), no field a client could not have set.

Values are JSON. kube-apiserver decodes what it reads from etcd by recognising the format (JSON,
YAML or its protobuf envelope `k8s\\0`) and writes built-in types as protobuf; writing protobuf
here would mean carrying Kubernetes' generated schema for Node. What it changes: clients get the
same object either way (kube-apiserver serves whatever encoding they ask for, and its watch cache
holds decoded objects); etcd holds 1.85 KB per default node, against 2.35 KB of protobuf for a node
made by POST (most of it the managedFields a bulk node lacks); JSON costs kube-apiserver more CPU
to decode, once per node, when its watch cache takes the nodes in. The first write by anyone (a
label, a status patch) stores the node as protobuf.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterator

import orjson

from harness.clusters import kwokconfig
from harness.nodes.pools import NodePool

ETCD_PREFIX = "/registry/minions/"
"""kube-apiserver's --etcd-prefix (kwokctl's default, /registry) and the nodes resource's storage name."""


def key(name: str) -> bytes:
    return (ETCD_PREFIX + name).encode()


def rfc3339(seconds: float) -> str:
    """A Kubernetes timestamp (whole seconds, UTC), as metav1.Time serialises."""
    return dt.datetime.fromtimestamp(int(seconds), dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def ready_status(resources: dict, at: str) -> dict:
    """status of a node kwok has marked Ready (kwokconfig.NODE_READY_TEMPLATE) at time `at`."""
    conditions = [{"type": kind, "status": status, "reason": reason, "message": kwokconfig.NODE_CONDITION_MESSAGE,
                   "lastHeartbeatTime": at, "lastTransitionTime": at}
                  for kind, status, reason in kwokconfig.NODE_CONDITIONS]
    return {"allocatable": dict(resources["allocatable"]), "capacity": dict(resources["capacity"]),
            "conditions": conditions, "nodeInfo": dict(kwokconfig.NODE_INFO), "phase": kwokconfig.NODE_PHASE}


def stored_node(pool: NodePool, index: int, uid: str, created: str, taint_not_ready: bool) -> dict:
    """The index-th node of pool as kube-apiserver would store it once Ready (see the module docstring)."""
    manifest = pool.manifest(index)
    metadata = {**manifest["metadata"], "uid": uid, "creationTimestamp": created}
    spec = dict(manifest["spec"])
    if taint_not_ready:
        spec["taints"] = [*spec.get("taints", ()), dict(kwokconfig.NOT_READY_TAINT)]
    return {"apiVersion": manifest["apiVersion"], "kind": manifest["kind"], "metadata": metadata, "spec": spec,
            "status": ready_status(manifest["status"], created)}


def entries(pools: list[NodePool], created: str, taint_not_ready: bool,
            uids: Callable[[], str] = lambda: str(uuid.uuid4())) -> Iterator[tuple[bytes, bytes]]:
    """(etcd key, JSON value) of every node of every pool, in pool order."""
    for pool in pools:
        for index in range(pool.count):
            node = stored_node(pool, index, uids(), created, taint_not_ready)
            yield key(node["metadata"]["name"]), orjson.dumps(node)


def node_names(pools: list[NodePool]) -> list[str]:
    return [pool.node_name(index) for pool in pools for index in range(pool.count)]
