"""The `faults` scenario scaled down: one of each fault during 240 s of churn on a 30-node cluster (kill -9 the
scheduler, restart kube-apiserver, kill -9 etcd, SIGSTOP kwok-controller). Each must be recovered
from within its bound (apiserver ready, the scheduler admitting, positions served), the invariants
read from the API must hold right after each recovery, and no process may outlive the run, also the
ones the faults started again. Faults are planned 50 s apart: the invariant check after one delays the
next (once by a minute here), and a fault planned after the phase would not happen."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import psutil
import pytest

from harness.invariants import checking, reading
from tests.integration.conftest import run_cli

pytestmark = [pytest.mark.integration, pytest.mark.nightly]  # minutes each: the nightly tier (make test-nightly)

RECOVERY_BOUND = 45.0
"""Seconds from a component's return until every probe answers: a restarted scheduler lists its
Workloads again and admits at the next finish, a restarted etcd replays its WAL."""
KINDS = ("kill-scheduler", "restart-apiserver", "kill-etcd", "pause-kwok")
FAULTS = "[" + ", ".join(
    f"{{kind: {kind}, phase: churn, at_seconds: {10 + 50 * i}, down_seconds: 3, recovery_timeout_seconds: {RECOVERY_BOUND:.0f}}}"
    for i, kind in enumerate(KINDS)) + "]"
SMALL = ("--set", "cluster.nodes=30", "--set", "phases.churn.seconds=240", "--set", "phases.drain.timeout_seconds=120",
         "--set", f"faults={FAULTS}")


def _processes_naming(folder: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline", "environ"]):
        try:
            text = " ".join(process.info["cmdline"] or []) + " ".join((process.info["environ"] or {}).values())
        except (psutil.Error, TypeError):
            continue
        if str(folder) in text:
            found.append(process)
    return found


@pytest.fixture(scope="module")
def faults_run(binaries, state_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    result = run_cli("run", "faults", "--out", str(out), "--no-report", *SMALL, timeout=1200)
    folders = [p for p in out.iterdir() if p.is_dir()]
    assert folders, result.stderr[-3000:]
    folder = folders[0]
    (folder / "stderr.txt").write_text(result.stderr)
    assert result.returncode == 0, result.stderr[-3000:]
    return folder


def _scheduler_logs(folder: Path) -> str:
    return "\n".join(f"--- {log.name}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-20:])
                     for log in sorted(folder.rglob("scheduler-after-*.log")))


def test_each_fault_was_injected_and_recovered_within_its_bound(faults_run):
    table = pd.read_parquet(faults_run / "tables" / "faults.parquet")
    assert list(table["kind"]) == list(KINDS), table.to_dict("records")
    for row in table.to_dict("records"):
        assert not row["error"], row
        assert row["recovered"], (row, _scheduler_logs(faults_run))
        assert 0 <= row["recovery_seconds"] <= RECOVERY_BOUND, row
        assert row["down_seconds"] >= 3.0, row
        assert row["admitting_seconds"] is not None and row["positions_seconds"] is not None, row


def test_invariants_held_right_after_each_recovery(faults_run):
    table = pd.read_parquet(faults_run / "tables" / "invariants.parquet")
    after = {f"churn/after-{kind}" for kind in KINDS}
    assert after <= set(table["phase"]), sorted(set(table["phase"]))
    checked = table[table["phase"].isin(after)]
    for phase in after:  # every check was read and judged after every fault
        assert set(checked[checked["phase"] == phase]["check"]) == set(checking.CHECKS), phase
    bad = checked[checked["status"].isin([reading.FAILED, reading.UNREAD])]
    assert bad.empty, bad.to_dict("records")


def test_the_run_finished_and_left_no_process(faults_run, state_dir):
    record = json.loads((faults_run / "run.json").read_text())
    assert record["status"] == "ok" and [c["status"] for c in record["cases"]] == ["ok"]
    left = _processes_naming(state_dir)
    assert not left, [p.info["cmdline"] for p in left]


def test_the_summary_carries_each_faults_recovery(faults_run):
    summary = json.loads((faults_run / "summary.json").read_text())["metrics"]
    for kind in KINDS:
        assert any(key.startswith(f"faults.recovery_seconds[{kind}]") for key in summary), sorted(summary)
