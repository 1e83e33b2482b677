"""Bring a cluster up with its nodes, describe it, tear it down: what the CLI and the runner call."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import json
import platform
import time
from dataclasses import asdict, dataclass, field

import psutil

from harness.clusters import existing, kind, kwok, kwokconfig, processes, spec as specs, state
from harness.errors import KqbenchError
from harness.kube import calling, kubeconfig, rest
from harness.nodes import bulkloading, creating, pools as nodepools
from harness.toolchain import building, gomodules, layout, versions

BACKENDS = ("kwok", "kind", "existing")


NODE_PATHS = ("posts", "bulk", "bulk-at-start")
"""How nodes are made: POSTs through kube-apiserver (kwok marks them Ready), or written Ready into etcd:
one per revision into a running cluster (bulk), or many per revision while kube-apiserver is stopped
during `cluster up` (bulk-at-start, bulkloading.load_at_start)."""
REPORT_VERSION = 2
"""2: node_path and node_value_bytes added (version 1 files have neither and were all `posts`)."""


@dataclass(frozen=True, slots=True)
class NodesAdded:
    """How one batch of nodes was added and how long until kube-apiserver served them Ready."""

    path: str
    requested: int
    write_seconds: float
    """POSTs: from the first to the last answer; bulk: from building the objects to etcd's last answer."""
    ready_seconds: float
    """From the last write until every node is served Ready."""
    ready: int
    replaced: int = 0
    value_bytes: int = 0
    """Bytes written into etcd (bulk only)."""

    @property
    def nodes_per_second(self) -> float:
        return self.requested / self.write_seconds if self.write_seconds > 0 else 0.0


@dataclass(slots=True)
class BringUpReport:
    """Figures of one bring-up, as committed under results/ (the command is recorded with them)."""

    cluster: str
    backend: str
    versions: dict[str, str]
    nodes_requested: int
    node_path: str = ""
    """One of NODE_PATHS ("" without nodes)."""
    control_plane_seconds: float = 0.0
    node_create_seconds: float = 0.0
    """Writing the nodes: POSTs, or etcd transactions with the bulk path (NodesAdded.write_seconds)."""
    nodes_per_second: float = 0.0
    node_ready_seconds: float = 0.0
    node_value_bytes: int = 0
    nodes_ready: int = 0
    total_seconds: float = 0.0
    processes: dict[str, dict] = field(default_factory=dict)
    etcd_db_size_bytes: int | None = None
    machine: dict = field(default_factory=dict)
    started_at: str = ""
    version: int = REPORT_VERSION

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)


def machine() -> dict:
    return {
        "cpus": psutil.cpu_count(),
        "memory_bytes": psutil.virtual_memory().total,
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def binaries_for(info: state.ClusterInfo) -> layout.Binaries | None:
    """The binaries a kwok cluster was started with, if they are still in the cache."""
    if not info.versions.get("kwok"):
        return None
    binaries = layout.Binaries.in_cache(info.versions["kubernetes"], info.versions["etcd"], info.versions["kwok"])
    return None if binaries.missing() else binaries


def process_table(info: state.ClusterInfo) -> dict[str, dict]:
    table = {}
    for component, pid in info.pids.items():
        described = processes.describe(pid)
        table[component] = (
            {"pid": pid, "alive": False} if described is None
            else {"pid": pid, "alive": True, "rss_bytes": described.rss_bytes, "cpu_seconds": round(described.cpu_seconds, 2)}
        )
    return table


def etcd_db_size(info: state.ClusterInfo) -> int | None:
    """etcd's on-disk database size from its /metrics (the real file size, not an estimate)."""
    if not info.etcd_url:
        return None

    from prometheus_client.parser import text_string_to_metric_families

    try:
        status, body = calling.call(info.etcd_url + "/metrics", timeout=10)
    except OSError:
        return None
    if status != 200:
        return None
    for family in text_string_to_metric_families(body.decode()):
        if family.name == "etcd_mvcc_db_total_size_in_bytes":
            return int(family.samples[0].value)
    return None


def up(cluster: specs.ClusterSpec, pools: list[nodepools.NodePool], progress, kubeconfig_path: str | None = None,
       ready_timeout: float = 1800.0) -> tuple[state.ClusterInfo, BringUpReport]:
    """Start the control plane (or adopt an existing one), create the nodes, wait until they are Ready."""
    if cluster.backend not in BACKENDS:
        raise specs.SpecError(f"backend {cluster.backend!r} is unknown: use one of {', '.join(BACKENDS)}")
    nodepools.check_distinct(pools)
    started = time.monotonic()
    report = BringUpReport(cluster=cluster.name, backend=cluster.backend, versions={},
                           nodes_requested=nodepools.total_nodes(pools), machine=machine(),
                           started_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))
    ahead = None
    if cluster.backend == "kwok":
        binaries = building.ensure_binaries(cluster.k8s_version, progress)
        if cluster.bulk and report.nodes_requested:
            # The node objects are built while kwokctl starts the control plane (about 1 s at 100k here).
            builder = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="node-objects")
            ahead = builder.submit(bulkloading.build, pools, kwokconfig.starts_tainting_new_nodes(cluster))
            builder.shutdown(wait=False)
        info = kwok.up(cluster, binaries, progress)
    elif cluster.backend == "existing":
        if not kubeconfig_path:
            raise specs.SpecError("the existing backend needs --kubeconfig PATH")
        info = existing.up(cluster.name, kubeconfig_path, allow_remote=cluster.allow_remote)
    else:
        pins = versions.load_pins()
        k8s = versions.normalise_k8s_version(cluster.k8s_version or pins.kubernetes_default)
        kwok_source = building.module_dir(gomodules.KWOK_MODULE, pins.kwok)
        kind_plan = kind.plan(cluster, k8s, pins.kwok, kwok_source, state.state_root() / "kind")
        kind.run(kind_plan)
        info = existing.up(cluster.name, kind_plan.kubeconfig)
        info.backend = kind.NAME
        state.save(info)
    report.versions = dict(info.versions)
    report.control_plane_seconds = round(time.monotonic() - started, 2)
    try:
        if report.nodes_requested:
            if cluster.bulk and cluster.backend == "kwok":
                loaded = bulkloading.load_at_start(info, pools, progress, timeout=ready_timeout,
                                                   built=ahead.result() if ahead is not None else None)
                added = NodesAdded("bulk-at-start", loaded.requested, loaded.write_seconds, loaded.served_seconds,
                                   loaded.served, value_bytes=loaded.value_bytes)
            else:
                added = add_nodes(info, pools, progress, bulk=cluster.bulk, ready_timeout=ready_timeout)
            report.node_path = added.path
            report.node_create_seconds = round(added.write_seconds, 2)
            report.nodes_per_second = round(added.nodes_per_second, 1)
            report.node_ready_seconds = round(added.ready_seconds, 2)
            report.nodes_ready = added.ready
            report.node_value_bytes = added.value_bytes
        report.total_seconds = round(time.monotonic() - started, 2)
        report.processes = process_table(info)
        report.etcd_db_size_bytes = etcd_db_size(info)
    except BaseException:
        down(cluster.name)
        raise
    return info, report


def add_nodes(info: state.ClusterInfo, pools: list[nodepools.NodePool], progress, bulk: bool = False,
              replace: bool = False, ready_timeout: float = 1800.0) -> NodesAdded:
    """Add the nodes of `pools` to a running cluster, by POSTs or (bulk) straight into its etcd, and wait
    until kube-apiserver serves them all Ready. Existing names: POSTs count them as created; bulk refuses
    them before writing anything unless `replace`."""
    nodepools.check_distinct(pools)
    requested = nodepools.total_nodes(pools)
    if bulk:
        loaded = bulkloading.load(info, pools, progress, replace=replace, timeout=ready_timeout)
        return NodesAdded("bulk", requested, loaded.write_seconds, loaded.served_seconds, loaded.served,
                          loaded.replaced, loaded.value_bytes)
    if replace:
        raise specs.SpecError("--replace goes with --bulk: a POST never overwrites a node (an existing one is kept)")
    creds = kubeconfig.load(info.kubeconfig)
    created = creating.create_nodes(creds, pools, progress)
    ready = creating.wait_ready(creds, requested, progress, timeout=ready_timeout,
                                selector=bulkloading.pool_selector(pools))
    return NodesAdded("posts", requested, created.seconds, ready.seconds, ready.ready)


def down(name: str) -> list[int]:
    """Stop everything the named cluster started; safe to call twice and after a crashed `up`."""
    try:
        info = state.load(name)
    except KqbenchError:
        info = None
    if info is not None and info.backend == "existing":
        return existing.down(name)
    if info is not None and info.backend == "kind":
        kind.run(kind.KindPlan(files={}, commands=kind.teardown_commands(name), kubeconfig=info.kubeconfig))
        state.forget(name)
        return []
    binaries = binaries_for(info) if info else None
    if info is None and not kwok.cluster_dir(name).exists():
        raise KqbenchError(f"no cluster named {name!r} is known (see `kqbench cluster status`)")
    return kwok.down(name, binaries)


def status(name: str) -> dict:
    """What is running for a cluster and its numbers: versions, processes, nodes, etcd size."""
    info = state.load(name)
    result = {"name": info.name, "backend": info.backend, "apiserver": info.apiserver_url,
              "kubeconfig": info.kubeconfig, "versions": info.versions, "feature_gates": info.feature_gates}
    try:
        creds = kubeconfig.load(info.kubeconfig)
        result["server_version"] = rest.get_json(creds, "/version").get("gitVersion")
        nodes = rest.get_json(creds, "/api/v1/nodes?limit=1")
        listed = len(nodes.get("items", []))
        result["nodes"] = listed + int(nodes.get("metadata", {}).get("remainingItemCount") or 0)
        result["reachable"] = True
    except (KqbenchError, OSError) as error:
        result["reachable"] = False
        result["error"] = str(error)
    result["processes"] = process_table(info)
    result["etcd_db_size_bytes"] = etcd_db_size(info)
    return result
