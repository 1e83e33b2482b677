"""Loading nodes straight into etcd, then waiting until kube-apiserver serves them all Ready.

The POST path (creating.py) costs two writes per node through kube-apiserver, our POST and kwok's
status patch to Ready: 479 s for 100k nodes on this machine. Here each node is written once, already
Ready, one per etcd revision with many in flight (etcdwriting) while kube-apiserver runs; kube-apiserver takes
them in through its watch on etcd like any other write, and its watchers (kwok-controller,
kube-scheduler) get them as ADDED events. kwok's node stage selects nodes that are not Ready, so it
leaves them alone; kwok still runs pods bound to them (they carry its annotation).

Loading is done when a LIST through kube-apiserver at etcd's revision after the last write is
served (its watch cache has everything) and a paginated LIST counts every loaded node Ready.

A cluster that is being brought up (`load_at_start`) takes its nodes faster: kube-apiserver is stopped,
the nodes are written in transactions of many (nothing watches etcd to see a revision half), and the
restarted kube-apiserver reads them with one LIST instead of 100k watch events; its clients list again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.clusters import kwok, kwokconfig, state
from harness.errors import KqbenchError
from harness.etcd import bulkserving, etcdwriting
from harness.kube import kubeconfig
from harness.kube.kubeconfig import Credentials
from harness.nodes import creating, storing
from harness.nodes.pools import POOL_LABEL, NodePool

Progress = Callable[..., None]
NamesExist = etcdwriting.NamesExist


def pool_selector(pools: Sequence[NodePool]) -> str:
    """A label selector for the nodes of these pools (every pool's nodes carry POOL_LABEL)."""
    return f"{POOL_LABEL} in ({','.join(sorted(pool.name for pool in pools))})"


def refuse_existing(present: Sequence[bytes], total: int, replace: bool) -> None:
    """NamesExist unless nothing of the `total` nodes to load exists yet (`present`: their etcd keys found
    there) or the overwrite is explicit (`replace`)."""
    etcdwriting.refuse_existing([key.decode()[len(storing.ETCD_PREFIX):] for key in present], total, replace,
                                "nodes", "choose other pool names")


def load(info: state.ClusterInfo, pools: Sequence[NodePool], progress: Progress, replace: bool = False,
         timeout: float = 600.0) -> etcdwriting.LoadReport:
    """Write every node of `pools` into the cluster's etcd, Ready, and wait until kube-apiserver serves them.

    Nodes that already exist are refused before anything is written (NamesExist), unless `replace`:
    then they are overwritten with new objects (new uid). An etcd that refuses a write stops the load
    (etcdwriting.WriteRefused, with how many were written)."""
    if not info.etcd_url:
        raise KqbenchError(f"cluster {info.name} has no etcd of its own to load into (backend {info.backend})")
    started = time.monotonic()
    taint = kwokconfig.flags_taint_new_nodes(kwok.apiserver_command(info))
    entries = list(storing.entries(list(pools), storing.rfc3339(time.time()), taint))
    progress("nodes", f"built {len(entries)} node objects; checking etcd for existing names", True)
    present = etcdwriting.existing(info.etcd_url, storing.ETCD_PREFIX.encode(), [k for k, _ in entries])
    refuse_existing(present, len(entries), replace)
    written = etcdwriting.write(info.etcd_url, entries, progress, replace=replace, topic="nodes")
    write_seconds = time.monotonic() - started
    creds = kubeconfig.load(info.kubeconfig)
    served_started = time.monotonic()
    ready = wait_served(creds, written.revision, len(entries), pool_selector(pools), progress, timeout)
    return etcdwriting.LoadReport(requested=len(entries), replaced=len(present), write_seconds=write_seconds,
                      transactions=written.transactions, value_bytes=written.value_bytes,
                      served_seconds=time.monotonic() - served_started, served=ready)


@dataclass(frozen=True, slots=True)
class Built:
    """Node objects built ahead (while the control plane starts), for a kube-apiserver that does or does not taint."""

    entries: list[etcdwriting.Entry]
    taint_not_ready: bool
    seconds: float


def build(pools: Sequence[NodePool], taint_not_ready: bool) -> Built:
    """Every node of `pools` as its etcd key and value, created now."""
    started = time.monotonic()
    entries = list(storing.entries(list(pools), storing.rfc3339(time.time()), taint_not_ready))
    return Built(entries, taint_not_ready, time.monotonic() - started)


def load_at_start(info: state.ClusterInfo, pools: Sequence[NodePool], progress: Progress,
                  timeout: float = 600.0, built: Built | None = None) -> etcdwriting.LoadReport:
    """`load` for a cluster nothing uses yet (`cluster up`): the nodes written while kube-apiserver is
    stopped, UNWATCHED_PUTS_PER_TRANSACTION to a revision, then served by the restarted kube-apiserver.
    Measured on this machine at 100k nodes: a third of the CPU of one node per revision (kube-apiserver
    decodes them in one LIST, kwok-controller lists them once), results/bringup/. `built`: the objects
    built while the control plane started (write_seconds then counts their building too)."""
    if not info.etcd_url:
        raise KqbenchError(f"cluster {info.name} has no etcd of its own to load into (backend {info.backend})")
    started = time.monotonic()
    taint = kwokconfig.flags_taint_new_nodes(kwok.apiserver_command(info))
    if built is None or built.taint_not_ready != taint:
        built = build(pools, taint)
    else:
        started -= built.seconds
    entries = built.entries
    progress("nodes", f"built {len(entries)} node objects; kube-apiserver stopped while they are written", True)
    with kwok.apiserver_stopped(info, progress, timeout=timeout):
        present = etcdwriting.existing(info.etcd_url, storing.ETCD_PREFIX.encode(), [k for k, _ in entries])
        refuse_existing(present, len(entries), replace=False)
        written = etcdwriting.write(info.etcd_url, entries, progress, topic="nodes",
                                    size=etcdwriting.UNWATCHED_PUTS_PER_TRANSACTION)
        written_at = time.monotonic()
    ready = wait_served(kubeconfig.load(info.kubeconfig), written.revision, len(entries), pool_selector(pools),
                        progress, timeout)
    # Served: from the last write, the restart of kube-apiserver included.
    return etcdwriting.LoadReport(requested=len(entries), replaced=0, write_seconds=written_at - started,
                                  transactions=written.transactions, value_bytes=written.value_bytes,
                                  served_seconds=time.monotonic() - written_at, served=ready)


def wait_served(creds: Credentials, revision: int, expected: int, selector: str, progress: Progress,
                timeout: float, interval: float = 0.5) -> int:
    """Wait until kube-apiserver's watch cache has reached etcd `revision` and a paginated LIST counts
    `expected` nodes matching selector Ready; returns how many are. Bounded by timeout."""
    what = bulkserving.Served(f"/api/v1/nodes?limit=1&resourceVersion={revision}&resourceVersionMatch=NotOlderThan",
                              lambda: creating.count_ready(creds, selector)[0], "loaded nodes Ready", "nodes")
    return bulkserving.wait(creds, what, revision, expected, progress, timeout, interval)
