"""Starting the reference scheduler as a process of its own, and stopping it (also on failure).

The harness orchestrates; the scheduler measures its own work in its own process, so that neither
disturbs the other's timing (pyperf's manager/worker split).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from harness import apiservice, kubeconfig, waiting
from harness.clusters import processes, state
from harness.errors import KqbenchError
from scheduler import listening, settings as scheduler_settings
from scheduler.publishing import strategies


def metric_sum(text: str, name: str, **labels: str) -> float:
    """Sum of a metric's samples whose labels include `labels` (from Prometheus text)."""
    return sum(sample.value for family in text_string_to_metric_families(text) for sample in family.samples
               if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()))


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
        with urllib.request.urlopen(self.metrics_url, timeout=timeout) as response:
            return response.read().decode()

    def stop(self, grace_seconds: float = 15.0) -> int:
        """SIGTERM, wait, then SIGKILL; returns the exit code."""
        return processes.terminate(self.process, grace_seconds)

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


def command_of(settings: scheduler_settings.SchedulerSettings, extra_args: tuple[str, ...] = ()) -> list[str]:
    """The command line that runs the reference scheduler with these settings."""
    return [sys.executable, *MODULE_ARGS, *scheduler_settings.to_args(settings), *extra_args]


def is_scheduler_on(argv: list[str], kubeconfig_path: str) -> bool:
    """Whether a command line (as `command_of` writes it) runs the reference scheduler on this kubeconfig."""
    pairs = list(zip(argv, argv[1:]))
    return MODULE_ARGS in pairs and (("--kubeconfig", kubeconfig_path) in pairs
                                     or f"--kubeconfig={kubeconfig_path}" in argv)


def running_on(info: state.ClusterInfo) -> list[int]:
    """Pids of live reference schedulers on this cluster, found by command line as `kqbench cluster down`
    finds a cluster's processes (whoever started them)."""
    return [process.pid for process in processes.find_by_path(info.kubeconfig)
            if is_scheduler_on(process.info.get("cmdline") or [], info.kubeconfig)]


def launch(settings: scheduler_settings.SchedulerSettings, log_path: Path, ready_timeout: float = 60.0,
           extra_args: tuple[str, ...] = ()) -> SchedulerProcess:
    """Start `python -m scheduler` with these settings, wait until /readyz answers (needs a metrics port).
    The scheduler stops by itself when this process dies, however it dies (scheduler.parentwatching)."""
    if not settings.metrics_port:
        raise KqbenchError("the scheduler needs a metrics port: its readiness is read from /readyz")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    settings = dataclasses.replace(settings, parent_pid=os.getpid())
    command = command_of(settings, extra_args)
    with log_path.open("a") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ))
    base = f"http://{scheduler_settings.BIND}:{settings.metrics_port}"
    handle = SchedulerProcess(process, f"{base}/metrics", settings.visibility_port, log_path)

    def ready() -> bool:
        if not handle.alive():
            tail = log_path.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
            raise KqbenchError(f"scheduler exited at start: {tail[0]} (log: {log_path})")
        try:
            with urllib.request.urlopen(f"{base}/readyz", timeout=2):
                return True
        except OSError:  # also HTTPError 503 while the informers list
            return False

    try:
        waiting.poll(ready, ready_timeout, 0.3,
                     lambda: f"scheduler did not answer on /readyz within {ready_timeout:.0f}s (log: {log_path})")
    except BaseException:
        handle.stop()
        raise
    return handle


def log_path_of(info: state.ClusterInfo, log_dir: Path | None = None) -> Path:
    return (log_dir or state.state_root() / "logs") / f"scheduler-{info.name}.log"


def start(info: state.ClusterInfo, log_dir: Path | None = None, *, visibility_port: int = 0, metrics_port: int = 0,
          register: bool = True, ready_timeout: float = 60.0, extra_args: tuple[str, ...] = (),
          **fields) -> SchedulerProcess:
    """Install the API pieces and launch `python -m scheduler` with SchedulerSettings(**fields), the
    process's own defaults for the rest. Ports 0: free ones; `register` False keeps the APIService as
    it is (a second scheduler behind the same port); `extra_args` override. The one way the reference
    scheduler starts: harness.implementations.reference starts a scenario's through it."""
    settings = scheduler_settings.SchedulerSettings(kubeconfig=info.kubeconfig, **fields)
    free = iter(port for port in listening.pick_free(3) if port not in (visibility_port, metrics_port))
    visibility_port = visibility_port or next(free)
    metrics_port = metrics_port or next(free)
    files = install(info, settings.strategy, visibility_port) if register else serving_files(info)
    settings = dataclasses.replace(settings, visibility_port=visibility_port, metrics_port=metrics_port,
                                   tls_cert=str(files.cert), tls_key=str(files.key))
    return launch(settings, log_path_of(info, log_dir), ready_timeout, extra_args)
