"""Benchmark: a newcomer's first `make bench` on this machine with every cache empty, then the same again warm.

A fresh clone of --repo (default: this checkout's HEAD) in a temporary folder, run with caches of its own:
KQBENCH_CACHE (the built binaries), GOCACHE and GOMODCACHE (Go's build and module caches: every module is
downloaded again from the Go module proxy), XDG_DATA_HOME (the results store), pip without its cache (the
virtualenv's packages come from the package index again). It times `make bench` twice: `first` (venv,
Python packages, the builds the scenario needs, the run) and `warm` (everything built, only the run). Writes
--out: git sha, the exact command, the machine, each pass's seconds and exit code, the components the first
pass built (from the cache's build stamps, with each build's seconds) and whether any Kueue was among them.
The temporary folder (several GiB of caches) is removed at the end unless --keep.

    .venv/bin/python benchmarks/tooling/bench_first_run.py --out results/newcomer/first-run.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cloning
from harness.results import runs
from harness.toolchain import layout

RESULT_VERSION = 1
"""first-run.json format. 1: first format."""
PASS_TIMEOUT_SECONDS = 3 * 3600
"""A pass that takes longer is stopped (the first took 34 min here before only the scenario's builds)."""


def _fresh_environment(work: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("KQBENCH_", "VIRTUAL_ENV"))}
    cache = work / "cache"
    env.update({"KQBENCH_CACHE": str(cache / "kqbench"), "GOCACHE": str(cache / "go-build"),
                "GOMODCACHE": str(cache / "go-mod"), "XDG_CACHE_HOME": str(cache), "XDG_DATA_HOME": str(work / "data"),
                "PIP_NO_CACHE_DIR": "1"})
    return env


def _pass(name: str, clone: Path, env: dict[str, str], scenario: str, log: Path) -> dict:
    print(f"[{name}] make bench SCENARIO={scenario} (log: {log})", file=sys.stderr, flush=True)
    started = time.monotonic()
    with log.open("w") as sink:
        try:
            done = subprocess.run(["make", "bench", f"SCENARIO={scenario}"], cwd=clone, env=env, stdout=sink,
                                  stderr=subprocess.STDOUT, timeout=PASS_TIMEOUT_SECONDS)
            code = done.returncode
        except subprocess.TimeoutExpired:
            code = -1
    seconds = round(time.monotonic() - started, 1)
    print(f"[{name}] exit {code} in {seconds / 60:.1f} min", file=sys.stderr, flush=True)
    return {"seconds": seconds, "minutes": round(seconds / 60, 1), "exit_code": code}


def _built(cache: Path) -> dict[str, dict]:
    """Each component the cache holds, by name: its version and its build's seconds (its stamp)."""
    found = {}
    for path in sorted((cache / "bin").glob(f"*/{layout.STAMP}")):
        stamp = json.loads(path.read_text())
        found[f"{stamp['component']}_{stamp['version']}".replace(".", "_").replace("-", "_")] = {
            "component": stamp["component"], "version": stamp["version"],
            "build_seconds": round(float(stamp.get("build_seconds", 0.0)), 1)}
    return found


def _remove(folder: Path) -> None:
    """Go's module cache is read-only: make it writable before removing it."""
    for path in folder.rglob("*"):
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)
    shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[2],
                        help="The checkout to clone (its HEAD is what runs).")
    parser.add_argument("--scenario", default="quick", help="make bench's SCENARIO (default: quick).")
    parser.add_argument("--out", type=Path, default=Path("results/newcomer/first-run.json"))
    parser.add_argument("--keep", action="store_true", help="Keep the temporary folder (clone, caches, logs).")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kqbench-first-run-"))
    try:
        clone = cloning.fresh_clone(args.repo, work)
        env = _fresh_environment(work)
        started_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        first = _pass("first", clone, env, args.scenario, work / "first.log")
        built = _built(Path(env["KQBENCH_CACHE"]))
        warm = _pass("warm", clone, env, args.scenario, work / "warm.log")
        result = {
            "version": RESULT_VERSION, "git_sha": runs.git_sha(clone), "started_at": started_at,
            "command": " ".join([".venv/bin/python", "benchmarks/tooling/bench_first_run.py", *sys.argv[1:]]),
            "machine": runs.machine(), "scenario": args.scenario,
            "first": {**first, "built": built,
                      "built_names": ", ".join(f"{b['component']} {b['version']}" for b in built.values()),
                      "build_seconds": round(sum(b["build_seconds"] for b in built.values()), 1),
                      "build_minutes": round(sum(b["build_seconds"] for b in built.values()) / 60, 1),
                      "kueue_built": any(b["component"] == "kueue" for b in built.values())},
            "warm": warm,
            "logs": str(work) if args.keep else "removed with the temporary folder",
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.out}", file=sys.stderr)
        return 0 if first["exit_code"] == 0 and warm["exit_code"] == 0 else 1
    finally:
        if not args.keep:
            _remove(work)


if __name__ == "__main__":
    sys.exit(main())
