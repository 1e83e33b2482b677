"""Starting the reference scheduler as a process of its own, and stopping it (also on failure).

The harness orchestrates; the scheduler measures its own work in its own process, so that neither
disturbs the other's timing (pyperf's manager/worker split).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.clusters import processes, state
from harness.errors import KqbenchError
from harness.kube import apiservice, calling, kubeconfig, waiting
from scheduler import settings as scheduler_settings
from scheduler.publishing import strategies


@dataclass
class SchedulerProcess:
    process: subprocess.Popen
    metrics_url: str
    visibility_port: int
    log_path: Path

    def pid(self) -> int | None:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def metrics_text(self, timeout: float = 10.0) -> str:
        with calling.opened(self.metrics_url, timeout=timeout) as response:
            return response.read().decode()

    def stop(self, grace_seconds: float = 15.0) -> int:
        """SIGTERM, wait, then SIGKILL; returns the exit code."""
        return processes.terminate(self.process, grace_seconds)

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of its log (what a failure quotes)."""
        return processes.log_tail(self.log_path, lines)

    def kill(self) -> None:
        """Die without cleaning up (the restart test's crash)."""
        self.process.kill()
        self.process.wait(timeout=10)


def install(info: state.ClusterInfo, strategy: str, visibility_port: int) -> apiservice.ServingFiles:
    """CRDs and serving certificates; the visibility APIService only for strategies that serve the API
    (registered without a server behind it, kube-apiserver would keep probing a dead endpoint)."""
    creds = kubeconfig.load(info.kubeconfig)
    apiservice.install_crds(creds)
    files = serving_files(info)
    if strategies.get(strategy).visibility_api:
        apiservice.register_visibility(creds, files, visibility_port)
    return files


def serving_files(info: state.ClusterInfo) -> apiservice.ServingFiles:
    """The visibility server's certificate and key for this cluster (made once)."""
    return apiservice.ensure_serving_certs(state.state_root() / "pki" / info.name)


MODULE_ARGS = ("-m", "scheduler")


def command_of(settings: scheduler_settings.SchedulerSettings) -> list[str]:
    """The command line that runs the reference scheduler with these settings: all of them as one record."""
    return [sys.executable, *MODULE_ARGS, scheduler_settings.RECORD_FLAG, scheduler_settings.to_record(settings)]


def is_scheduler_on(argv: list[str], kubeconfig_path: str) -> bool:
    """Whether a command line (as `command_of` writes it) runs the reference scheduler on this kubeconfig."""
    pairs = list(zip(argv, argv[1:]))
    if MODULE_ARGS not in pairs:
        return False
    for flag, record in pairs:
        if flag == scheduler_settings.RECORD_FLAG:
            # only the kubeconfig is read: a scheduler started by another version of this code, whose
            # record names settings this one does not know, is still found
            try:
                found = json.loads(record)
            except ValueError:
                return False
            return isinstance(found, dict) and found.get("kubeconfig") == kubeconfig_path
    return False


def running_on(info: state.ClusterInfo) -> list[int]:
    """Pids of live reference schedulers on this cluster, found by command line as `kqbench cluster down`
    finds a cluster's processes (whoever started them)."""
    return [process.pid for process in processes.find_by_path(info.kubeconfig)
            if is_scheduler_on(process.info.get("cmdline") or [], info.kubeconfig)]


def launch(settings: scheduler_settings.SchedulerSettings, log_path: Path,
           ready_timeout: float = 60.0) -> SchedulerProcess:
    """Start `python -m scheduler` with these settings, wait until /readyz answers (needs a metrics port).
    The scheduler stops by itself when this process dies, however it dies (scheduler.parentwatching).
    Its one caller is harness.implementations.reference, which makes the settings from a scenario section."""
    if not settings.metrics_port:
        raise KqbenchError("the scheduler needs a metrics port: its readiness is read from /readyz")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    settings = dataclasses.replace(settings, parent_pid=os.getpid())
    command = command_of(settings)
    with log_path.open("a") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ))
    base = f"http://{scheduler_settings.BIND}:{settings.metrics_port}"
    handle = SchedulerProcess(process, f"{base}/metrics", settings.visibility_port, log_path)

    def ready() -> bool:
        if not handle.alive():
            tail = log_path.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
            raise KqbenchError(f"scheduler exited at start: {tail[0]} (log: {log_path})")
        try:
            status, _ = calling.call(f"{base}/readyz", timeout=2)
        except OSError:  # not listening yet
            return False
        return 200 <= status < 300  # 503 while the informers list

    try:
        waiting.poll(ready, ready_timeout, 0.3,
                     lambda: f"scheduler did not answer on /readyz within {ready_timeout:.0f}s (log: {log_path})")
    except BaseException:
        handle.stop()
        raise
    return handle


def log_path_of(info: state.ClusterInfo, log_dir: Path | None = None) -> Path:
    return (log_dir or state.state_root() / "logs") / f"scheduler-{info.name}.log"
