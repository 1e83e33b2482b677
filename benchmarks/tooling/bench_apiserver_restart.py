"""Benchmark: how long a restarted kube-apiserver takes to serve every node of a running kqbench cluster again.

Used to tell whether the format of the nodes in etcd matters to `cluster up --bulk` (which restarts
kube-apiserver over nodes it wrote as JSON): run it on a cluster whose nodes were POSTed (kube-apiserver
stored them as protobuf) and on one whose nodes were bulk-loaded (JSON), same count:

    kqbench cluster up --name pj --nodes 20000 && python benchmarks/tooling/bench_apiserver_restart.py --name pj --nodes 20000
    kqbench cluster up --name jj --nodes 20000 --bulk && python benchmarks/tooling/bench_apiserver_restart.py --name jj --nodes 20000

Each restart: kube-apiserver killed and started again as kwokctl started it (kwok.apiserver_stopped), timed
until it answers and until a LIST at the revision before serves every node Ready; its CPU is the new process's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time

import psutil

from harness.clusters import kwok, state
from harness.kube import kubeconfig, rest
from harness.nodes import bulkloading


def restart_once(info: state.ClusterInfo, nodes: int) -> dict:
    creds = kubeconfig.load(info.kubeconfig)
    _, body = rest.get(creds, "/api/v1/nodes?limit=1", timeout=30)
    revision = int(json.loads(body)["metadata"]["resourceVersion"])
    with kwok.apiserver_stopped(info, lambda *a, **k: None):
        started = time.monotonic()
    answering = time.monotonic() - started
    ready = bulkloading.wait_served(creds, revision, nodes, "", lambda *a, **k: None, 300)
    served = time.monotonic() - started
    cpu = psutil.Process(info.pids["kube-apiserver"]).cpu_times()
    return {"live_s": round(answering, 2), "served_s": round(served, 2),
            "apiserver_cpu_s": round(cpu.user + cpu.system, 2), "ready": ready}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", required=True, help="A running kqbench cluster (kwok backend).")
    parser.add_argument("--nodes", type=int, required=True, help="How many Ready nodes it serves.")
    parser.add_argument("--restarts", type=int, default=3)
    parser.add_argument("--pause", type=float, default=5.0, help="Seconds between restarts.")
    args = parser.parse_args()
    info = state.load(args.name)
    restarts = []
    for _ in range(args.restarts):
        restarts.append(restart_once(info, args.nodes))
        time.sleep(args.pause)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(json.dumps({"cluster": args.name, "nodes": args.nodes, "git_sha": sha, "restarts": restarts}))


if __name__ == "__main__":
    main()
