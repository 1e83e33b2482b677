"""Benchmark: N pending Workloads by POSTs and by bulk loading into etcd, on one cluster in one run.

One kwok cluster (one node: the Workloads stay pending, nothing runs) with the reference scheduler
started as the harness starts it, one LocalQueue per path whose ClusterQueue has no quota. Phase
`posts`: COUNT Workloads POSTed through kube-apiserver (harness.kube.posting, 48 in flight) into their own
namespace. Phase `bulk`: COUNT Workloads written into etcd (harness.workloads.bulkloading, what
`kqbench cluster load-workloads` does) into another. Per phase, from its start: until the objects
were written (the last POST answered / etcd's last transaction), until kube-apiserver served them all
(a paginated LIST counts them), until the reference scheduler held them all pending (its gauge), and
the CPU each process spent. Writes one JSON per phase and `summary.json` (git sha, the exact
command, machine) into --out as soon as each is known.

    .venv/bin/python benchmarks/bench_workload_loading.py --out results/bringup/workloads-bulk-and-posts
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
from pathlib import Path

import orjson
import psutil

from harness.clusters import bringup, spec as specs, state
from harness.implementations.reference import process as schedulerproc
from harness.kube import kubeconfig, posting, rest
from harness.nodes import pools
from harness.progress import LineProgress
from harness.results import runs
from harness.scenarios import schedulers
from harness.workloads import bulkloading, storing
from loadtests import workloads

SUMMARY_VERSION = 1
GROUP_PATH = f"/apis/{workloads.API_VERSION}"


def queue_objects(namespace: str) -> list[tuple[str, dict]]:
    """A ClusterQueue without quota and its LocalQueue `lq` in namespace: whatever arrives stays pending."""
    quotas = [{"name": "cpu", "nominalQuota": "0"}, {"name": "memory", "nominalQuota": "0"}]
    cq = {"apiVersion": workloads.API_VERSION, "kind": "ClusterQueue", "metadata": {"name": f"cq-{namespace}"},
          "spec": {"namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO",
                   "resourceGroups": [{"coveredResources": ["cpu", "memory"],
                                       "flavors": [{"name": "default", "resources": quotas}]}]}}
    lq = {"apiVersion": workloads.API_VERSION, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": namespace},
          "spec": {"clusterQueue": f"cq-{namespace}"}}
    return [(f"{GROUP_PATH}/clusterqueues/{cq['metadata']['name']}", cq),
            (f"{GROUP_PATH}/namespaces/{namespace}/localqueues/lq", lq)]


def cpu_seconds(pids: dict[str, int]) -> dict[str, float]:
    out = {}
    for component, pid in pids.items():
        try:
            times = psutil.Process(pid).cpu_times()
            out[component] = times.user + times.system
        except psutil.Error:
            continue
    return out


def phase(path: str, count: int, info: state.ClusterInfo, scheduler: schedulerproc.SchedulerProcess,
          progress: LineProgress, timeout: float) -> dict:
    creds = kubeconfig.load(info.kubeconfig)
    namespace = f"{path}-ns"
    bulkloading.ensure_namespace(creds, namespace)
    for object_path, obj in queue_objects(namespace):
        rest.apply(creds, object_path, obj)
    batch = storing.Batch(count=count, queue="lq", namespace=namespace, prefix=path)
    pids = {**info.pids, "scheduler": scheduler.pid(), "kqbench": psutil.Process().pid}
    cpu_before = cpu_seconds(pids)
    pending_before = bulkloading.scheduler_pending(scheduler.metrics_url)
    started = time.monotonic()
    if path == "bulk":
        loaded = bulkloading.load(info, batch, progress, timeout=timeout)
        written = loaded.write_seconds
        served = written + loaded.served_seconds
    else:
        jobs = [(workloads.collection_path(namespace), lambda i=i: orjson.dumps(batch.manifest(i)))
                for i in range(count)]
        written = posting.post_all(creds, jobs, timeout=timeout,
                                   progress=lambda done, total: progress("posts", f"{done}/{total} POSTed"))
        bulkloading.wait_served(creds, 0, count, namespace, batch.selector(), progress, timeout)
        served = time.monotonic() - started
    bulkloading.wait_pending(lambda: bulkloading.scheduler_pending(scheduler.metrics_url, f"cq-{namespace}"),
                             count, progress, timeout)
    pending = time.monotonic() - started
    cpu_after = cpu_seconds(pids)
    return {"path": path, "count": count, "written_seconds": round(written, 2), "served_seconds": round(served, 2),
            "pending_seconds": round(pending, 2), "workloads_per_second_pending": round(count / pending),
            "scheduler_pending_before": pending_before,
            "cpu_seconds": {c: round(cpu_after[c] - cpu_before[c], 2) for c in cpu_after if c in cpu_before},
            "etcd_db_size_bytes": bringup.status(info.name).get("etcd_db_size_bytes")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--posts", type=int, default=10_000, help="Workloads POSTed (phase 1).")
    parser.add_argument("--bulk", type=int, default=100_000, help="Workloads bulk-loaded (phase 2).")
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args()
    command = shlex.join([".venv/bin/python", "benchmarks/bench_workload_loading.py", *sys.argv[1:]])
    git_sha = runs.git_sha()  # at the start: others may commit while it runs
    args.out.mkdir(parents=True, exist_ok=True)
    progress = LineProgress(interval=5.0)
    name = f"bench-wl-{int(time.time())}"
    scheduler = None
    results = {}
    try:
        info, _ = bringup.up(specs.ClusterSpec(name=name), [pools.NodePool(count=1)], progress)
        scheduler = schedulers.start(info, Path(tempfile.mkdtemp(prefix="bench-wl-"))).process
        rest.apply(kubeconfig.load(info.kubeconfig), f"{GROUP_PATH}/resourceflavors/default",
                   {"apiVersion": workloads.API_VERSION, "kind": "ResourceFlavor", "metadata": {"name": "default"}})
        for path, count in (("posts", args.posts), ("bulk", args.bulk)):
            results[path] = phase(path, count, info, scheduler, progress, args.timeout)
            (args.out / f"{path}-{count // 1000}k.json").write_text(json.dumps(results[path], indent=2) + "\n")
            print(json.dumps(results[path]))
    finally:
        if scheduler:
            scheduler.stop()
        bringup.down(name)
    summary = {"version": SUMMARY_VERSION, "git_sha": git_sha, "command": command, "machine": runs.machine(),
               "phases": results}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
