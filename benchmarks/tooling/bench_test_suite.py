"""Benchmark: the README's test command (`make test`) or the nightly tier (`make test-nightly`), as CI runs it.

A fresh clone of --repo (default: this checkout's HEAD) in a temporary folder, beside the team's shared
folder as CI sees it, with this machine's caches (built binaries, Go and pip caches: CI keeps them between
runs on one machine). It times the make target, counts what pytest printed (passed, skipped, failed), and
keeps the slowest tests and the seconds per test file from pytest's JUnit XML, so a README can show
how long the suite takes and which files the time goes to. Writes --out (JSON): git sha, the exact
command, the machine, the target, seconds and exit code, the counts, each failure's message, the slowest
tests, seconds by file.

    .venv/bin/python benchmarks/tooling/bench_test_suite.py --target test --out results/testsuite/test.json
    .venv/bin/python benchmarks/tooling/bench_test_suite.py --target test-nightly --out results/testsuite/test-nightly.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path

import cloning
from harness.results import runs

RESULT_VERSION = 1
"""test-suite JSON format. 1: first format."""
TARGETS = ("test", "test-nightly")
TIMEOUT_SECONDS = 2 * 3600
"""CI stops a job at 90 min; a pass twice that long is stopped here too."""
SLOWEST = 25
FAILURE_CHARACTERS = 4000
"""Of each failure's message and traceback: the assertion and its context, not the whole log."""
_COUNT = re.compile(r"(\d+) (passed|skipped|failed|errors?|deselected|xfailed|xpassed)\b")


def counts_of(last_line: str) -> dict[str, int]:
    """pytest's closing line (`2229 passed, 37 skipped, 3 warnings in 2250.12s`) as counts by outcome."""
    found = {outcome.rstrip("s") if outcome.startswith("error") else outcome: int(n)
             for n, outcome in _COUNT.findall(last_line)}
    return {outcome: found.get(outcome, 0) for outcome in ("passed", "skipped", "failed", "error", "deselected")}


def failures_of(junit: Path) -> list[dict]:
    """Each failed or erroring test case with the start of pytest's message, so a red run says why."""
    found = []
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        for outcome in ("failure", "error"):
            for element in case.findall(outcome):
                text = (element.get("message") or "") + "\n" + (element.text or "")
                found.append({"test": f"{case.get('classname')}::{case.get('name')}", "outcome": outcome,
                              "message": text.strip()[:FAILURE_CHARACTERS]})
    return found


def times_of(junit: Path) -> tuple[list[dict], dict[str, float]]:
    """The slowest test cases and the seconds per test file, from a pytest JUnit XML report."""
    cases, by_file = [], defaultdict(float)
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        seconds = float(case.get("time", 0.0))
        module = case.get("classname", "").split(".")
        # classname is the dotted module (and class): tests.integration.test_tas[.TestX]
        path = "/".join(part for part in module if not part[:1].isupper()) + ".py"
        by_file[path] += seconds
        cases.append({"test": f"{path}::{case.get('name')}", "seconds": round(seconds, 1)})
    cases.sort(key=lambda c: -c["seconds"])
    return cases[:SLOWEST], {path: round(s, 1) for path, s in sorted(by_file.items(), key=lambda item: -item[1])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[2],
                        help="The checkout to clone (its HEAD is what runs).")
    parser.add_argument("--target", choices=TARGETS, default="test", help="The make target (default: test).")
    parser.add_argument("--out", type=Path, required=True, help="The JSON file to write.")
    parser.add_argument("--keep", action="store_true", help="Keep the temporary folder (clone and log).")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kqbench-test-suite-"))
    try:
        clone = cloning.fresh_clone(args.repo, work)
        junit, log = work / "junit.xml", work / "make.log"
        env = {**os.environ, "PYTEST_ADDOPTS": f"--junitxml={junit}"}
        print(f"make {args.target} in {clone} (log: {log})", file=sys.stderr, flush=True)
        started_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        started = time.monotonic()
        with log.open("w") as sink:
            try:
                code = subprocess.run(["make", args.target], cwd=clone, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                      timeout=TIMEOUT_SECONDS).returncode
            except subprocess.TimeoutExpired:
                code = -1
        seconds = round(time.monotonic() - started, 1)
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
        closing = next((line for line in reversed(lines) if " in " in line and _COUNT.search(line)), "")
        slowest, by_file = times_of(junit) if junit.is_file() else ([], {})
        failures = failures_of(junit) if junit.is_file() else []
        result = {
            "version": RESULT_VERSION, "git_sha": runs.git_sha(clone), "started_at": started_at,
            "command": " ".join([".venv/bin/python", "benchmarks/tooling/bench_test_suite.py", *sys.argv[1:]]),
            "machine": runs.machine(), "target": args.target, "make_command": f"make {args.target}",
            "seconds": seconds, "minutes": round(seconds / 60, 1), "exit_code": code,
            "pytest_seconds": round(sum(by_file.values()), 1), "pytest_minutes": round(sum(by_file.values()) / 60, 1),
            "counts": counts_of(closing), "closing_line": closing, "failures": failures, "slowest": slowest, "seconds_by_file": by_file,
            "log": str(log) if args.keep else "removed with the temporary folder",
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"exit {code} in {seconds / 60:.1f} min: {closing}; wrote {args.out}", file=sys.stderr)
        return 0 if code == 0 else 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
