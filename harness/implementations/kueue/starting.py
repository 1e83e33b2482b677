"""Starting Kueue's manager (cmd/kueue) as a local process against a cluster, and stopping it.

Ready means: /readyz of the manager answers 200 (its webhook server listens with the certificates,
which Kueue reports only after its rotator injected the CA into the CRDs) and kube-apiserver reports
the visibility APIServices Available (it reached the visibility server through the ExternalName
Service). The manager's command line names the cluster's kubeconfig, which lives in the cluster's
work folder, so `kqbench cluster down` also stops a manager a crashed run left behind.
"""

from __future__ import annotations

import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness import apiservice, kubeconfig, rest
from harness.clusters import ports as portpicking, state
from harness.errors import KqbenchError
from harness.implementations import registry
from harness.implementations.kueue import installing, manifests
from harness.toolchain import building, layout

if TYPE_CHECKING:  # models validates implementation names against harness.implementations.registry
    from harness.scenarios import models

LOG_TAIL_LINES = 15
PROBE_PATH = "/apis/visibility.kueue.x-k8s.io/v1beta2"


@dataclass
class KueueProcess:
    """A running Kueue manager; `metrics_url` is served over HTTPS to authenticated clients (Kueue's default)."""

    process: subprocess.Popen
    ports: manifests.Ports
    log_path: Path
    metrics_token: str = ""

    @property
    def metrics_url(self) -> str:
        return f"https://127.0.0.1:{self.ports.metrics}/metrics"

    @property
    def readyz_url(self) -> str:
        return f"http://127.0.0.1:{self.ports.health}/readyz"

    def pid(self) -> int | None:
        return self.process.pid

    def metrics_text(self, timeout: float = 10.0) -> str:
        """Kueue's Prometheus metrics (its serving certificate is self-signed: loopback, not verified)."""
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        request = urllib.request.Request(self.metrics_url, headers={"Authorization": f"Bearer {self.metrics_token}"})
        with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
            return response.read().decode()

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        with self.log_path.open(errors="replace") as handle:
            return "".join(deque(handle, maxlen=lines)).rstrip()

    def stop(self, grace_seconds: float = 15.0) -> None:
        """SIGTERM, wait, then SIGKILL; safe to call twice."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=grace_seconds)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def pick_ports() -> manifests.Ports:
    webhook, visibility, metrics, health = portpicking.pick_free(4)
    return manifests.Ports(webhook=webhook, visibility=visibility, metrics=metrics, health=health)


def install_api(info: state.ClusterInfo, webhook_port: int = 0, kueue: layout.KueueBuild | None = None) -> None:
    """Only Kueue's CRDs (for queues and Workloads created before the manager starts)."""
    kueue = kueue or building.locate_kueue()
    installing.install_crds(kubeconfig.load(info.kubeconfig), kueue, webhook_port or portpicking.pick_free(1)[0])


def start(info: state.ClusterInfo, qps: float | None = 50.0, burst: int = 100, log_dir: Path | None = None,
          ready_timeout: float = 120.0, kueue: layout.KueueBuild | None = None,
          ports: manifests.Ports | None = None) -> KueueProcess:
    """Install Kueue's API on the cluster, start its manager, and wait until it serves; stop it on failure."""
    kueue = kueue or building.locate_kueue()
    ports = ports or pick_ports()
    creds = kubeconfig.load(info.kubeconfig)
    files = installing.files_for(info)
    # CRDs first: the conversion webhook's port is the one this manager will listen on.
    installing.install_crds(creds, kueue, ports.webhook)
    installing.install_objects(creds, kueue, files, ports)
    settings = manifests.ManagerSettings(ports=ports, cert_dir=str(files.cert_dir), qps=qps, burst=burst)
    config = installing.write_config(kueue, files, settings)
    token = installing.metrics_token(creds)
    log_dir = log_dir or state.state_root() / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"kueue-{info.name}.log"
    # --kubeconfig as a flag: the visibility server's delegated authentication reads only the flag.
    command = [str(kueue.manager), f"--config={config}", f"--kubeconfig={info.kubeconfig}"]
    with log_path.open("a") as log:
        log.write(f"$ {' '.join(command)}\n")
        log.flush()
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    handle = KueueProcess(process, ports, log_path, token)
    try:
        _wait_ready(handle, ready_timeout)
        apiservice.wait_available(creds, timeout=max(10.0, ready_timeout / 2))
        _wait_proxied(creds, handle, timeout=max(10.0, ready_timeout / 2))
    except BaseException as error:
        handle.stop()
        if isinstance(error, KqbenchError):
            raise KqbenchError(f"{error}\n--- last lines of {log_path} ---\n{handle.log_tail()}") from None
        raise
    return handle


def _wait_ready(handle: KueueProcess, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    while time.monotonic() < deadline:
        if not handle.alive():
            raise KqbenchError(f"Kueue's manager exited at start with code {handle.process.returncode}")
        try:
            with urllib.request.urlopen(handle.readyz_url, timeout=2):
                return
        except urllib.error.HTTPError as error:
            last = f"{error.code} {error.read()[-200:].decode(errors='replace').strip()}"
        except OSError as error:
            last = str(error)
        time.sleep(0.5)
    raise KqbenchError(f"Kueue's manager was not ready within {timeout:.0f}s (last /readyz: {last})")


def _wait_proxied(creds, handle: KueueProcess, timeout: float) -> None:
    """One visibility request through kube-apiserver: Available alone does not prove the proxy trusts the server."""
    path = f"{PROBE_PATH}/clusterqueues/kqbench-readiness-probe/pendingworkloads"
    deadline = time.monotonic() + timeout
    status, body = 0, b""
    while time.monotonic() < deadline and handle.alive():
        status, body = rest.get(creds, path)
        if status in (200, 404):  # 404: Kueue answered for an unknown ClusterQueue
            return
        time.sleep(0.5)
    raise KqbenchError(f"kube-apiserver could not reach Kueue's visibility server ({status}: "
                       f"{body[:300].decode(errors='replace').strip()})")


@dataclass(slots=True)
class SchedulerHandle:
    """KueueProcess behind the runner's SchedulerHandle protocol."""

    process: KueueProcess

    def pid(self) -> int | None:
        return self.process.pid()

    def metrics_url(self) -> str | None:
        return self.process.metrics_url

    def metrics_endpoint(self) -> registry.MetricsEndpoint | None:
        # Kueue's metrics need a bearer token (the starter made a reader ServiceAccount) and keep
        # Kueue's own names, so they land as their own source beside the apiserver's.
        return registry.MetricsEndpoint("kueue", self.process.metrics_url, self.process.metrics_token)

    def alive(self) -> bool:
        return self.process.alive()

    def stop(self) -> None:
        self.process.stop()


def start_scheduler(cluster: state.ClusterInfo, section: models.SchedulerSection, log_dir: Path) -> SchedulerHandle:
    """The runner's starter: Kueue with the scenario's client limits (strategy does not apply: Kueue
    publishes positions only through its visibility API, copied and sorted per request)."""
    qps = None if section.no_client_limit else section.qps
    return SchedulerHandle(start(cluster, qps=qps, burst=section.burst, log_dir=log_dir))
