"""`kqbench cluster up|down|status|kubeconfig|list`: local control planes with simulated nodes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from harness.clusters import bringup, spec as specs, state
from harness.nodes import pools as nodepools, topologies
from harness.progress import LineProgress
from scheduler import listening


@click.group("cluster")
def group() -> None:
    """Start, inspect and stop a local KWOK cluster (or adopt an existing one)."""


def _cluster_spec(name, backend, k8s_version, feature_gates, port, heartbeats, lease_seconds,
                  jobs=False, allow_remote=False, bulk=False, schedulable_nodes=False) -> specs.ClusterSpec:
    return specs.ClusterSpec(
        name=name, backend=backend, k8s_version=k8s_version,
        feature_gates=specs.parse_feature_gates(feature_gates), apiserver_port=port,
        heartbeats=specs.Heartbeats(enabled=heartbeats, lease_seconds=lease_seconds, status_seconds=lease_seconds),
        jobs=jobs,
        allow_remote=allow_remote,
        bulk=bulk,
        schedulable_nodes=schedulable_nodes,
    )


BULK_HELP = ("Write the nodes straight into etcd, already Ready, one per revision and many in flight, "
             "instead of POSTing them through kube-apiserver; kwok backend only.")


def _parse_topology(_ctx, _param, value):
    if value is None:
        return None
    try:
        return topologies.parse(value)
    except topologies.TopologyError as error:
        raise click.BadParameter(str(error)) from error


def _node_options(command):
    """The shape of every simulated node (`up` and `add-nodes`)."""
    for option in reversed((
        click.option("--node-cpu", default="32", show_default=True, help="Allocatable CPU per node."),
        click.option("--node-memory", default="256Gi", show_default=True, help="Allocatable memory per node."),
        click.option("--node-gpus", type=int, default=0, show_default=True, help="nvidia.com/gpu per node."),
        click.option("--topology", "topology", default=None, callback=_parse_topology, metavar="RACKSxHOSTS",
                     help="Label the nodes with blocks of RACKS racks of HOSTS hosts (e.g. 10x64, Kueue's TAS "
                          f"suite): {', '.join(topologies.LEVELS)}."),
        click.option("--node-names", type=click.Choice(nodepools.NAME_STYLES), default="indexed", show_default=True,
                     help="indexed: kwok-000042; cloud: as a cloud names its VMs (kwok-<8 hex per 1,000 nodes>-<4 "
                          "characters>), for what a topology assignment costs with real host names."),
    )):
        command = option(command)
    return command


@group.command("up")
@click.option("--name", default="kqbench", show_default=True, help="Cluster name (several can run side by side).")
@click.option("--nodes", type=int, default=10, show_default=True,
              help="Simulated nodes to create (>= 1; 0 with --backend existing: adopt a cluster as it is).")
@click.option("--backend", type=click.Choice(bringup.BACKENDS), default="kwok", show_default=True)
@click.option("--k8s-version", default=None, help="Kubernetes release (default: pinned in harness/versions.toml).")
@click.option("--feature-gates", default="", help="Comma-separated Name=true|false for every component.")
@click.option("--port", type=int, default=0, help=f"kube-apiserver port on {listening.LOOPBACK} (default: a free one).")
@click.option("--heartbeats/--no-heartbeats", default=False, show_default=True,
              help="Node leases and status heartbeats (off: they add QPS that hides what we measure).")
@click.option("--heartbeat-seconds", type=int, default=600, show_default=True, help="Lease/status period when on.")
@click.option("--jobs", is_flag=True,
              help="Run batch Jobs' pods: the job controller and kube-scheduler (binds pods to the nodes) on.")
@_node_options
@click.option("--bulk", is_flag=True, help=BULK_HELP)
@click.option("--kubeconfig", default=None, help="With --backend existing: the cluster's kubeconfig.")
@click.option("--allow-remote", is_flag=True,
              help="With --backend existing: adopt an apiserver that is not on a loopback address.")
@click.option("--record", type=click.Path(dir_okay=False), default=None,
              help="Write the bring-up figures (times, nodes/s, RSS, etcd size) as JSON to this file.")
@click.option("--down-after", is_flag=True, help="Tear the cluster down after reporting (a smoke run).")
def up(name, nodes, backend, k8s_version, feature_gates, port, heartbeats, heartbeat_seconds, jobs,
       node_cpu, node_memory, node_gpus, topology, node_names, bulk, kubeconfig, allow_remote, record, down_after) -> None:
    """Start a cluster, create NODES Ready nodes, and print what runs and its numbers."""
    if nodes < 0 or (nodes == 0 and backend != "existing"):
        raise click.BadParameter(f"must be >= 1 (got {nodes}; 0 only with --backend existing, which adopts a cluster "
                                 "without adding nodes)", param_hint="--nodes")
    cluster = _cluster_spec(name, backend, k8s_version, feature_gates, port, heartbeats, heartbeat_seconds, jobs,
                            allow_remote, bulk, schedulable_nodes=topology is not None)
    # An adopted cluster may be a real one: with --nodes 0 it gets no simulated nodes.
    pools = [nodepools.NodePool(name="kwok", count=nodes, cpu=node_cpu, memory=node_memory, gpus=node_gpus,
                                topology=topology, names=node_names)] if nodes else []
    progress = LineProgress(interval=3.0)
    info, report = bringup.up(cluster, pools, progress, kubeconfig_path=kubeconfig)
    try:
        if record:
            report_json = json.loads(report.to_json())
            report_json["command"] = "kqbench " + " ".join(sys.argv[1:])
            Path(record).parent.mkdir(parents=True, exist_ok=True)
            Path(record).write_text(json.dumps(report_json, indent=2, sort_keys=True) + "\n")
        _print_report(info, report)
    finally:
        if down_after:
            leftovers = bringup.down(name)
            click.echo(f"cluster {name} is down" + (f"; pids still alive: {leftovers}" if leftovers else ""))


def _print_report(info: state.ClusterInfo, report: bringup.BringUpReport) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"cluster {info.name} ({info.backend}) at {info.apiserver_url}")
    table.add_column("what")
    table.add_column("value", justify="right")
    rows = [
        ("versions", ", ".join(f"{k} {v}" for k, v in report.versions.items())),
        ("control plane up (s)", f"{report.control_plane_seconds:.1f}"),
        ("nodes Ready", f"{report.nodes_ready}/{report.nodes_requested}"),
        ("nodes made by", report.node_path or "-"),
        ("node create (s)", f"{report.node_create_seconds:.1f}"),
        ("nodes/s", f"{report.nodes_per_second:.0f}"),
        ("wait Ready (s)", f"{report.node_ready_seconds:.1f}"),
        ("total (s)", f"{report.total_seconds:.1f}"),
        ("etcd DB size (MiB)", f"{(report.etcd_db_size_bytes or 0) / 2**20:.1f}"),
    ]
    for component, proc in report.processes.items():
        rows.append((f"{component} RSS (MiB)", f"{proc.get('rss_bytes', 0) / 2**20:.0f} (pid {proc['pid']})"))
    for row in rows:
        table.add_row(*row)
    console.print(table)
    console.print(f"kubeconfig: {info.kubeconfig}")


@group.command("add-nodes")
@click.option("--name", default="kqbench", show_default=True, help="The running cluster to add nodes to.")
@click.option("--nodes", type=click.IntRange(min=1), required=True, help="How many nodes.")
@click.option("--pool", default="kwok", show_default=True,
              help="Pool name: the nodes are named POOL-000000 ... and labelled kqbench.dev/pool=POOL.")
@_node_options
@click.option("--bulk", is_flag=True, help=BULK_HELP)
@click.option("--replace", is_flag=True,
              help="With --bulk: overwrite nodes of these names that already exist (new objects, new uids). "
                   "Without it, a bulk load that would overwrite any node is refused before writing.")
@click.option("--timeout", type=float, default=1800.0, show_default=True,
              help="Seconds to wait until kube-apiserver serves every node Ready.")
def add_nodes(name, nodes, pool, node_cpu, node_memory, node_gpus, topology, node_names, bulk, replace,
              timeout) -> None:
    """Add NODES Ready nodes to a running cluster, by POSTs or (--bulk) straight into its etcd."""
    info = state.load(name)
    pools = [nodepools.NodePool(name=pool, count=nodes, cpu=node_cpu, memory=node_memory, gpus=node_gpus,
                                topology=topology, names=node_names)]
    added = bringup.add_nodes(info, pools, LineProgress(interval=3.0), bulk=bulk, replace=replace,
                              ready_timeout=timeout)
    replaced = f", {added.replaced} replaced" if added.replaced else ""
    click.echo(f"cluster {name}: {added.ready} of {added.requested} nodes of pool {pool} served Ready "
               f"({added.path}{replaced}): written in {added.write_seconds:.1f}s, served {added.ready_seconds:.1f}s later")


@group.command("down")
@click.option("--name", default="kqbench", show_default=True)
def down(name) -> None:
    """Stop every process the cluster started (also after a crashed `up`) and delete its files."""
    leftovers = bringup.down(name)
    if leftovers:
        raise click.ClickException(f"cluster {name}: processes would not stop: {leftovers}")
    click.echo(f"cluster {name} is down")


@group.command("status")
@click.option("--name", default=None, help="One cluster (default: all known).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(name, as_json) -> None:
    """Show versions, processes (RSS, CPU), node count and etcd size of running clusters."""
    names = [name] if name else state.known_names()
    results = [bringup.status(n) for n in names]
    if as_json:
        click.echo(json.dumps(results, indent=2))
        return
    if not results:
        click.echo("no clusters (start one with `kqbench cluster up`)")
    for result in results:
        click.echo(f"{result['name']} ({result['backend']}) {result['apiserver']} "
                   f"server={result.get('server_version', '?')} nodes={result.get('nodes', '?')} "
                   f"etcd_db={(result.get('etcd_db_size_bytes') or 0) / 2**20:.1f}MiB")
        for component, proc in result["processes"].items():
            state_text = (f"rss={proc['rss_bytes'] / 2**20:.0f}MiB cpu={proc['cpu_seconds']}s" if proc["alive"] else "not running")
            click.echo(f"  {component:<24} pid={proc['pid']:<8} {state_text}")


@group.command("kubeconfig")
@click.option("--name", default="kqbench", show_default=True)
def kubeconfig_cmd(name) -> None:
    """Print the path of the cluster's kubeconfig (use: kubectl --kubeconfig "$(kqbench cluster kubeconfig)")."""
    click.echo(state.load(name).kubeconfig)


@group.command("load-workloads")
@click.option("--name", default="kqbench", show_default=True, help="The running cluster (kwok backend) to load into.")
@click.option("--count", type=click.IntRange(min=1), required=True, help="How many pending Workloads.")
@click.option("--queue", required=True, help="The LocalQueue they name (spec.queueName); it need not exist yet.")
@click.option("--namespace", default="default", show_default=True, help="Their namespace (created if missing).")
@click.option("--prefix", default="bulk", show_default=True,
              help="Names PREFIX-0000000 ...; each is labelled kqbench.io/bulk-load=PREFIX.")
@click.option("--cpu", default="1", show_default=True, help="CPU each Workload's single pod requests.")
@click.option("--priority", type=int, default=0, show_default=True, help="spec.priority.")
@click.option("--replace", is_flag=True,
              help="Overwrite Workloads of these names that already exist (new objects, new uids). "
                   "Without it, a load that would overwrite any is refused before writing.")
@click.option("--scheduler-metrics", default=None, metavar="URL",
              help="Also wait until the reference scheduler at this /metrics URL holds at least COUNT pending.")
@click.option("--timeout", type=float, default=1800.0, show_default=True,
              help="Seconds to wait until kube-apiserver serves them all (and again for the scheduler).")
def load_workloads(name, count, queue, namespace, prefix, cpu, priority, replace, scheduler_metrics, timeout) -> None:
    """Write COUNT pending Workloads straight into the cluster's etcd (many writes in flight) and wait
    until kube-apiserver serves them all: a scale run's queue without COUNT POSTs."""
    from harness.workloads import bulkloading as workload_loading, storing as workload_storing
    from loadtests import settings as load_settings

    batch = workload_storing.Batch(count=count, queue=queue, namespace=namespace, prefix=prefix,
                                   kind=load_settings.WorkloadKind(cpu=cpu, priority=priority))
    for option, problem in workload_storing.problems(batch).items():
        raise click.BadParameter(problem, param_hint=option)
    info = state.load(name)
    progress = LineProgress(interval=3.0)
    loaded = workload_loading.load(info, batch, progress, replace=replace, timeout=timeout)
    replaced = f", {loaded.replaced} replaced" if loaded.replaced else ""
    click.echo(f"cluster {name}: {loaded.served} of {loaded.requested} Workloads served in {namespace} "
               f"(queue {queue}{replaced}): written in {loaded.write_seconds:.1f}s, served {loaded.served_seconds:.1f}s later")
    if scheduler_metrics:
        waited = workload_loading.wait_pending(lambda: workload_loading.scheduler_pending(scheduler_metrics),
                                               count, progress, timeout)
        click.echo(f"the reference scheduler holds them pending {waited:.1f}s after they were served")

