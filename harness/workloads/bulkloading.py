"""Loading pending Workloads straight into etcd, then waiting until kube-apiserver serves them all and
the reference scheduler holds them pending.

POSTing N Workloads costs N admission chains, N etcd writes one by one and N watch events built from
the requests. Here they are written as kube-apiserver would have stored them (storing), straight into
etcd, many in flight but one Workload per revision (etcdwriting.PUTS_PER_TRANSACTION says why), while
kube-apiserver runs; it takes them in through its watch on etcd, and its watchers (the scheduler
under test) get them as ADDED events like any create.

Loading is done when a LIST through kube-apiserver at etcd's revision after the last write is served
(its watch cache has everything) and a paginated LIST counts every loaded Workload.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Callable, Sequence

from harness.clusters import kwok, state
from harness.errors import KqbenchError
from harness.etcd import bulkserving, etcdwriting
from harness.kube import calling, kubeconfig, rest, waiting
from harness.kube.kubeconfig import Credentials
from harness.metrics import catalog, samples
from harness.workloads import storing
from loadtests import workloads

Progress = Callable[..., None]
PAGE = 5000
"""Items per page of the counting LIST (metadata only: about 0.4 KB each)."""
METADATA_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"


NamesExist = etcdwriting.NamesExist


def refuse_existing(present: Sequence[bytes], total: int, replace: bool) -> None:
    """NamesExist unless none of the `total` Workloads to load exists yet (`present`: their etcd keys found
    there) or the overwrite is explicit (`replace`)."""
    etcdwriting.refuse_existing([storing.name_of(key) for key in present], total, replace, "Workloads",
                                "choose another --prefix")


def ensure_namespace(creds: Credentials, namespace: str) -> None:
    """Create the namespace if it is missing (a POST would be refused in a missing one; etcd would not)."""
    rest.apply(creds, f"/api/v1/namespaces/{namespace}",
               {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})


def load(info: state.ClusterInfo, batch: storing.Batch, progress: Progress, replace: bool = False,
         timeout: float = 600.0, clock: Callable[[], float] = time.time) -> etcdwriting.LoadReport:
    """Write every Workload of `batch` into the cluster's etcd, pending, and wait until kube-apiserver serves them.

    Workloads that already exist are refused before anything is written (NamesExist), unless `replace`:
    then they are overwritten with new objects (new uid). An etcd that refuses a write stops the load
    (etcdwriting.WriteRefused, with how many were written)."""
    if not info.etcd_url:
        raise KqbenchError(f"cluster {info.name} has no etcd of its own to load into (backend {info.backend})")
    creds = kubeconfig.load(info.kubeconfig)
    ensure_namespace(creds, batch.namespace)
    started = time.monotonic()
    entries = list(storing.entries(batch, storing.rfc3339(clock())))
    progress("workloads", f"built {len(entries)} Workload objects; checking etcd for existing names", True)
    present = etcdwriting.existing(info.etcd_url, storing.namespace_prefix(batch.namespace), [k for k, _ in entries])
    refuse_existing(present, len(entries), replace)
    written = etcdwriting.write(info.etcd_url, entries, progress, replace=replace, topic="workloads")
    write_seconds = time.monotonic() - started
    served_started = time.monotonic()
    served = wait_served(creds, written.revision, len(entries), batch.namespace, batch.selector(), progress, timeout)
    return etcdwriting.LoadReport(requested=len(entries), replaced=len(present), write_seconds=write_seconds,
                      transactions=written.transactions, value_bytes=written.value_bytes,
                      served_seconds=time.monotonic() - served_started, served=served)


def load_at_start(info: state.ClusterInfo, batches: Sequence[storing.Batch], progress: Progress,
                  timeout: float = 600.0, clock: Callable[[], float] = time.time) -> etcdwriting.LoadReport:
    """`load` for a cluster whose Workloads nothing watches yet (no scheduler started): written while
    kube-apiserver is stopped, UNWATCHED_PUTS_PER_TRANSACTION to a revision (no watch can end inside one),
    then served by the restarted kube-apiserver, which reads them in one LIST. Names that exist are refused."""
    if not info.etcd_url:
        raise KqbenchError(f"cluster {info.name} has no etcd of its own to load into (backend {info.backend})")
    creds = kubeconfig.load(info.kubeconfig)
    for namespace in sorted({b.namespace for b in batches}):
        ensure_namespace(creds, namespace)
    started = time.monotonic()
    created = storing.rfc3339(clock())
    entries = [entry for batch in batches for entry in storing.entries(batch, created)]
    for namespace in sorted({b.namespace for b in batches}):  # refused before kube-apiserver is touched
        mine = [k for k, _ in entries if k.startswith(storing.namespace_prefix(namespace))]
        refuse_existing(etcdwriting.existing(info.etcd_url, storing.namespace_prefix(namespace), mine),
                        len(entries), replace=False)
    progress("workloads", f"built {len(entries)} Workload objects; kube-apiserver stopped while they are written", True)
    with kwok.apiserver_stopped(info, progress, timeout=timeout):
        written = etcdwriting.write(info.etcd_url, entries, progress, topic="workloads",
                                    size=etcdwriting.UNWATCHED_PUTS_PER_TRANSACTION)
        written_at = time.monotonic()
    served = sum(wait_served(creds, written.revision, b.count, b.namespace, b.selector(), progress, timeout)
                 for b in batches)
    return etcdwriting.LoadReport(requested=len(entries), replaced=0, write_seconds=written_at - started,
                                  transactions=written.transactions, value_bytes=written.value_bytes,
                                  served_seconds=time.monotonic() - written_at, served=served)


def list_path(namespace: str, selector: str, limit: int, token: str = "", revision: int | None = None) -> str:
    """A LIST of the namespace's Workloads matching selector: one page, or at etcd `revision` or newer."""
    params = {"labelSelector": selector, "limit": str(limit)}
    if token:
        params["continue"] = token
    if revision is not None:
        params |= {"resourceVersion": str(revision), "resourceVersionMatch": "NotOlderThan"}
    return f"{workloads.collection_path(namespace)}?{urllib.parse.urlencode(params)}"


def count(creds: Credentials, namespace: str, selector: str, page: int = PAGE) -> int:
    """Workloads of the namespace matching selector, from one paginated metadata-only LIST."""
    total, token = 0, ""
    while True:
        status, body = rest.get(creds, list_path(namespace, selector, page, token), timeout=60.0,
                                accept=METADATA_ACCEPT)
        if not 200 <= status < 300:
            raise KqbenchError(f"listing Workloads in {namespace} failed: HTTP {status} {body[:200]!r}")
        listed = json.loads(body)
        total += len(listed.get("items") or ())
        token = listed["metadata"].get("continue") or ""
        if not token:
            return total


def wait_served(creds: Credentials, revision: int, expected: int, namespace: str, selector: str,
                progress: Progress, timeout: float, interval: float = 0.5) -> int:
    """Wait until kube-apiserver's watch cache has reached etcd `revision` and a paginated LIST counts
    `expected` Workloads matching selector; returns how many it counts. Bounded by timeout."""
    what = bulkserving.Served(list_path(namespace, selector, 1, revision=revision),
                              lambda: count(creds, namespace, selector), "loaded Workloads", "workloads")
    return bulkserving.wait(creds, what, revision, expected, progress, timeout, interval)


def scheduler_pending(metrics_url: str, cluster_queue: str | None = None) -> float:
    """Pending Workloads the reference scheduler holds (its gauge, parked included), in one ClusterQueue or all."""
    with calling.opened(metrics_url, timeout=10.0) as response:  # an error status raises OSError: wait_pending retries
        text = response.read().decode()
    labels = {"cluster_queue": cluster_queue} if cluster_queue else {}
    return samples.metric_sum(text, catalog.PENDING[catalog.SCHEDULER], **labels)


def wait_pending(read: Callable[[], float], expected: int, progress: Progress, timeout: float,
                 interval: float = 0.5, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> float:
    """Wait until read() (a scheduler's pending count, e.g. scheduler_pending) is at least `expected`;
    returns the seconds waited. Bounded by timeout."""
    started = clock()
    last = [0.0]

    def check() -> bool:
        last[0] = read()
        progress("workloads", f"the scheduler holds {last[0]:.0f}/{expected} pending", last[0] >= expected)
        return last[0] >= expected

    waiting.poll(check, timeout=timeout, interval=interval, retry_on=(OSError,), clock=clock, sleep=sleep,
                 failure=lambda: f"the scheduler holds {last[0]:.0f} of {expected} Workloads pending after "
                                 f"{timeout:.0f}s (its log says why)")
    return clock() - started
