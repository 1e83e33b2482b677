"""Faults: the recovery clock (injected), and the injector on real processes standing in for cluster
components (pid files in a work folder, as kwokctl writes them; nothing else of a cluster)."""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

import psutil
import pytest

from harness.clusters import state
from harness.faults import recovering, running
from harness.scenarios import sections

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]


def test_recovery_is_timed_per_probe_from_the_injected_clock():
    ticks = itertools.count()
    answers = {"apiserver": iter([False, True]), "admitting": iter([False, False, False, True])}

    def probe(name):
        def answer():
            value = next(answers[name])
            if value is None:
                raise OSError("refused")
            return value
        return answer

    found = recovering.time_to_recover({name: probe(name) for name in answers}, timeout=100,
                                       clock=lambda: float(next(ticks)), sleep=lambda s: None)
    assert found["apiserver"] is not None and found["admitting"] > found["apiserver"]


def test_a_probe_that_never_answers_is_none_after_the_timeout_and_an_error_is_not_yet():
    ticks = itertools.count()

    def refused():
        raise OSError("connection refused")

    found = recovering.time_to_recover({"apiserver": refused, "positions": lambda: True}, timeout=5,
                                       clock=lambda: float(next(ticks)), sleep=lambda s: None)
    assert found["apiserver"] is None and found["positions"] is not None


def test_a_record_is_recovered_only_when_every_probe_answered():
    record = recovering.FaultRecord("churn", "kill-etcd", 5.0, injected_at=100.0, back_at=103.0,
                                    recovery={"apiserver": 1.5, "admitting": 4.0})
    row = record.row()
    assert row["down_seconds"] == 3.0 and row["recovery_seconds"] == 4.0 and row["recovered"] is True
    record.recovery["positions"] = None
    assert record.row()["recovered"] is False and record.row()["recovery_seconds"] is None


@pytest.fixture
def cluster(tmp_path):
    """A work folder whose pid files name real (sleeping) processes, and a kubeconfig nobody answers."""
    workdir = tmp_path / "cluster"
    (workdir / "pids").mkdir(parents=True)
    started = []
    for component in ("etcd", "kwok-controller"):
        process = psutil.Popen(SLEEPER)
        started.append(process)
        (workdir / "pids" / f"{component}.pid").write_text(str(process.pid))
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                          "users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
                          "current-context: x\n")
    info = state.ClusterInfo(name="c", backend="kwok", kubeconfig=str(kubeconfig), apiserver_url="https://127.0.0.1:1",
                             workdir=str(workdir))
    try:
        yield info, started
    finally:
        for pid_file in (workdir / "pids").iterdir():
            try:
                psutil.Process(int(pid_file.read_text())).kill()
            except psutil.NoSuchProcess:
                pass
        for process in started:
            if process.poll() is None:
                process.kill()
            process.wait(10)


def _injector(info, tmp_path, *faults, checked=None):
    specs = [sections.FaultSpec(kind=kind, phase="churn", at_seconds=at, down_seconds=down, recovery_timeout_seconds=0.5)
             for kind, at, down in (f if len(f) == 3 else (*f, 0.2) for f in faults)]
    seen = checked if checked is not None else []
    targets = running.Targets(info, None, tmp_path / "out", watch_process=lambda c, p: seen.append((c, p)),
                              check_invariants=lambda label: seen.append(label), say=lambda line: None)
    return running.Injector("churn", specs, targets)


def test_etcd_killed_is_started_again_with_its_command_and_pid_file(cluster, tmp_path):
    info, started = cluster
    seen: list = []
    injector = _injector(info, tmp_path, ("kill-etcd", 0.0), checked=seen)
    injector.start()
    deadline = time.monotonic() + 30
    while not injector.records or injector.records[0].back_at is None:
        assert time.monotonic() < deadline, "the fault never completed"
        time.sleep(0.1)
    tables = injector.stop()
    [row] = tables[recovering.TABLE].to_dict("records")
    assert row["kind"] == "kill-etcd" and row["error"] == "" and row["down_seconds"] >= 0.2
    assert row["apiserver_seconds"] is None and row["recovered"] is False  # nobody answers at 127.0.0.1:1
    new_pid = int((Path(info.workdir) / "pids" / "etcd.pid").read_text())
    assert new_pid != started[0].pid and started[0].poll() is not None  # the first one is gone
    assert psutil.Process(new_pid).cmdline() == SLEEPER
    assert ("etcd", new_pid) in seen and "churn/after-kill-etcd" in seen


def test_a_paused_kwok_controller_is_continued_even_when_the_phase_ends_first(cluster, tmp_path):
    info, started = cluster
    # the phase ends while kwok-controller is stopped, and before the second fault's time
    injector = _injector(info, tmp_path, ("pause-kwok", 0.0, 60.0), ("kill-etcd", 60.0))
    injector.start()
    deadline = time.monotonic() + 30
    while started[1].status() != psutil.STATUS_STOPPED:
        assert time.monotonic() < deadline, "kwok-controller was never stopped"
        time.sleep(0.05)
    frame = injector.stop()[recovering.TABLE]
    assert started[1].status() != psutil.STATUS_STOPPED
    assert list(frame["kind"]) == ["pause-kwok", "kill-etcd"]
    assert frame["error"].iloc[1] == "the phase ended before the fault's time"


def test_a_fault_without_its_target_is_an_error_row_not_a_failed_phase(cluster, tmp_path):
    info, _ = cluster
    injector = _injector(info, tmp_path, ("kill-scheduler", 0.0), ("restart-apiserver", 0.0))
    injector.start()
    frame = injector.stop()[recovering.TABLE]
    assert "runs no local scheduler" in frame["error"].iloc[0] and "no kube-apiserver pid" in frame["error"].iloc[1]


def test_the_load_seen_in_a_faults_window_is_summed_from_the_load_history():
    import pandas as pd

    from harness.drivers import faults

    record = recovering.FaultRecord("churn", "kill-etcd", 20.0, injected_at=1000.0, back_at=1003.0, injected_in_phase=20.5,
                                    recovery={"apiserver": 2.0, "admitting": 6.5})
    table = recovering.frame([record])
    table["case"] = "r0"
    assert recovering.window_of(table.to_dict("records")[0]) == (20.5, 20.5 + 3.0 + 6.5)
    load = pd.DataFrame({"case": "r0", "phase": ["churn"] * 4 + ["fill"], "t": [15.0, 25.0, 30.0, 40.0, 25.0],
                         "requests": [10, 10, 10, 10, 99], "failures": [0, 4, 1, 0, 50],
                         "p99_ms": [5.0, 900.0, 50.0, 5.0, 1.0]})
    metrics = {m.name: m.value for m in faults.DRIVER.metrics({"faults": table, "load_history": load}, "r0")}
    assert metrics["faults.client_errors[kill-etcd]"] == 5 and metrics["faults.window_p99_ms[kill-etcd]"] == 900.0
    assert metrics["faults.recovery_seconds[kill-etcd]"] == 6.5 and metrics["faults.unrecovered"] == 0


@pytest.mark.parametrize("strategy, probed", [("aggregated-indexed", True), ("status-field", False)])
def test_positions_are_probed_only_where_the_strategy_serves_them(tmp_path, strategy, probed):
    from harness.drivers import contract
    from harness.running import adapters
    from harness.scenarios import loading, sections

    scenario = loading.load("faults", [f"scheduler.strategy={strategy}"]).scenario
    info = state.ClusterInfo(name="c", backend="kwok", kubeconfig=str(tmp_path / "k"), apiserver_url="https://127.0.0.1:1")
    context = contract.PhaseContext(cluster=info, scenario=scenario, phase_name="churn", phase=scenario.phases["churn"],
                                    out_dir=tmp_path)
    injector = adapters.fault_injector(context, list(scenario.faults), lambda label: None)
    assert [f.kind for f in injector.faults] == ["kill-scheduler", "restart-apiserver", "kill-etcd", "pause-kwok"]
    expected = "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/cq-0/pendingworkloads?limit=1" if probed else None
    assert injector.targets.positions_path == expected
