"""Benchmark: the scheduler on a real kube-apiserver with many pending Workloads, ours beside real Kueue.

For each implementation (`--implementation reference,kueue`, one fresh cluster each, one after the
other on the same machine), with N pending one-CPU Workloads in one ClusterQueue of zero quota and
10 LocalQueues:
  - start-up, and "every Workload processed" as a bounded milestone: the scheduler holds all N as
    pending and, for Kueue, has written its Pending condition to each (where it stopped is recorded);
  - scheduler CPU and RSS per pending Workload, apiserver writes per pending Workload, etcd bytes per
    Workload (read from etcd itself);
  - a page of 100 through kube-apiserver with R readers back to back: on an idle queue, and under
    churn (a create and a delete several times a second, so no cached page survives); the proxy
    ceiling (aggregated discovery, which the scheduler answers without work) in the same run;
    ours again with its page cache off (`page_cache: false`, a restart through the same settings);
  - admissions/s when the quota is raised to N (bounded), with apiserver writes per admission.
Writes one JSON per implementation and `summary.json` / `summary.md` with the ratios ours / Kueue
into --out (default results/peer/scheduler-cluster-N), each file as soon as it is known.

    .venv/bin/python benchmarks/bench_scheduler_cluster.py --workloads 20000 --readers 50
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson
import benchteardown
import scheduler_cluster_figures as figs
import scheduler_cluster_reading as reading

from harness.clusters import bringup, spec as specs, state
from harness.implementations import names, registry as implementations
from harness.errors import KqbenchError
from harness.implementations.kueue import starting as kueue_starting
from harness.kube import apiservice, kubeconfig, posting, rest, waiting
from harness.metrics import etcdreading, sampling, summarising
from harness.nodes import pools
from harness.progress import LineProgress
from harness.results import runs
from harness.scenarios import models
from harness.toolchain import building, versions
from harness.workloads import bulkloading, storing
from loadtests.settings import WorkloadKind
from scheduler import settings as scheduler_settings
from scheduler.api import groups
from scheduler.publishing import strategies

BASE = groups.PATH
VISIBILITY = groups.VISIBILITY_PATH
WORKLOADS = f"{BASE}/namespaces/default/workloads"
POLL_SECONDS = 3.0
LOG_DIR = state.state_root() / "logs"


def cluster_queue(cpu: int) -> dict:
    return {"apiVersion": groups.API_VERSION, "kind": "ClusterQueue", "metadata": {"name": "cq"},
            # namespaceSelector {} selects every namespace; in Kueue's API a missing one selects none
            "spec": {"queueingStrategy": "BestEffortFIFO", "namespaceSelector": {}, "resourceGroups": [{
                "coveredResources": ["cpu"], "flavors": [{"name": "default", "resources": [
                    {"name": "cpu", "nominalQuota": str(cpu)}]}]}]}}


def workload(name: str, i: int) -> dict:
    # spec.priority always: Kueue v0.17's visibility API fails a whole ClusterQueue without it
    return {"apiVersion": groups.API_VERSION, "kind": "Workload", "metadata": {"name": name, "namespace": "default"},
            "spec": {"queueName": f"lq-{i % 10}", "priority": i % 7, "podSets": [{
                "name": "main", "count": 1,
                "template": {"spec": {"containers": [{"name": "c", "image": "x",
                                                      "resources": {"requests": {"cpu": "1"}}}]}}}]}}


@dataclass(frozen=True)
class Arm:
    """One implementation as `--implementation` names it: `reference`, `kueue` (harness/versions.toml's
    default Kueue) or `kueue@VERSION`."""

    implementation: str
    kueue_version: str | None = None

    @property
    def label(self) -> str:
        return self.implementation if self.kueue_version is None else f"{self.implementation}-{self.kueue_version}"


def parse_arms(text: str) -> list[Arm]:
    """`reference,kueue,kueue@v0.19.2` -> Arms; ValueError naming what is wrong."""
    arms = []
    for token in (t.strip() for t in text.split(",") if t.strip()):
        implementation, _, version = token.partition("@")
        if implementation not in implementations.implementations():
            raise ValueError(f"{token!r}: use reference, kueue or kueue@VERSION")
        if version and implementation != names.KUEUE:
            raise ValueError(f"{token!r}: only kueue takes a @VERSION")
        try:
            arms.append(Arm(implementation, versions.kueue_version(version) if version else None))
        except KqbenchError as error:
            raise ValueError(f"{token!r}: {error}") from None
    if not arms:
        raise ValueError("name at least one implementation")
    return arms


class Bench:
    """One implementation on one fresh cluster."""

    def __init__(self, arm: Arm, args: argparse.Namespace, out: Path, say: LineProgress) -> None:
        self.arm, self.implementation, self.args, self.out, self.say = arm, arm.implementation, args, out, say
        self.n = args.workloads
        self.result: dict = {"implementation": self.implementation, "kueue_version": arm.kueue_version,
                             "workloads": self.n, "readers": args.readers,
                             "log_dir": str(LOG_DIR), "arms": {}}
        self.handle = None
        self.info = self.creds = None

    # -- the scheduler -------------------------------------------------------------------------
    def start_scheduler(self, page_cache: bool = True) -> float:
        section = models.SchedulerSection(implementation=self.implementation, strategy=strategies.AGGREGATED_INDEXED,
                                          no_client_limit=(self.args.kueue_qps is None
                                                           or self.implementation != names.KUEUE),
                                          qps=self.args.kueue_qps or scheduler_settings.CLIENT_QPS,
                                          page_cache=page_cache,
                                          kueue_version=self.arm.kueue_version)
        started = time.monotonic()
        # logs stay in the kqbench state folder: Kueue's grows by megabytes and results are committed
        self.handle = implementations.get(self.implementation).start(self.info, section, LOG_DIR)
        apiservice.wait_available(self.creds, timeout=120)
        return round(time.monotonic() - started, 2)

    def metrics_text(self) -> str:
        return self.handle.process.metrics_text(timeout=30)

    def pending(self) -> float:
        return figs.metric_sum(self.metrics_text(), figs.PENDING_GAUGES[self.implementation])

    def admitted(self) -> float:
        return figs.metric_sum(self.metrics_text(), figs.ADMITTED_COUNTERS[self.implementation])

    def apiserver_writes(self) -> dict[str, float]:
        status, body = rest.get(self.creds, "/metrics", timeout=60)
        return figs.apiserver_writes(body.decode()) if status == 200 else {}

    def pids(self) -> dict[str, int]:
        return {**self.info.pids, "scheduler": self.handle.pid(), "benchmark-client": os.getpid()}

    def cpu(self) -> list[summarising.ProcessSample]:
        """Every process's CPU seconds now, stamped with the instant they were read (monotonic seconds)."""
        return sampling.sample(self.pids(), time.monotonic())

    # -- steps ----------------------------------------------------------------------------------
    def setup(self) -> None:
        name = f"peer-{self.implementation[:3]}"
        self.cluster_name = name
        self.info, _ = bringup.up(specs.ClusterSpec(name=name), [pools.NodePool(count=1)], self.say)
        self.result["versions"] = self.info.versions
        self.creds = kubeconfig.load(self.info.kubeconfig)
        if self.implementation == names.KUEUE:
            kueue_starting.install_api(self.info, kueue=building.locate_kueue(version=self.arm.kueue_version))
        else:
            apiservice.install_crds(self.creds)
        rest.apply(self.creds, f"{BASE}/resourceflavors/default",
                   {"apiVersion": groups.API_VERSION, "kind": "ResourceFlavor", "metadata": {"name": "default"}})
        rest.apply(self.creds, f"{BASE}/clusterqueues/cq", cluster_queue(0))
        for i in range(10):
            rest.apply(self.creds, f"{BASE}/namespaces/default/localqueues/lq-{i}", {
                "apiVersion": groups.API_VERSION, "kind": "LocalQueue",
                "metadata": {"name": f"lq-{i}", "namespace": "default"}, "spec": {"clusterQueue": "cq"}})
        if self.args.bulk:
            seconds = self.load_in_bulk()
        else:
            jobs = [(WORKLOADS, lambda i=i: orjson.dumps(workload(f"wl-{i:06d}", i))) for i in range(self.n)]
            seconds = posting.post_all(self.creds, jobs, 64, timeout=1800,
                                       progress=lambda done, total: self.say("workloads", f"created {done}/{total}"))
        self.result["create"] = {"seconds": round(seconds, 1), "per_second": round(self.n / seconds, 1),
                                 "path": "bulk-at-start" if self.args.bulk else "posts",
                                 "etcd_bytes_per_workload": self.etcd_bytes_per_workload()}

    def load_in_bulk(self) -> float:
        """The N Workloads written into etcd with kube-apiserver stopped (nothing watches yet), a tenth in
        each LocalQueue with priority 0-6 by queue (the POSTed ones vary it per Workload); until served."""
        started = time.monotonic()
        batches = [storing.Batch(count=self.n // 10 + (1 if i < self.n % 10 else 0), queue=f"lq-{i}",
                                 prefix=f"wl{i}", kind=WorkloadKind(priority=i % 7, cpu="1", memory="0"))
                   for i in range(10)]
        report = bulkloading.load_at_start(self.info, [b for b in batches if b.count], self.say,
                                           timeout=self.args.process_seconds)
        self.result["bulk_load"] = {"write_seconds": round(report.write_seconds, 1),
                                    "served_seconds": round(report.served_seconds, 1),
                                    "transactions": report.transactions, "value_bytes": report.value_bytes}
        return time.monotonic() - started

    def etcd_bytes_per_workload(self) -> float | None:
        if not self.info.etcd_url:
            return None
        sizes = [size for _, size in etcdreading.read_sizes(self.info.etcd_url, "/registry/kueue.x-k8s.io/workloads/")]
        return round(sum(sizes) / len(sizes), 1) if sizes else None

    def wait(self, name: str, target: int, progress: Callable[[], float], bound: float) -> figs.Milestone:
        """Poll `progress` until it reaches `target` or `bound` seconds pass; record where it stood."""
        t0, samples = time.monotonic(), []

        def at_target() -> bool:
            done = progress()
            samples.append((round(time.monotonic() - t0, 1), done))
            self.say(name, f"{done:.0f}/{target} after {samples[-1][0]:.0f}s")
            return done >= target

        try:
            # a scrape answered 500 by a busy peer is read again within the bound, not the end of the arm
            waiting.poll(at_target, bound, POLL_SECONDS, lambda: f"{name} below {target} after {bound:.0f}s",
                         retry_on=(OSError,))
            reached = True
        except waiting.TimedOut:  # not reached within the bound: the milestone says how far it got
            reached = False
        return figs.milestone(name, target, samples, reached)

    def process(self) -> None:
        """Start the scheduler on the N Workloads and time until every one is processed."""
        writes0 = self.apiserver_writes()
        self.result["startup_seconds"] = self.start_scheduler()
        self.say("scheduler", f"{self.implementation} ready in {self.result['startup_seconds']} s", True)
        pid = self.handle.pid()
        per_pending_writes = figs.STATUS_WRITES_PER_PENDING[self.implementation]
        if self.implementation == names.KUEUE and versions.reference_settings(self.arm.kueue_version)[
                "scheduling_equivalence_hashing"]:
            # From v0.18 Kueue sets aside every pending Workload of a no-fit head's shape without a status
            # write each (its scheduling-equivalence hashing): its pending gauge is what it has processed.
            per_pending_writes = 0
        self.result["processed_by"] = "pending gauge and a status write each" if per_pending_writes else "pending gauge"

        def processed() -> float:
            pending = self.pending()
            if not per_pending_writes:
                return pending
            marked = figs.delta(self.apiserver_writes(), writes0).get("workloads/status", 0.0)
            return min(pending, marked / per_pending_writes)

        started = time.monotonic()
        milestone = self.wait("processed", self.n, processed, self.args.process_seconds)
        seconds = self.result["startup_seconds"] + (time.monotonic() - started)
        # all of it: the process is new
        cpu = next((s.cpu_seconds for s in sampling.sample({"scheduler": pid}, 0.0)), 0.0)
        rss = reading.rss_bytes(pid)
        writes = figs.delta(self.apiserver_writes(), writes0)
        text = self.metrics_text()
        self.result["processed"] = {
            "milestone": milestone.to_dict(), "seconds_from_start": round(seconds, 1),
            "scheduler_cpu_seconds": round(cpu, 2), "scheduler_rss_bytes": rss,
            "scheduler_rss_mib": round(rss / 2**20, 1), **figs.per_pending(cpu, rss, self.n),
            "pending_gauge": figs.metric_sum(text, figs.PENDING_GAUGES[self.implementation]),
            "apiserver_writes": writes, "apiserver_writes_per_pending_workload": figs.per(sum(writes.values()), self.n),
            "idle_cores": self.idle_cores(10.0),
            "rss_bytes_per_pending_by_process": {
                name: round(reading.rss_bytes(pid) / self.n, 1) for name, pid in self.pids().items()
                if name != "benchmark-client" and reading.rss_bytes(pid)}}
        if self.implementation == names.KUEUE:
            self.result["processed"]["kueue_pending_by_status"] = {
                s: figs.metric_sum(text, "kueue_pending_workloads", status=s) for s in ("active", "inadmissible")}
        self.result["etcd"] = {"bytes_per_workload": self.etcd_bytes_per_workload(),
                               "bytes_per_workload_as_created": self.result["create"]["etcd_bytes_per_workload"]}

    def idle_cores(self, seconds: float) -> dict[str, float]:
        """Cores each process uses with nothing asked of the scheduler (still catching up shows here)."""
        before = self.cpu()
        time.sleep(seconds)
        return reading.cores(before, self.cpu())

    def read(self, label: str, path: str, churn: bool = False) -> None:
        args = self.args
        churning = reading.Churn(lambda name: workload(name, 3), WORKLOADS, args.churn_rate) if churn else None
        pages = self.page_counts()
        cpu_before = self.cpu()
        started = time.monotonic()
        latencies, failures = asyncio.run(reading.read_pages(
            self.creds.server, self.creds.ssl_context(), args.readers, args.read_seconds, path, churn=churning,
            headers=self.creds.headers()))
        # Requests started before the arm's end run on past it: rates and CPU are over the time they took.
        window = time.monotonic() - started
        arm = figs.latency_summary(latencies, window)
        arm |= {"failed": failures, "window_seconds": round(window, 1),
                "cores_used": reading.cores(cpu_before, self.cpu())}
        if pages:
            after = self.page_counts()
            arm["page_cache"] = {k: after[k] - pages[k] for k in after}
        if churning:
            arm["churn"] = churning.figures(args.read_seconds)
        self.result["arms"][label] = arm
        self.say("visibility", f"{self.implementation} {label}: {arm}", True)

    def page_counts(self) -> dict[str, float]:
        if self.implementation != names.REFERENCE:
            return {}
        text = self.metrics_text()
        return {o: figs.metric_sum(text, "kqbench_visibility_pages_total", cache=o) for o in ("hit", "miss")}

    def read_arms(self, suffix: str = "") -> None:
        page = f"{VISIBILITY}/clusterqueues/cq/pendingworkloads?limit=100&offset={self.n // 2}"
        self.read("cq_page_idle" + suffix, page)
        self.read("cq_page_churn" + suffix, page, churn=True)

    def admit(self) -> None:
        before_writes, first = self.apiserver_writes(), self.admitted()
        rest.apply(self.creds, f"{BASE}/clusterqueues/cq", cluster_queue(self.n + 100))
        # CPU over the wait alone, each reading with its own time: read before the apply and after the
        # scrape below but divided by the wait, Kueue's busy window came to 6.66 cores of 2.
        cpu_before = self.cpu()
        milestone = self.wait("admitted", self.n, lambda: self.admitted() - first, self.args.admit_seconds)
        cores = reading.cores(cpu_before, self.cpu())
        writes = figs.delta(self.apiserver_writes(), before_writes)
        admitted = milestone.done
        self.result["admissions"] = {
            "milestone": milestone.to_dict(), "admitted": admitted,
            "per_second": round(admitted / milestone.seconds, 1) if milestone.seconds else None,
            "apiserver_writes": writes, "apiserver_writes_per_admission": figs.per(sum(writes.values()), admitted),
            "cores_used": cores}
        self.say("admission", f"{self.implementation}: {self.result['admissions']['per_second']} admissions/s", True)

    def run(self) -> dict:
        with benchteardown.kept(self):
            self.setup()
            self.process()
            self.save()
            if self.args.read_seconds > 0:
                self.read_arms()
                self.read("proxy_ceiling", VISIBILITY)
                self.save()
            if self.args.read_seconds > 0 and self.implementation == names.REFERENCE and not self.args.skip_no_page_cache:
                self.handle.stop()
                self.start_scheduler(page_cache=False)
                self.wait("restarted", self.n, self.pending, self.args.process_seconds)
                self.read_arms("_no_page_cache")
                self.save()
            if self.args.admit_seconds > 0:
                self.admit()
        return self.result

    def save(self) -> None:
        (self.out / f"{self.arm.label}.json").write_text(json.dumps(self.result, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--implementation", default="reference,kueue",
                        help="comma-separated, run in this order on fresh clusters: reference, kueue (the default "
                             "Kueue of harness/versions.toml), kueue@VERSION (default: reference,kueue)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds of every implementation, each into OUT/rN; OUT/summary.json has the ratios "
                             "with their intervals")
    parser.add_argument("--workloads", type=int, default=20_000)
    parser.add_argument("--readers", type=int, default=50)
    parser.add_argument("--read-seconds", type=float, default=20.0, help="each read arm; 0 skips the reads")
    parser.add_argument("--churn-rate", type=float, default=25.0,
                        help="create+delete pairs per second in the churn arms")
    parser.add_argument("--process-seconds", type=float, default=300.0,
                        help="bound on waiting for every Workload to be processed")
    parser.add_argument("--admit-seconds", type=float, default=60.0,
                        help="bound on the admission window; 0 skips admissions")
    parser.add_argument("--kueue-qps", type=float, default=None,
                        help="Kueue's client QPS (default: no client limit for both, as ours runs)")
    parser.add_argument("--skip-no-page-cache", action="store_true", help="leave out our page-cache-off arms")
    parser.add_argument("--bulk", action="store_true",
                        help="write the N Workloads straight into etcd before the scheduler starts, instead of POSTs")
    parser.add_argument("--out", default=None, help="default: results/peer/scheduler-cluster-N")
    parser.add_argument("--combine", action="store_true",
                        help="take the implementations not run now from their JSON already in --out (an "
                             "earlier run of the same arguments) into summary.json's ratios")
    args = parser.parse_args()
    try:
        arms = parse_arms(args.implementation)
    except ValueError as error:
        parser.error(f"--implementation {args.implementation!r}: {error}")
    out = Path(args.out or f"results/peer/scheduler-cluster-{args.workloads}")
    out.mkdir(parents=True, exist_ok=True)
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    say = LineProgress(interval=10.0)
    header = {"command": " ".join([Path(sys.executable).name, *sys.argv]), "git_sha": runs.git_sha(),
              "machine": bringup.machine(), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if args.repeat == 1:
        run_round(arms, args, out, say, header)
        return
    rounds = []
    try:
        for repeat in range(args.repeat):  # in rounds: every arm once, then again
            say("repeat", f"round {repeat + 1}/{args.repeat}", True)
            rounds.append(run_round(arms, args, out / f"r{repeat}", say, header))
    finally:
        combined = {**header, "repeats": len(rounds), "rounds": [f"r{r}" for r in range(len(rounds))],
                    "ratios": figs.repeated_ratios(rounds, [a.label for a in arms if a.implementation == names.KUEUE])}
        (out / "summary.json").write_text(json.dumps(combined, indent=2) + "\n")
        print(f"wrote {out}/summary.json")


def run_round(arms: list[Arm], args: argparse.Namespace, out: Path, say: LineProgress, header: dict) -> dict:
    """Every arm once, on fresh clusters, into `out`; its summary.json has the ratios ours / each Kueue."""
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict] = {}
    if args.combine:
        for other in implementations.implementations():
            if other not in {a.label for a in arms} and (out / f"{other}.json").is_file():
                results[other] = json.loads((out / f"{other}.json").read_text())
                header["combined_from_earlier"] = sorted({*header.get("combined_from_earlier", []), other})
    try:
        for arm in arms:
            bench = Bench(arm, args, out, say)
            try:
                results[arm.label] = bench.run()
            except Exception as error:  # noqa: BLE001 - the other implementations still run
                results[arm.label] = bench.result
                print(f"{arm.label} stopped: {error}", file=sys.stderr)
    finally:
        peers = [label for label in results if label != names.REFERENCE]
        found = {label: figs.ratios(results.get(names.REFERENCE, {}), results[label]) for label in peers}
        summary = {**header, "results": {k: f"{k}.json" for k in results},
                   # the first Kueue's ratios where earlier runs read them; each Kueue's under `by_peer`
                   "ratios": found[peers[0]] if peers else figs.ratios(results.get(names.REFERENCE, {}), {}),
                   "by_peer": found}
        (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        (out / "summary.md").write_text(f"`{header['command']}` (git {header['git_sha']})\n\n"
                                        + figs.markdown(results, summary["ratios"]))
        print(f"wrote {out}/summary.json")
    return results


if __name__ == "__main__":
    main()
