"""Benchmark: a KWOK cluster's bring-up with its nodes, by POSTs and by bulk loading, in one run.

Each phase is `kqbench cluster up --name N --nodes COUNT [--bulk] --record FILE` run as a user runs
it, in its own process on a fresh cluster (then `kqbench cluster down`), one phase after the other
on the same machine (default: POSTs at 10k, bulk at 10k, bulk at 100k). Per phase it keeps the
bring-up record (control plane, writing the nodes, waiting until kube-apiserver serves them Ready,
every component's CPU and RSS, etcd's size), the time from launching the command until the record
was written (Ready, including Python's start-up), until the nodes' other watchers (kwok-controller,
kube-controller-manager) went quiet, and the CPU the rest of the machine used meanwhile (this
machine is shared: a busy neighbour shows up there). Writes one JSON per phase and `summary.json`
(git sha, the exact command, the ratio bulk / POSTs at 10k) into --out as soon as each is known.

    .venv/bin/python benchmarks/tooling/bench_bringup.py --out results/bringup/bulk-and-posts
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from harness.results import runs

GOAL_SECONDS = 20.0
"""100k nodes Ready through kube-apiserver within 20 s of `cluster up` (kwok's own e2e budget is 5k in 20 s)."""
SUMMARY_VERSION = 1


@dataclass(frozen=True, slots=True)
class Phase:
    path: str
    nodes: int

    @property
    def name(self) -> str:
        return f"{self.path}-{self.nodes // 1000}k" if self.nodes % 1000 == 0 else f"{self.path}-{self.nodes}"


def parse_phases(text: str) -> list[Phase]:
    """'posts:10000,bulk:100000' -> phases in that order."""
    phases = []
    for item in text.split(","):
        path, _, count = item.strip().partition(":")
        if path not in ("posts", "bulk") or not count.isdigit() or int(count) < 1:
            raise SystemExit(f"phase {item!r}: use posts:COUNT or bulk:COUNT")
        phases.append(Phase(path, int(count)))
    return phases


def busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy since boot (all cores)."""
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def run_phase(phase: Phase, out: Path, timeout: float) -> dict:
    record = out / f"{phase.name}.json"
    record.unlink(missing_ok=True)
    name = f"bringup-{phase.name}"
    command = [sys.executable, "-m", "harness", "cluster", "up", "--name", name, "--nodes", str(phase.nodes),
               *(["--bulk"] if phase.path == "bulk" else []), "--record", str(record)]
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy_before = busy_seconds()
    launched = time.time()
    print(f"[bench] {phase.name}: {' '.join(command[1:])}", file=sys.stderr, flush=True)
    process = subprocess.Popen(command)
    busy_at_ready = None
    deadline = time.monotonic() + timeout
    try:
        # The record is written the moment bring-up returns (every node Ready).
        while process.poll() is None and time.monotonic() < deadline:
            if busy_at_ready is None and record.exists():
                busy_at_ready = busy_seconds()
            time.sleep(0.05)
        if process.poll() is None:
            raise SystemExit(f"{phase.name} did not finish in {timeout:.0f}s")
        if process.returncode != 0 or not record.exists():
            raise SystemExit(f"{phase.name} failed (exit {process.returncode})")
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        settled = settle(json.loads(record.read_text())["processes"])
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=120)
        subprocess.run([sys.executable, "-m", "harness", "cluster", "down", "--name", name], timeout=180, check=False)
    data = json.loads(record.read_text())
    ready_at = record.stat().st_mtime
    ours = sum(p.get("cpu_seconds", 0.0) for p in data["processes"].values())
    # The kqbench process's CPU until its exit; its teardown is a small part of it.
    client = (children.ru_utime - children_before.ru_utime) + (children.ru_stime - children_before.ru_stime)
    window = ready_at - launched
    busy = (busy_at_ready or busy_seconds()) - busy_before
    data["bench"] = {
        "phase": phase.name,
        "ready_from_launch_seconds": round(window, 2),
        "kqbench_process_cpu_seconds": round(client, 2),
        "machine_busy_cpu_seconds": round(busy, 2),
        "others_cpu_seconds": round(max(0.0, busy - ours - client), 2),
        "others_cores": round(max(0.0, busy - ours - client) / window, 2) if window > 0 else None,
        "watchers_settled_from_launch_seconds": (
            round(max(settled.values()) - launched, 2) if settled and None not in settled.values() else None),
        "settled_from_launch_seconds": {c: round(t - launched, 2) if t else None for c, t in settled.items()},
    }
    record.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return data


SETTLED_CORES = 0.05
"""A component below this many cores for SETTLED_SECONDS has taken in the nodes it was sent."""
SETTLED_SECONDS = 2
SETTLE_TIMEOUT_SECONDS = 300.0


def settle(processes: dict[str, dict], clock=time.time) -> dict[str, float | None]:
    """When each of the nodes' other watchers (kwok-controller, kube-controller-manager) went quiet after
    the nodes were served Ready, as clock times: kube-apiserver serves a node before every watcher has
    digested it, and a measurement started then would share the cores with the digesting. None for one
    that did not go quiet within SETTLE_TIMEOUT_SECONDS."""
    watched = {c: psutil.Process(p["pid"]) for c, p in processes.items()
               if c in ("kwok-controller", "kube-controller-manager") and p.get("alive")}
    last = {c: sum(w.cpu_times()[:2]) for c, w in watched.items()}
    quiet_since: dict[str, float | None] = dict.fromkeys(watched)
    settled: dict[str, float | None] = dict.fromkeys(watched)
    deadline = clock() + SETTLE_TIMEOUT_SECONDS
    while clock() < deadline and any(t is None for t in settled.values()):
        time.sleep(0.5)
        for component, process in watched.items():
            now = sum(process.cpu_times()[:2])
            busy = (now - last[component]) / 0.5 >= SETTLED_CORES
            last[component] = now
            if settled[component] is not None:
                continue
            if busy:
                quiet_since[component] = None
            elif quiet_since[component] is None:
                quiet_since[component] = clock() - 0.5
            elif clock() - quiet_since[component] >= SETTLED_SECONDS:
                settled[component] = quiet_since[component]
    return settled


def summarize(results: dict[str, dict], command: str, git_sha: str) -> dict:
    phases = {}
    for name, data in results.items():
        phases[name] = {
            "nodes": data["nodes_requested"], "path": data["node_path"],
            "control_plane_seconds": data["control_plane_seconds"],
            "node_write_seconds": data["node_create_seconds"],
            "node_ready_seconds": data["node_ready_seconds"],
            "bringup_total_seconds": data["total_seconds"],
            "ready_from_launch_seconds": data["bench"]["ready_from_launch_seconds"],
            "others_cores": data["bench"]["others_cores"],
            "watchers_settled_from_launch_seconds": data["bench"]["watchers_settled_from_launch_seconds"],
            "settled_from_launch_seconds": data["bench"]["settled_from_launch_seconds"],
            "etcd_db_size_bytes": data["etcd_db_size_bytes"],
            "cpu_seconds": {c: p.get("cpu_seconds") for c, p in data["processes"].items()},
            "rss_bytes": {c: p.get("rss_bytes") for c, p in data["processes"].items()},
        }
    summary = {"version": SUMMARY_VERSION, "git_sha": git_sha, "command": command, "machine": runs.machine(),
               "phases": phases}
    posts, bulk = phases.get("posts-10k"), phases.get("bulk-10k")
    if posts and bulk:
        summary["ratio_bulk_over_posts_10k"] = {
            key: round(bulk[key] / posts[key], 3)
            for key in ("ready_from_launch_seconds", "bringup_total_seconds") if posts[key]}
        summary["ratio_bulk_over_posts_10k"]["nodes_seconds"] = round(
            (bulk["node_write_seconds"] + bulk["node_ready_seconds"])
            / (posts["node_write_seconds"] + posts["node_ready_seconds"]), 3)
    big = phases.get("bulk-100k")
    if big:
        summary["goal_100k_seconds"] = GOAL_SECONDS
        summary["goal_100k_met"] = big["ready_from_launch_seconds"] <= GOAL_SECONDS
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", default="posts:10000,bulk:10000,bulk:100000")
    parser.add_argument("--out", type=Path, default=Path("results/bringup/bulk-and-posts"))
    parser.add_argument("--timeout", type=float, default=1800.0, help="Seconds per phase at most.")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    command = " ".join([".venv/bin/python", os.path.relpath(__file__), *sys.argv[1:]])
    git_sha = runs.git_sha()  # at the start: others may commit while it runs
    results: dict[str, dict] = {}
    for phase in parse_phases(args.phases):
        results[phase.name] = run_phase(phase, args.out, args.timeout)
        summary = summarize(results, command, git_sha)
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    print(json.dumps(summary["phases"], indent=2))


if __name__ == "__main__":
    main()
