"""The TAS object-size phase's run function: one Workload per pod set size, measured, then deleted.

Per pod set size P, smallest first: one Workload asking
for P pods, polled until admitted or its bound; then its bytes in etcd (the stored value of its key) and as
kube-apiserver serves it (JSON), the hosts its assignment names, its conditions, and kube-apiserver's answers
to writes of workloads/status by code over the wait. When it was not admitted, the same answers are counted
for `watch_seconds` more (one refusal, or a scheduler retrying). Then it is deleted, and the next size waits
until the ClusterQueue holds none of it.
"""

from __future__ import annotations

import json
import time

from harness.drivers import contract
from harness.drivers.tasobjectsize import asking, counting, modelling, phases as tasphases, tabulating
from harness.errors import KqbenchError
from harness.kube import kubeconfig, rest, waiting
from harness.kube.kubeconfig import Credentials
from harness.metrics import catalog, etcdreading, scraping
from harness.nodes import pools
from harness.scenarios import sections
from harness.workloads import storing
from scheduler.api import groups

POLL_SECONDS = 1.0
GONE_SECONDS = 120.0
"""Bound on a deleted Workload leaving its ClusterQueue (800 KB objects take a few seconds)."""


def run(context: contract.PhaseContext) -> None:
    phase: tasphases.ObjectSizePhase = context.phase
    scenario, info = context.scenario, context.cluster
    pool = nodes_of(scenario.cluster, phase.pods[-1])
    cluster_queue = cluster_queue_of(scenario.queues, phase.namespace, phase.local_queue)
    if not info.etcd_url:
        raise KqbenchError(f"{context.phase_name}: cluster {info.name} has no etcd of ours to read sizes from "
                           f"(backend {info.backend}); the kwok backend has")
    creds = kubeconfig.load(info.kubeconfig)
    apiserver = next(t for t in scraping.targets(info) if t.source == catalog.APISERVER)
    setting = tabulating.Setting(implementation=scenario.scheduler.implementation, node_names=pool.names,
                                 nodes=sum(p.count for p in scenario.cluster.node_pools()),
                                 etcd_limit=int(scenario.cluster.etcd_args.get("max-request-bytes",
                                                                              modelling.ETCD_REQUEST_LIMIT)))
    # one measured phase for all pod sets: a sub-phase each would cost a boundary scrape of every source
    # (seconds at 100k nodes), and the phase counts the status writes it needs itself
    for pods in phase.pods:
        context.say(f"{context.phase_name}: one Workload of {pods:,} pods, one per host")
        measured = measure(creds, apiserver, info.etcd_url, phase, pods, cluster_queue, context.say)
        model = modelling.sizes(pods, pool)
        for table, frame in tabulating.frames(context.phase_name, setting, measured, model).items():
            if not frame.empty:
                context.emit(table, frame)
        context.say(f"{context.phase_name}, {pods:,} pods: " + tabulating.line(measured))


def nodes_of(cluster: sections.ClusterSection, largest: int) -> pools.NodePool:
    """The node pool the pods go to (the scenario's first): refused when the largest pod set has no host each."""
    found = cluster.node_pools()
    if not found:
        raise KqbenchError("tas-object-size: the cluster has no nodes (give cluster.pools)")
    total = sum(p.count for p in found)
    if largest > total:
        raise KqbenchError(f"tas-object-size: {largest:,} pods need {largest:,} one-pod hosts; the cluster has {total:,} nodes")
    return found[0]


def cluster_queue_of(queues: sections.QueuesSection, namespace: str, local_queue: str) -> str:
    """The ClusterQueue of the phase's LocalQueue, from the scenario's queues."""
    found = queues.cluster_queue_of(namespace, local_queue)
    if found is None:
        raise KqbenchError(f"tas-object-size: LocalQueue {namespace}/{local_queue} is not in the scenario's "
                           "queues.local_queues")
    return found


def measure(creds: Credentials, apiserver: scraping.Target, etcd_url: str, phase: tasphases.ObjectSizePhase, pods: int,
            cluster_queue: str, say) -> tabulating.Measured:
    name = asking.name_of(pods)
    collection = f"{groups.PATH}/namespaces/{phase.namespace}/workloads"
    before = status_writes(apiserver)
    status, body = rest.request(creds, "POST", collection,
                                asking.workload(pods, phase.namespace, phase.local_queue, phase.cpu, phase.preferred_level))
    if status != 201:
        raise KqbenchError(f"creating Workload {name}: HTTP {status}: {body[:300]!r}")
    started, seen = time.monotonic(), {"object": {}, "json_bytes": None}

    def admitted() -> bool:
        status, body = rest.get(creds, f"{collection}/{name}", timeout=60)
        seen["object"], seen["json_bytes"] = (json.loads(body), len(body)) if status == 200 else ({}, None)
        return bool((seen["object"].get("status") or {}).get("admission"))

    measured = tabulating.Measured(pods)
    try:
        waiting.poll(admitted, phase.admit_seconds, POLL_SECONDS, lambda: f"{name} not admitted")
        measured.seconds_to_admission = time.monotonic() - started
    except waiting.TimedOut:
        say(f"{name}: not admitted within {phase.admit_seconds:.0f}s")
    status_part = seen["object"].get("status") or {}
    measured.hosts = asking.hosts_in(status_part.get("admission") or {})
    measured.conditions = asking.conditions(status_part)
    measured.api_json_bytes = seen["json_bytes"]
    key = storing.key(phase.namespace, name).decode()
    measured.etcd_bytes = dict(etcdreading.read_sizes(etcd_url, key)).get(key)
    measured.writes = counting.grown(status_writes(apiserver), before)
    if measured.seconds_to_admission is None and phase.watch_seconds:
        # what the implementation keeps doing with a Workload it cannot write
        watched_from = status_writes(apiserver)
        time.sleep(phase.watch_seconds)
        measured.watched_seconds = phase.watch_seconds
        measured.writes_watched = counting.grown(status_writes(apiserver), watched_from)
    delete(creds, collection, name, cluster_queue)
    return measured


def status_writes(apiserver: scraping.Target) -> dict[str, float]:
    """kube-apiserver's answers to workloads/status writes so far, by code."""
    return counting.write_codes(scraping.fetch(apiserver, 60.0), "workloads", "status")


def delete(creds: Credentials, collection: str, name: str, cluster_queue: str) -> None:
    """Delete the Workload and wait until it is gone and its ClusterQueue reserves nothing."""
    rest.request(creds, "DELETE", f"{collection}/{name}")

    def gone() -> bool:
        status, _ = rest.get(creds, f"{collection}/{name}", timeout=60)
        queue = rest.get_json(creds, f"{groups.PATH}/clusterqueues/{cluster_queue}", timeout=60)
        return status == 404 and not (queue.get("status") or {}).get("reservingWorkloads", 0)

    waiting.poll(gone, GONE_SECONDS, POLL_SECONDS, lambda: f"{name} still held by ClusterQueue {cluster_queue}",
                 retry_on=(KqbenchError,))
