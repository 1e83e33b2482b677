"""Benchmark: the reference scheduler against a real kube-apiserver with many Workloads.

Measures (issue 4 goals in brackets):
  - start-up: time until the controller has listed N existing Workloads   [<= 60 s at 100k]
  - visibility: page of 100 through kube-apiserver, C concurrent readers   [p99 <= 20 ms]
  - admission rate when quota allows                                        [>= 500 /s]
Writes JSON to results/benchmarks/scheduler-cluster/ with the command that produced it.

    .venv/bin/python benchmarks/bench_scheduler_cluster.py --workloads 100000 --readers 50
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import concurrent.futures
import itertools
import json
import os
import random
import ssl
import statistics
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import orjson

from harness import apiservice, kubeconfig, posting, rest, schedulerproc
from harness.clusters import bringup, kwok, spec as specs, state
from harness.nodes import pools
from harness.progress import LineProgress
from harness.results import runs
from scheduler.api import groups

BASE = groups.PATH
VISIBILITY = groups.VISIBILITY_PATH


def cluster_queue(cpu: str) -> dict:
    return {"apiVersion": groups.API_VERSION, "kind": "ClusterQueue", "metadata": {"name": "cq"},
            "spec": {"queueingStrategy": "BestEffortFIFO", "resourceGroups": [{
                "coveredResources": ["cpu"], "flavors": [{"name": "default", "resources": [
                    {"name": "cpu", "nominalQuota": cpu}]}]}]}}


def workload(i: int) -> dict:
    return {"apiVersion": groups.API_VERSION, "kind": "Workload",
            "metadata": {"name": f"wl-{i:06d}", "namespace": "default"},
            "spec": {"queueName": f"lq-{i % 10}", "priority": i % 7, "podSets": [{
                "name": "main", "count": 1,
                "template": {"spec": {"containers": [{"name": "c", "image": "x",
                                                      "resources": {"requests": {"cpu": "1"}}}]}}}]}}


async def read_pages(creds, readers: int, seconds: float, path, direct=None, per_reader_rate: float = 0.0) -> list[float]:
    """Concurrent readers for `seconds`; `path` is a string or a function of the request number.

    direct=(url, ssl_context, headers) skips kube-apiserver; per_reader_rate > 0 paces each reader
    (open loop: a reader that falls behind does not catch up in a burst), 0 reads back to back.
    """
    latencies: list[float] = []
    deadline = time.monotonic() + seconds
    server, context, headers = direct or (creds.server, creds.ssl_context(), {})
    connector = aiohttp.TCPConnector(ssl=context, limit=readers)
    path_of = path if callable(path) else (lambda _n: path)
    numbers = itertools.count()
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:
        async def reader(k: int):
            interval = 1.0 / per_reader_rate if per_reader_rate else 0.0
            next_at = time.monotonic() + (k * interval / readers)  # spread the readers' phases
            while time.monotonic() < deadline:
                if interval:
                    await asyncio.sleep(max(0.0, next_at - time.monotonic()))
                    next_at = max(next_at + interval, time.monotonic())
                started = time.perf_counter()
                async with session.get(server + path_of(next(numbers))) as response:
                    body = await response.read()
                    assert response.status == 200, body[:200]
                latencies.append(time.perf_counter() - started)
        await asyncio.gather(*(reader(k) for k in range(readers)))
    return latencies


def tcp_passive_opens() -> int:
    """Machine-wide TCP connections accepted so far (the readers keep theirs open, so a phase's
    delta is mostly kube-apiserver opening new connections to our server)."""
    lines = [line.split() for line in Path("/proc/net/snmp").read_text().splitlines() if line.startswith("Tcp:")]
    return int(lines[1][lines[0].index("PassiveOpens")])


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cpu_seconds(pids: dict[str, int]) -> dict[str, float]:
    import psutil

    result = {}
    for name, pid in pids.items():
        try:
            times = psutil.Process(pid).cpu_times()
            result[name] = times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return result


def cpu_share(before: dict[str, float], after: dict[str, float], seconds: float) -> dict[str, float]:
    """Cores each process used over a window (1.0 = one core busy the whole time)."""
    return {name: round((after[name] - before.get(name, 0.0)) / seconds, 2) for name in after}


def page_counts(handle) -> dict[str, float]:
    """Visibility pages answered so far, by cache outcome (hit / miss)."""
    text = handle.metrics_text()
    return {outcome: schedulerproc.metric_sum(text, "kqbench_visibility_pages_total", cache=outcome)
            for outcome in ("hit", "miss")}


def save_profile(profile: bytes, out: Path, top: int = 40) -> list[str]:
    """Write the pprof file next to the results; return its top functions by cumulative CPU."""
    target = out / "apiserver-admissions.pprof"
    target.write_bytes(profile)

    def top_by(*order: str) -> str:
        return subprocess.run(["go", "tool", "pprof", "-top", *order, f"-nodecount={top}", str(target)],
                              capture_output=True, text=True, timeout=120).stdout

    by_cumulative = top_by("-cum")
    (out / "apiserver-admissions-top.txt").write_text(top_by() + "\n" + by_cumulative)
    return by_cumulative.splitlines()


def summarize_collapsed(path: Path, top: int = 30) -> list[str]:
    """py-spy's collapsed stacks -> the functions with the largest share of busy samples (inclusive)."""
    inclusive: collections.Counter = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        total += int(count)
        for frame in set(stack.split(";")):
            inclusive[frame] += int(count)
    return [f"{n / total:6.1%}  {frame}" for frame, n in inclusive.most_common(top)] if total else []


def admitted_total(handle) -> float:
    return schedulerproc.metric_sum(handle.metrics_text(), "kqbench_scheduler_admitted_total")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workloads", type=int, default=100_000)
    parser.add_argument("--readers", type=int, default=50)
    parser.add_argument("--read-seconds", type=float, default=20.0)
    parser.add_argument("--admit-seconds", type=float, default=30.0)
    parser.add_argument("--paced-rate", type=float, default=4.0, help="requests/s per reader in the paced arm")
    parser.add_argument("--profile-apiserver", action="store_true",
                        help="record kube-apiserver's CPU profile during admissions (pprof + top functions)")
    parser.add_argument("--profile-scheduler", action="store_true",
                        help="sample the scheduler with py-spy during admissions (collapsed stacks + top functions)")
    parser.add_argument("--max-unwritten", type=int, default=None,
                        help="the scheduler's --max-unwritten (default: its own); a huge value lets deciding run ahead")
    parser.add_argument("--strategy", default="aggregated-indexed")
    parser.add_argument("--out", default="results/benchmarks/scheduler-cluster")
    args = parser.parse_args()
    progress = LineProgress(interval=5.0)
    name = "bench-sched"
    result: dict = {"command": " ".join([Path(sys.executable).name, *sys.argv]), "workloads": args.workloads,
                    "max_unwritten": args.max_unwritten, "git_sha": runs.git_sha(),
                    "strategy": args.strategy, "readers": args.readers, "machine": bringup.machine()}
    handle = scheduler_profiler = None
    profiling = concurrent.futures.ThreadPoolExecutor(1)  # kube-apiserver's CPU profile is a blocking GET
    Path(args.out).mkdir(parents=True, exist_ok=True)
    try:
        info, _ = bringup.up(specs.ClusterSpec(name=name), [pools.NodePool(count=1)], progress)
        result["versions"] = info.versions
        creds = kubeconfig.load(info.kubeconfig)
        apiservice.install_crds(creds)
        rest.apply(creds, f"{BASE}/resourceflavors/default",
                   {"apiVersion": groups.API_VERSION, "kind": "ResourceFlavor", "metadata": {"name": "default"}})
        rest.apply(creds, f"{BASE}/clusterqueues/cq", cluster_queue("0"))
        for i in range(10):
            rest.apply(creds, f"{BASE}/namespaces/default/localqueues/lq-{i}", {
                "apiVersion": groups.API_VERSION, "kind": "LocalQueue",
                "metadata": {"name": f"lq-{i}", "namespace": "default"}, "spec": {"clusterQueue": "cq"}})
        jobs = [(f"{BASE}/namespaces/default/workloads", lambda i=i: orjson.dumps(workload(i)))
                for i in range(args.workloads)]
        seconds = posting.post_all(creds, jobs, 64, timeout=1800,
                                   progress=lambda done, total: progress("workloads", f"created {done}/{total}"))
        result["create_seconds"] = round(seconds, 1)
        result["create_per_second"] = round(args.workloads / seconds, 1)

        started = time.monotonic()
        extra = ("--max-unwritten", str(args.max_unwritten)) if args.max_unwritten else ()
        handle = schedulerproc.start(info, strategy=args.strategy, qps=None, ready_timeout=600, extra_args=extra)
        result["startup_seconds"] = round(time.monotonic() - started, 2)
        progress("scheduler", f"ready with {args.workloads} workloads in {result['startup_seconds']} s", True)
        apiservice.wait_available(creds)

        pids = {**info.pids, "scheduler": handle.process.pid, "benchmark-client": os.getpid()}
        # The same page straight to the visibility server as the front proxy would ask: what the
        # server costs on its own, apart from kube-apiserver's proxying.
        proxy = kwok.pki_dir(info.name)
        direct_context = ssl.create_default_context(cafile=str(state.state_root() / "pki" / info.name / "visibility-ca.crt"))
        direct_context.check_hostname = False
        direct_context.load_cert_chain(proxy / "front-proxy-client.crt", proxy / "front-proxy-client.key")
        direct = (f"https://127.0.0.1:{handle.visibility_port}", direct_context,
                  {"X-Remote-User": "admin", "X-Remote-Group": "system:masters"})
        cq_page = f"{VISIBILITY}/clusterqueues/cq/pendingworkloads?limit=100&offset=50000"
        offsets = random.Random(0)

        def random_page(_n: int) -> str:
            return f"{VISIBILITY}/clusterqueues/cq/pendingworkloads?limit=100&offset={offsets.randrange(args.workloads - 100)}"

        arms = [  # (label, path, direct, per-reader rate)
            ("cluster_queue_page_100", cq_page, None, 0.0),
            ("local_queue_page_100",
             f"{VISIBILITY}/namespaces/default/localqueues/lq-3/pendingworkloads?limit=100&offset=5000", None, 0.0),
            # every request a different page: the page cache rarely helps, each page is encoded
            ("cluster_queue_random_page_100", random_page, None, 0.0),
            # readers that poll at a fixed rate, as dashboards and `watch kubectl` do, instead of back to back
            ("cluster_queue_page_100_paced", cq_page, None, args.paced_rate),
            ("cluster_queue_page_100_direct_to_server", cq_page, direct, 0.0),
            # the same readers on requests that cost our server nothing or are not proxied at all:
            # what this machine allows any request through kube-apiserver
            ("ceiling_aggregated_discovery", VISIBILITY, None, 0.0),
            ("ceiling_apiserver_version", "/version", None, 0.0),
        ]
        for label, path, how, rate in arms:
            before, opens, pages = cpu_seconds(pids), tcp_passive_opens(), page_counts(handle)
            latencies = asyncio.run(read_pages(creds, args.readers, args.read_seconds, path, how, rate))
            cores = cpu_share(before, cpu_seconds(pids), args.read_seconds)
            after = page_counts(handle)
            result[label] = {"requests": len(latencies), "per_second": round(len(latencies) / args.read_seconds, 1),
                             "per_reader_rate": rate,
                             "p50_ms": round(quantile(latencies, 0.5) * 1e3, 2),
                             "p90_ms": round(quantile(latencies, 0.9) * 1e3, 2),
                             "p99_ms": round(quantile(latencies, 0.99) * 1e3, 2),
                             "mean_ms": round(statistics.fmean(latencies) * 1e3, 2), "cores_used": cores,
                             "tcp_connections_accepted": tcp_passive_opens() - opens,
                             "page_cache": {k: after.get(k, 0) - pages.get(k, 0) for k in after}}
            progress("visibility", f"{label}: {result[label]}", True)

        profiler = None
        if args.profile_scheduler:
            scheduler_profiler = subprocess.Popen(
                [str(Path(sys.executable).parent / "py-spy"), "record", "-p", str(handle.process.pid),
                 "-d", str(int(args.admit_seconds) - 5), "-r", "100", "--format", "raw",
                 "-o", str(Path(args.out) / "scheduler-admissions.collapsed")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if args.profile_apiserver:
            profiler = profiling.submit(
                rest.get, creds, f"/debug/pprof/profile?seconds={int(args.admit_seconds) - 5}", args.admit_seconds + 30)
        rest.apply(creds, f"{BASE}/clusterqueues/cq", cluster_queue(str(args.workloads)))
        first = admitted_total(handle)
        before = cpu_seconds(pids)
        t0 = time.monotonic()
        samples = []
        while time.monotonic() - t0 < args.admit_seconds:
            time.sleep(2)
            samples.append((round(time.monotonic() - t0, 1), admitted_total(handle) - first))
        result["admissions"] = {"window_seconds": args.admit_seconds, "admitted": samples[-1][1],
                                "per_second": round(samples[-1][1] / samples[-1][0], 1), "samples": samples,
                                "cores_used": cpu_share(before, cpu_seconds(pids), time.monotonic() - t0)}
        progress("admission", f"{result['admissions']['per_second']} admissions/s", True)
        if profiler:
            result["admissions"]["apiserver_profile_top"] = save_profile(profiler.result()[1], Path(args.out))
        if scheduler_profiler:
            scheduler_profiler.wait(timeout=60)
            result["admissions"]["scheduler_profile_top"] = summarize_collapsed(
                Path(args.out) / "scheduler-admissions.collapsed")
        result["scheduler_metrics_excerpt"] = [l for l in handle.metrics_text().splitlines()
                                               if l.startswith("kqbench_visibility_request_duration_seconds_count")
                                               or l.startswith("kqbench_scheduler_cycle_duration_seconds_count")]
    finally:
        if scheduler_profiler and scheduler_profiler.poll() is None:
            scheduler_profiler.kill()
        if handle:
            handle.stop()
        bringup.down(name)
        profiling.shutdown(cancel_futures=True)
        out = Path(args.out)
        suffix = f"-max-unwritten-{args.max_unwritten}" if args.max_unwritten else ""
        target = out / f"scheduler-cluster-{args.strategy}-{args.workloads}{suffix}.json"
        target.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {target}")


if __name__ == "__main__":
    main()
