"""The TAS object-size benchmark, scaled down, on a real cluster: etcd's request limit lowered to 256 KiB so
that 20,000 cloud-named hosts pass it. A Workload placing 2,000 pods one per host is admitted and stored
with every host named; one placing 20,000 is refused by etcd, and the reference scheduler keeps retrying it
without a condition, as Kueue's scheduler requeues a nominated Workload whose admission write failed
(pkg/scheduler/scheduler.go, requeueAndUpdate: no status update for a nominated entry)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import leftover_processes

pytestmark = [pytest.mark.integration, pytest.mark.nightly]  # minutes each: the nightly tier (make test-nightly)

ROOT = Path(__file__).resolve().parents[2]


def test_an_assignment_past_etcds_limit_is_refused_and_retried_and_one_within_it_is_stored(binaries, state_dir, tmp_path):
    out = tmp_path / "object-size"
    try:
        run = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "bench_tas_object_size.py"), "--nodes", "20000",
             "--pods", "2000,20000", "--node-names", "cloud", "--implementation", "reference",
             "--etcd-max-request-bytes", "262144", "--admit-seconds", "30", "--watch-seconds", "10", "--out", str(out)],
            capture_output=True, text=True, timeout=600, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert run.returncode == 0, run.stderr[-3000:]
    finally:
        assert leftover_processes("tas-size-ref") == [], "the benchmark's cluster outlived it"
    stored, refused = json.loads((out / "reference.json").read_text())["pod_sets"]
    assert stored["admitted"] and stored["hosts_in_assignment"] == 2000
    assert 2000 * 12 < stored["etcd_bytes"] < 262144  # every host named, a dozen bytes or more each
    assert not refused["admitted"] and refused["hosts_in_assignment"] == 0
    assert refused["status_writes_by_code"].get("500", 0) >= 2  # refused by etcd, and tried again
    assert refused["status_writes_by_code_watched"].get("500", 0) >= 1  # still trying after the bound
    assert not any(c["type"] == "QuotaReserved" and c["status"] == "True" for c in refused["conditions"])
    summary = json.loads((out / "summary.json").read_text())["summary"]["reference"]
    assert summary["largest_admitted_pods"] == 2000 and summary["first_not_admitted"]["pods"] == 20000
