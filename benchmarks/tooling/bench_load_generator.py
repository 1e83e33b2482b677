"""Benchmark: requests/s one Locust load process sustains for a cheap GET, and the CPU it uses.

Goal (issue 6): the load generator is never the bottleneck: below 50% of a core at the rate it
reports, or the results say so. For each target rate (0 = unthrottled) it runs the CheapGet user
in ONE engine process (no workers) against a tiny local cluster and records achieved requests/s,
the engine's CPU during the load window (cores = CPU seconds / load seconds), CPU per request,
the apiserver's CPU over the same run, and latency. Writes JSON under
results/benchmarks/load-generator/ with the command that produced it.

    .venv/bin/python benchmarks/tooling/bench_load_generator.py --rates 0,100,200,400 --seconds 15 --users 20
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import psutil

from harness.clusters import bringup, spec as specs, state
from harness.kube import kubeconfig, rest
from harness.nodes import pools
from harness.progress import LineProgress
from loadtests import running, settings as load_settings

HERE = Path(__file__).resolve().parent
LOCUSTFILE = HERE / "load_generator" / "locustfile.py"
OUT = HERE.parents[1] / "results" / "benchmarks" / "load-generator"


def create_configmap(creds: kubeconfig.Credentials) -> None:
    import urllib.request

    body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kqbench-bench"},
                       "data": {"v": "x" * 64}}).encode()
    request = urllib.request.Request(creds.server + "/api/v1/namespaces/default/configmaps", data=body,
                                     method="POST", headers={"Content-Type": "application/json", **creds.headers()})
    try:
        urllib.request.urlopen(request, context=creds.ssl_context(), timeout=10).read()
    except urllib.error.HTTPError as error:
        if error.code != 409:
            raise


def measure(info: state.ClusterInfo, creds: kubeconfig.Credentials, rate: float, users: int, seconds: float) -> dict:
    os.environ["KQBENCH_BENCH_RATE"] = str(rate / users if rate else 0)
    target = load_settings.Target(server=creds.server, ca_file=creds.ca_file, cert_file=creds.cert_file,
                                  key_file=creds.key_file, token=creds.token)
    plan = load_settings.RunPlan(settings=load_settings.LoadSettings(target=target), locustfile=str(LOCUSTFILE),
                                 users=users, spawn_rate=float(users), run_time=seconds)
    apiserver = psutil.Process(info.pids["kube-apiserver"])
    cpu_before = sum(apiserver.cpu_times()[:2])
    result = running.run(plan)
    apiserver_cpu = sum(apiserver.cpu_times()[:2]) - cpu_before
    row = result.totals.iloc[0]
    load_seconds = result.summary["load_seconds"]
    achieved = row.requests / load_seconds
    cores = result.summary["cpu_seconds_master_during_load"] / load_seconds
    return {
        "target_rps": rate or "unthrottled", "users": users, "seconds": round(load_seconds, 2),
        "requests": int(row.requests), "failures": int(row.failures), "achieved_rps": round(achieved, 1),
        "generator_cores": round(cores, 3), "generator_cpu_ms_per_request": round(1000 * cores / achieved, 3),
        "apiserver_cores_whole_run": round(apiserver_cpu / result.summary["wall_seconds"], 3),
        "p50_ms": row.p50_ms, "p99_ms": row.p99_ms,
        "generator_below_half_core": cores < 0.5,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rates", default="0,100,200,400", help="target requests/s (0 = unthrottled)")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--out", default=str(OUT / "bench_load_generator.json"))
    args = parser.parse_args(argv)
    name = f"bench-load-{os.getpid()}"
    rows = []
    try:
        info, _ = bringup.up(specs.ClusterSpec(name=name), [pools.NodePool(count=3)], LineProgress(interval=10.0))
        creds = kubeconfig.load(info.kubeconfig)
        rest.wait_ready(creds)
        create_configmap(creds)
        for rate in (float(r) for r in args.rates.split(",")):
            rows.append(measure(info, creds, rate, args.users, args.seconds))
            print(json.dumps(rows[-1]), file=sys.stderr)
    finally:
        bringup.down(name)
    unthrottled = [r for r in rows if r["target_rps"] == "unthrottled"]
    # The dearest CPU per request seen (throttled runs wake more often per request): a conservative rate.
    per_request = max(r["generator_cpu_ms_per_request"] for r in rows)
    report = {
        "benchmark": "load-generator", "version": 1,
        "command": "python benchmarks/tooling/bench_load_generator.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": bringup.machine(), "load_average_at_end": os.getloadavg(),
        "runs": rows,
        "max_rps_one_process": max(r["achieved_rps"] for r in unthrottled) if unthrottled else None,
        "rps_at_half_core": round(500.0 / per_request) if per_request else None,
        "bottleneck_unthrottled": (None if not unthrottled else
                                   "generator" if unthrottled[0]["generator_cores"] >= 0.5 else
                                   "not the generator (below half a core): the apiserver on this shared machine"),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: report[k] for k in ("max_rps_one_process", "rps_at_half_core", "bottleneck_unthrottled")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
