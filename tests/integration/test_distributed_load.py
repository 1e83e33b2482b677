"""Locust across processes started the way users on other hosts start them, and the in-cluster manifests.

The master listens on 127.0.0.2 (not the default address), the workers are separate `kqbench load
--worker` processes that are given nothing but the master's address; the master's tables must hold
what each of them sent. The manifests under deploy/kubernetes/ are applied with server-side dry-run
to a real apiserver.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.kube import kubeconfig
from loadtests import running, settings as load_settings
from scheduler import listening as ports

from .conftest import kwok_cluster

pytestmark = pytest.mark.integration

MASTER_HOST = "127.0.0.2"
MANIFESTS = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"


@pytest.fixture(scope="module")
def small_cluster(binaries, state_dir):
    """A 1-node kwok cluster; stopped after the module, also on failure."""
    with kwok_cluster("dist") as info:
        yield info


class Processes:
    """`kqbench` processes of one test, each in its own group; whatever is left is killed at the end."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.started = folder, []

    def start(self, label: str, *args: str) -> subprocess.Popen:
        log = open(self.folder / f"{label}.log", "wb")
        process = subprocess.Popen([sys.executable, "-m", "harness", *args], stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        self.started.append(process)
        return process

    def log(self, label: str) -> str:
        return (self.folder / f"{label}.log").read_text(errors="replace")

    def stop_all(self) -> None:
        for process in self.started:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            process.wait(timeout=10)


@pytest.fixture
def processes(tmp_path):
    started = Processes(tmp_path)
    try:
        yield started
    finally:
        started.stop_all()


def listening(host: str, port: int, process: subprocess.Popen, seconds: float = 30.0) -> bool:
    """Whether something accepts connections on host:port within `seconds` (while `process` lives)."""
    for _ in range(int(seconds / 0.2)):
        if process.poll() is not None:
            return False
        with socket.socket() as probe:
            if probe.connect_ex((host, port)) == 0:
                return True
        time.sleep(0.2)
    return False


def worker_args(port: int) -> list[str]:
    # Only the master's address: no kubeconfig, no cluster name, no settings.
    return ["load", "--worker", "--master-host", MASTER_HOST, "--master-port", str(port), "--worker-timeout", "60"]


def test_a_master_on_127_0_0_2_gathers_the_requests_of_two_workers_started_elsewhere(small_cluster, processes, tmp_path):
    port = ports.pick_free(1, MASTER_HOST)[0]
    out = tmp_path / "run"
    master = processes.start("master", "load", "--master", "--expect-workers", "2", "--master-bind", f"{MASTER_HOST}:{port}",
                             "--name", small_cluster.name, "--user-classes", "Bystander=1", "--users", "4",
                             "--spawn-rate", "4", "--run-time", "8s", "--worker-timeout", "60", "--out", str(out))
    workers = [processes.start(f"worker-{i}", *worker_args(port)) for i in range(2)]
    assert master.wait(timeout=120) == 0, processes.log("master")
    for index, worker in enumerate(workers):
        assert worker.wait(timeout=30) == 0, processes.log(f"worker-{index}")
        assert "served 1 master run" in processes.log(f"worker-{index}")

    result = running.read_result(out)
    assert result.summary["remote_workers"] == 2 and result.summary["workers"] == 0
    assert len(result.workers) == 2 and result.workers["worker"].nunique() == 2
    assert (result.workers["requests"] > 0).all(), result.workers  # both workers sent requests
    assert (result.workers["cpu_seconds"] > 0).all()
    # The master's tables are the workers' requests: nothing lost, nothing from elsewhere.
    assert int(result.workers["requests"].sum()) == int(result.totals["requests"].sum()) == result.summary["requests"]
    assert int(result.totals["failures"].sum()) == 0, result.failures


def test_workers_that_do_not_come_fail_the_run_with_one_line_that_says_how_to_start_them(small_cluster, processes):
    port = ports.pick_free(1, MASTER_HOST)[0]
    master = processes.start("master", "load", "--master", "--expect-workers", "2", "--master-bind", f"{MASTER_HOST}:{port}",
                             "--name", small_cluster.name, "--user-classes", "Bystander=1", "--users", "2",
                             "--run-time", "5s", "--worker-timeout", "8")
    assert listening(MASTER_HOST, port, master), processes.log("master")
    with socket.socket() as probe:  # bound to 127.0.0.2 only: the default address has nothing there
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    worker = processes.start("worker", *worker_args(port))
    assert master.wait(timeout=90) == 1
    errors = [line for line in processes.log("master").splitlines() if line.startswith("Error:")]
    assert errors == [f"Error: 1 of 2 workers joined the master at {MASTER_HOST}:{port} within 8s: start them with "
                      f"`kqbench load --worker --master-host {MASTER_HOST} --master-port {port}` on hosts that reach "
                      f"{MASTER_HOST}:{port}"], processes.log("master")
    assert worker.wait(timeout=30) == 0  # the one that came was sent home, not left waiting for heartbeats


def test_workers_rejoin_for_the_next_phase_and_end_after_the_last(small_cluster, processes, tmp_path):
    port = ports.pick_free(1, MASTER_HOST)[0]
    worker = processes.start("worker", *worker_args(port)[:-1], "15")
    target = kubeconfig.load_target(small_cluster.kubeconfig, allow_remote=False)
    plan = load_settings.RunPlan(
        settings=load_settings.LoadSettings(target=target), locustfile=running.BUILTIN_LOCUSTFILE,
        user_weights={"Bystander": 1}, users=2, spawn_rate=2.0, run_time=4.0, remote_workers=1,
        master_bind=MASTER_HOST, master_port=port, worker_start_timeout=60.0, workers_rejoin=True)
    phases = [running.run(plan, tmp_path / f"phase-{i}") for i in range(2)]
    for result in phases:
        assert len(result.workers) == 1 and int(result.workers["requests"].sum()) == result.summary["requests"] > 0
    assert phases[0].workers["worker"][0] != phases[1].workers["worker"][0]  # a new Locust worker per phase
    # asked back after the last phase too, it waits its --worker-timeout for a next master, then ends
    assert worker.wait(timeout=60) == 0, processes.log("worker")
    assert "served 2 master run" in processes.log("worker")


def kubectl(binaries, info, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(binaries.kubectl), "--kubeconfig", info.kubeconfig, *args], capture_output=True,
                          text=True, timeout=60)


def test_the_manifests_pass_server_side_dry_run(binaries, small_cluster, tmp_path):
    namespaces = str(MANIFESTS / "00-namespaces.yaml")
    checked = kubectl(binaries, small_cluster, "apply", "--server-side", "--dry-run=server", "-f", namespaces)
    assert checked.returncode == 0, checked.stderr
    # Namespaced objects are checked inside their namespace, so the namespaces exist for real first.
    created = kubectl(binaries, small_cluster, "apply", "--server-side", "-f", namespaces)
    assert created.returncode == 0, created.stderr
    result = kubectl(binaries, small_cluster, "apply", "--server-side", "--dry-run=server", "-f", str(MANIFESTS))
    assert result.returncode == 0, result.stderr
    for kind in ("job.batch/kqbench-master", "deployment.apps/kqbench-worker", "service/kqbench-master",
                 "networkpolicy.networking.k8s.io/kqbench-master", "serviceaccount/kqbench-load",
                 "configmap/kqbench-kubeconfig", "role.rbac.authorization.k8s.io/kqbench-churn",
                 "clusterrole.rbac.authorization.k8s.io/kqbench-load"):
        assert f"{kind} serverside-applied (server dry run)" in result.stdout, result.stdout
    left = kubectl(binaries, small_cluster, "get", "jobs,deployments,serviceaccounts", "-n", "kqbench", "-o", "name")
    assert "kqbench-master" not in left.stdout and "kqbench-load" not in left.stdout  # a dry run creates nothing

    # the dry run does judge: a manifest the apiserver refuses fails it
    broken = tmp_path / "broken.yaml"
    broken.write_text((MANIFESTS / "40-workers.yaml").read_text().replace("replicas: 2", "replicas: -2"))
    refused = kubectl(binaries, small_cluster, "apply", "--server-side", "--dry-run=server", "-f", str(broken))
    assert refused.returncode != 0 and "replicas" in refused.stderr
