"""Benchmark: how big a topology assignment gets in etcd, and what each implementation does past the limit.

The measured half of `tas_object_size.py`. For each implementation (`--implementation reference,kueue`,
one fresh cluster each, one after the other): N one-CPU KWOK nodes loaded straight into etcd, in blocks of
racks of hosts, named as `--node-names` says (indexed `kwok-000042`, or `cloud`: GKE-style, where more of
each name differs from host to host); one Topology (block, rack, hostname), its TAS flavor and one
ClusterQueue holding every node's CPU. Then for each pod set size P, smallest first: one Workload whose
single pod set asks for P one-CPU pods preferring one block, so each pod takes a host and the assignment
lists P hosts. Per size it records

- whether the Workload was admitted within the bound, and after how long;
- its bytes in etcd (the stored value of its key) and as kube-apiserver serves it (JSON), and the hosts
  in its assignment;
- when it was not admitted: its conditions as the API shows them (reason, message), kube-apiserver's
  answers to writes of workloads/status by code, and the scheduler's own write attempts over the bound
  (one refusal, or a retry loop);

then deletes it and waits until the ClusterQueue holds none of it. One JSON per implementation and
`summary.json` go to --out (default results/tas/object-size), each written as soon as it is known.

    .venv/bin/python benchmarks/bench_tas_object_size.py --nodes 100000 --pods 1000,10000,50000,90000,100000 \
        --node-names cloud --implementation reference,kueue
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import benchteardown
import scheduler_cluster_figures as figs

from harness.clusters import bringup, spec as specs, state
from harness.implementations import registry as implementations
from harness.implementations.kueue import starting as kueue_starting
from harness.kube import apiservice, kubeconfig, rest, waiting
from harness.metrics import etcdreading
from harness.nodes import pools, topologies
from harness.progress import LineProgress
from harness.results import runs
from harness.scenarios import models, queueobjects, sections
from scheduler.api import groups
from scheduler.publishing import strategies

BASE = groups.PATH
NAMESPACE = "kqbench-tas"
POOL = "kwok"
"""The node pool's name (its nodes' pool label, which the TAS flavor selects)."""
WORKLOADS = f"{BASE}/namespaces/{NAMESPACE}/workloads"
ETCD_KEY = f"/registry/{groups.GROUP}/workloads/{NAMESPACE}/"
LOG_DIR = state.state_root() / "logs"
POLL_SECONDS = 1.0
ETCD_DEFAULT_REQUEST_BYTES = int(1.5 * 2**20)


def queues(nodes: int) -> sections.QueuesSection:
    return sections.QueuesSection.model_validate({
        "topologies": [{"name": "hosts"}],
        # Kueue's CRD wants the node labels of a TAS flavor (its CEL rule reads spec.nodeLabels).
        "flavors": [{"name": "tas", "topology_name": "hosts", "node_labels": {pools.POOL_LABEL: POOL}}],
        "cluster_queues": [{"name": "cq", "resource_groups": [{"covered_resources": ["cpu"], "flavors": [
            {"flavor": "tas", "resources": [{"name": "cpu", "nominal": nodes}]}]}]}],
        "local_queues": [{"name": "lq", "cluster_queue": "cq", "namespace": NAMESPACE}]})


def workload(pods: int) -> dict:
    return {"apiVersion": groups.API_VERSION, "kind": "Workload",
            "metadata": {"name": f"pods-{pods}", "namespace": NAMESPACE},
            "spec": {"queueName": "lq", "priority": 0, "podSets": [{
                "name": "main", "count": pods, "topologyRequest": {"preferred": topologies.BLOCK_LABEL},
                "template": {"spec": {"containers": [{"name": "c", "image": "x",
                                                      "resources": {"requests": {"cpu": "1"}}}]}}}]}}


def hosts_in(admission: dict) -> int:
    """Hosts the assignment names (v1beta2: the compact slices' roots, or their count)."""
    total = 0
    for assignment in admission.get("podSetAssignments") or ():
        for slice_ in (assignment.get("topologyAssignment") or {}).get("slices") or ():
            total += int(slice_.get("domainCount") or 0)
    return total


class Bench:
    """One implementation on one fresh cluster."""

    def __init__(self, implementation: str, args: argparse.Namespace, out: Path, say: LineProgress) -> None:
        self.implementation, self.args, self.out, self.say = implementation, args, out, say
        self.result: dict = {"implementation": implementation, "nodes": args.nodes, "node_names": args.node_names,
                             "etcd_max_request_bytes": args.etcd_max_request_bytes or ETCD_DEFAULT_REQUEST_BYTES,
                             "kueue_version": args.kueue_version if implementation == "kueue" else None,
                             "pod_sets": []}
        self.info = self.creds = self.handle = None

    def setup(self) -> None:
        self.cluster_name = f"tas-size-{self.implementation[:3]}"
        pool = pools.NodePool(name=POOL, count=self.args.nodes, cpu="1", pods=110, names=self.args.node_names,
                              topology=topologies.NodeTopology(self.args.racks_per_block, self.args.hosts_per_rack))
        started = time.monotonic()
        limit = self.args.etcd_max_request_bytes
        cluster = specs.ClusterSpec(name=self.cluster_name, bulk=True, schedulable_nodes=True,
                                    etcd_args=(("max-request-bytes", str(limit)),) if limit else ())
        self.info, _ = bringup.up(cluster, [pool], self.say)
        self.result["cluster_up_seconds"] = round(time.monotonic() - started, 1)
        self.result["versions"] = self.info.versions
        self.creds = kubeconfig.load(self.info.kubeconfig)
        if self.implementation == "kueue":
            kueue_starting.install_api(self.info)
        else:
            apiservice.install_crds(self.creds)
        queueobjects.install(self.info, queues(self.args.nodes))
        section = models.SchedulerSection(implementation=self.implementation, strategy=strategies.AGGREGATED_INDEXED,
                                          no_client_limit=True, kueue_version=self.args.kueue_version)
        started = time.monotonic()
        self.handle = implementations.get(self.implementation).start(self.info, section, LOG_DIR)
        apiservice.wait_available(self.creds, timeout=300)
        self.result["scheduler_start_seconds"] = round(time.monotonic() - started, 1)

    def status_writes(self) -> dict[str, float]:
        """kube-apiserver's answers to workloads/status writes so far, by code."""
        status, body = rest.get(self.creds, "/metrics", timeout=60)
        if status != 200:
            return {}
        return figs.request_codes(body.decode(), "workloads", "status")

    def stored_bytes(self, name: str) -> int | None:
        sizes = dict(etcdreading.read_sizes(self.info.etcd_url, ETCD_KEY + name)) if self.info.etcd_url else {}
        return sizes.get(ETCD_KEY + name)

    def measure(self, pods: int) -> dict:
        name = f"pods-{pods}"
        codes_before = self.status_writes()
        status, body = rest.request(self.creds, "POST", WORKLOADS, workload(pods))
        if status != 201:
            raise RuntimeError(f"creating {name}: HTTP {status}: {body[:300]!r}")
        started, seen = time.monotonic(), {}

        def admitted() -> bool:
            status, body = rest.get(self.creds, f"{WORKLOADS}/{name}", timeout=60)
            seen["object"] = json.loads(body) if status == 200 else {}
            seen["json_bytes"] = len(body) if status == 200 else None
            done = bool((seen["object"].get("status") or {}).get("admission"))
            self.say("workload", f"{name}: {'admitted' if done else 'waiting'} after {time.monotonic() - started:.0f}s")
            return done

        try:
            waiting.poll(admitted, self.args.admit_seconds, POLL_SECONDS, lambda: f"{name} not admitted")
            seconds: float | None = round(time.monotonic() - started, 1)
        except waiting.TimedOut:
            seconds = None
        status = seen.get("object", {}).get("status") or {}
        row = {"pods": pods, "admitted": seconds is not None, "seconds_to_admission": seconds,
               "hosts_in_assignment": hosts_in(status.get("admission") or {}),
               "etcd_bytes": self.stored_bytes(name), "api_json_bytes": seen.get("json_bytes"),
               "conditions": [{k: c.get(k) for k in ("type", "status", "reason", "message")}
                              for c in status.get("conditions") or ()],
               "status_writes_by_code": figs.delta(self.status_writes(), codes_before)}
        if seconds is None:  # what the implementation keeps doing with a Workload it cannot write
            row["watched_seconds"] = self.args.watch_seconds
            row["status_writes_by_code_watched"] = self.writes_over(self.args.watch_seconds)
        self.delete(name)
        return row

    def writes_over(self, seconds: float) -> dict[str, float]:
        before = self.status_writes()
        time.sleep(seconds)
        return figs.delta(self.status_writes(), before)

    def delete(self, name: str) -> None:
        rest.request(self.creds, "DELETE", f"{WORKLOADS}/{name}")

        def gone() -> bool:
            status, _ = rest.get(self.creds, f"{WORKLOADS}/{name}", timeout=60)
            _, body = rest.get(self.creds, f"{BASE}/clusterqueues/cq", timeout=60)
            held = json.loads(body).get("status", {}).get("reservingWorkloads", 0) if body else 0
            return status == 404 and not held

        waiting.poll(gone, 120, POLL_SECONDS, lambda: f"{name} still held by the ClusterQueue")

    def run(self) -> dict:
        with benchteardown.kept(self):
            self.setup()
            self.save()
            for pods in self.args.pods:
                self.say("pod set", f"{self.implementation}: {pods:,} pods", True)
                self.result["pod_sets"].append(self.measure(pods))
                self.save()
        return self.result

    def save(self) -> None:
        name = self.implementation + (f"-{self.args.kueue_version}" if self.implementation == "kueue" else "")
        (self.out / f"{name}.json").write_text(json.dumps(self.result, indent=2) + "\n")


def summary(results: list[dict]) -> dict:
    """Per implementation: the largest pod set admitted and what happened to the first one that was not."""
    out = {}
    for result in results:
        rows = result.get("pod_sets", [])
        admitted = [row for row in rows if row["admitted"]]
        refused = next((row for row in rows if not row["admitted"]), None)
        out[result["implementation"]] = {
            "largest_admitted_pods": max((row["pods"] for row in admitted), default=None),
            "largest_stored_bytes": max((row["etcd_bytes"] or 0 for row in admitted), default=None),
            "first_not_admitted": refused and {k: refused[k] for k in (
                "pods", "conditions", "status_writes_by_code", "watched_seconds", "status_writes_by_code_watched")
                if k in refused}}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--pods", default="1000,10000,50000,90000,100000",
                        help="Pod set sizes, comma-separated, each at most --nodes (one pod per one-CPU host).")
    parser.add_argument("--node-names", choices=pools.NAME_STYLES, default="cloud")
    parser.add_argument("--racks-per-block", type=int, default=10)
    parser.add_argument("--hosts-per-rack", type=int, default=100)
    parser.add_argument("--implementation", default="reference,kueue")
    parser.add_argument("--kueue-version", default=None, help="Kueue release (default: the pinned one).")
    parser.add_argument("--etcd-max-request-bytes", type=int, default=None,
                        help="etcd's request limit (default: etcd's own, 1.5 MiB); smaller meets it at a smaller scale.")
    parser.add_argument("--admit-seconds", type=float, default=180.0, help="Bound on each Workload's admission.")
    parser.add_argument("--watch-seconds", type=float, default=30.0,
                        help="After a Workload's bound: how long to count the scheduler's further status writes.")
    parser.add_argument("--out", type=Path, default=Path("results/tas/object-size"))
    args = parser.parse_args()
    args.pods = sorted(int(p) for p in args.pods.split(","))
    if args.pods[-1] > args.nodes:
        parser.error(f"--pods: {args.pods[-1]:,} pods need {args.pods[-1]:,} one-CPU hosts; --nodes is {args.nodes:,}")
    args.out.mkdir(parents=True, exist_ok=True)
    say = LineProgress(interval=10.0)
    results = []
    for implementation in args.implementation.split(","):
        try:
            results.append(Bench(implementation, args, args.out, say).run())
        finally:
            (args.out / "summary.json").write_text(json.dumps({
                "git_sha": runs.git_sha(), "command": "benchmarks/bench_tas_object_size.py " + " ".join(
                    f"--{k.replace('_', '-')}={','.join(map(str, v)) if isinstance(v, list) else v}"
                    for k, v in vars(args).items() if v is not None),
                "summary": summary(results)}, indent=2) + "\n")


if __name__ == "__main__":
    main()
