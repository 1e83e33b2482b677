"""Fill the held queue: N pending one-CPU Workloads over the LocalQueues, straight into etcd or POSTed,
and what each Workload costs etcd (the I/O edge; the batches are pure)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import orjson

from harness.clusters import state
from harness.errors import KqbenchError
from harness.kube import kubeconfig, posting
from harness.metrics import etcdreading
from harness.workloads import bulkloading, storing
from loadtests import settings as load_settings
from scheduler.api import groups

PRIORITIES = 7
"""LocalQueue k's Workloads have priority k mod 7: the ClusterQueue's order is not the order of arrival."""
POST_CONCURRENCY = 64
PREFIX = "held"


def batches(workloads: int, namespace: str, queues: Sequence[str]) -> list[storing.Batch]:
    """`workloads` spread evenly over the LocalQueues (the first ones take the remainder), one CPU each."""
    if not queues:
        raise KqbenchError("held-queue: the scenario has no LocalQueue to fill (queues.local_queues)")
    share, extra = divmod(workloads, len(queues))
    out = []
    for k, queue in enumerate(queues):
        count = share + (1 if k < extra else 0)
        if count:
            out.append(storing.Batch(count=count, queue=queue, namespace=namespace, prefix=f"{PREFIX}-{queue}",
                                     kind=load_settings.WorkloadKind(priority=k % PRIORITIES, cpu="1", memory="0")))
    return out


def collection(namespace: str) -> str:
    """The Workloads' collection path in `namespace`."""
    return f"{groups.PATH}/namespaces/{namespace}/workloads"


def fill(cluster: state.ClusterInfo, loads: Sequence[storing.Batch], create: str, timeout: float,
         progress: Callable[..., None]) -> float:
    """Create every Workload of the batches (`bulk`: into etcd, until kube-apiserver serves them; `posts`:
    concurrent POSTs); returns the seconds it took."""
    started = time.monotonic()
    deadline = started + timeout
    if create == "bulk":
        for batch in loads:
            bulkloading.load(cluster, batch, progress, timeout=max(1.0, deadline - time.monotonic()))
        return time.monotonic() - started
    creds = kubeconfig.load(cluster.kubeconfig)
    for namespace in sorted({batch.namespace for batch in loads}):
        bulkloading.ensure_namespace(creds, namespace)
    # interleaved, so that every LocalQueue grows at once
    longest = max((batch.count for batch in loads), default=0)
    jobs = [(collection(batch.namespace), lambda batch=batch, i=i: orjson.dumps(batch.manifest(i)))
            for i in range(longest) for batch in loads if i < batch.count]
    posting.post_all(creds, jobs, POST_CONCURRENCY, timeout,
                     progress=lambda done, total: progress("workloads", f"created {done}/{total}", done == total))
    return time.monotonic() - started


def etcd_bytes_per_workload(cluster: state.ClusterInfo, namespace: str) -> float | None:
    """Mean stored size of the namespace's Workloads, read from etcd itself (None without an etcd of our own)."""
    if not cluster.etcd_url:
        return None
    prefix = storing.namespace_prefix(namespace).decode()
    sizes = [size for _, size in etcdreading.read_sizes(cluster.etcd_url, prefix)]
    return round(sum(sizes) / len(sizes), 1) if sizes else None
