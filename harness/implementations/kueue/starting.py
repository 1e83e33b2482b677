"""Starting Kueue's manager (cmd/kueue) as a local process against a cluster, and stopping it.

Ready means serving through kube-apiserver (`readiness`: /readyz, the APIServices Available, one
proxied visibility request), all within one deadline; a failure carries the tail of Kueue's log.
The manager's command line names the cluster's kubeconfig, which lives in the cluster's
work folder, so `kqbench cluster down` also stops a manager a crashed run left behind.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.clusters import processes, state
from harness.errors import KqbenchError
from harness.implementations import contract
from harness.implementations.kueue import installing, manifests, readiness
from harness.kube import calling, kubeconfig
from harness.scenarios import sections
from harness.toolchain import building, layout, versions
from scheduler import listening, settings as scheduler_settings
from scheduler.core import podsready


LOG_TAIL_LINES = 15
READY_TIMEOUT_SECONDS = 300.0
"""From the manager's start to serving through kube-apiserver: about 3 s on an idle machine, much more on
2 cores shared with running clusters; generous because a manager that exits fails the wait at once."""


@dataclass
class KueueProcess:
    """A running Kueue manager; `metrics_url` is served over HTTPS to authenticated clients (Kueue's default)."""

    process: subprocess.Popen
    ports: manifests.Ports
    log_path: Path
    metrics_token: str = ""

    @property
    def metrics_url(self) -> str:
        return f"https://{listening.LOOPBACK}:{self.ports.metrics}/metrics"

    @property
    def readyz_url(self) -> str:
        return f"http://{listening.LOOPBACK}:{self.ports.health}/readyz"

    def pid(self) -> int | None:
        return self.process.pid

    def metrics_text(self, timeout: float = 10.0) -> str:
        """Kueue's Prometheus metrics (its serving certificate is self-signed: loopback, not verified)."""
        with calling.opened(self.metrics_url, headers={"Authorization": f"Bearer {self.metrics_token}"},
                            timeout=timeout, context=calling.loopback_tls()) as response:
            return response.read().decode()

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        return processes.log_tail(self.log_path, lines)

    def stop(self, grace_seconds: float = 15.0) -> None:
        """SIGTERM, wait, then SIGKILL; safe to call twice."""
        processes.terminate(self.process, grace_seconds)


def command_of(manager: Path, config: Path, kubeconfig_path: str, log_level: int | None = None) -> list[str]:
    """The manager's command line; --kubeconfig as a flag: the visibility server's delegated
    authentication reads only the flag."""
    verbosity = [] if log_level is None else [f"--zap-log-level={log_level}"]
    return [str(manager), f"--config={config}", f"--kubeconfig={kubeconfig_path}", *verbosity]


def is_manager_on(argv: list[str], kubeconfig_path: str) -> bool:
    """Whether a command line (as `command_of` writes it) runs Kueue's manager on this kubeconfig."""
    return bool(argv) and Path(argv[0]).name == layout.KUEUE_MANAGER and f"--kubeconfig={kubeconfig_path}" in argv


def running_on(info: state.ClusterInfo) -> list[int]:
    """Pids of live Kueue managers on this cluster, found by command line (whoever started them)."""
    return [process.pid for process in processes.find_by_path(info.kubeconfig)
            if is_manager_on(process.info.get("cmdline") or [], info.kubeconfig)]


def pick_ports() -> manifests.Ports:
    webhook, visibility, metrics, health = listening.pick_free(4)
    return manifests.Ports(webhook=webhook, visibility=visibility, metrics=metrics, health=health)


def install_api(info: state.ClusterInfo, webhook_port: int = 0, kueue: layout.KueueBuild | None = None) -> None:
    """Only Kueue's CRDs (for queues and Workloads created before the manager starts)."""
    kueue = kueue or building.locate_kueue()
    installing.install_crds(kubeconfig.load(info.kubeconfig), kueue, webhook_port or listening.pick_free(1)[0])


def start(info: state.ClusterInfo, qps: float | None = scheduler_settings.CLIENT_QPS,
          burst: int = scheduler_settings.CLIENT_BURST, log_dir: Path | None = None,
          ready_timeout: float = READY_TIMEOUT_SECONDS, kueue: layout.KueueBuild | None = None,
          ports: manifests.Ports | None = None, concurrency: Mapping[str, int] | None = None,
          log_level: int | None = None, fair_sharing: tuple[str, ...] | None = None,
          admission_fair_sharing: manifests.AdmissionFairSharing | None = None,
          wait_for_pods_ready: podsready.WaitForPodsReady | None = None) -> KueueProcess:
    """Install Kueue's API on the cluster, start its manager, and wait until it serves; stop it on failure.
    ``fair_sharing``: the preemption strategies of its fairSharing configuration (None: fair sharing off);
    ``admission_fair_sharing``: its admissionFairSharing configuration (None: off); ``wait_for_pods_ready``:
    its waitForPodsReady (None: as the version ships it)."""
    kueue = kueue or building.locate_kueue()
    ports = ports or pick_ports()
    creds = kubeconfig.load(info.kubeconfig)
    files = installing.files_for(info)
    # CRDs first: the conversion webhook's port is the one this manager will listen on.
    installing.install_crds(creds, kueue, ports.webhook)
    installing.install_objects(creds, kueue, files, ports)
    settings = manifests.ManagerSettings(ports=ports, cert_dir=str(files.cert_dir), qps=qps, burst=burst,
                                         concurrency=dict(concurrency or {}), fair_sharing=fair_sharing,
                                         admission_fair_sharing=admission_fair_sharing,
                                         wait_for_pods_ready=wait_for_pods_ready,
                                         disable_gate=_has_disable_gate(kueue.version))
    config = installing.write_config(kueue, files, settings)
    token = installing.metrics_token(creds)
    log_dir = log_dir or state.state_root() / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"kueue-{info.name}.log"
    command = command_of(kueue.manager, config, info.kubeconfig, log_level)
    with log_path.open("a") as log:
        log.write(f"$ {' '.join(command)}\n")
        log.flush()
        # Killed with us, however we die (a second manager on the cluster would be a second scheduler).
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, preexec_fn=processes.dying_with_this_process())
    handle = KueueProcess(process, ports, log_path, token)
    try:
        readiness.wait(readiness.steps(creds, handle.readyz_url), process.poll, ready_timeout)
    except BaseException as error:
        handle.stop()
        if isinstance(error, Exception):  # Ctrl-C stays Ctrl-C; anything else says what Kueue wrote
            cause = error if isinstance(error, KqbenchError) else f"{type(error).__name__}: {error}"
            raise KqbenchError(f"{cause}\n--- last lines of {log_path} ---\n{handle.log_tail()}") from error
        raise
    return handle


@dataclass(slots=True)
class SchedulerHandle:
    """KueueProcess behind the runner's SchedulerHandle protocol."""

    process: KueueProcess
    client_limits: contract.ClientLimits

    def pid(self) -> int | None:
        return self.process.pid()

    def metrics_url(self) -> str | None:
        return self.process.metrics_url

    def metrics_endpoint(self) -> contract.MetricsEndpoint | None:
        # Kueue's metrics need a bearer token (the starter made a reader ServiceAccount) and keep
        # Kueue's own names, so they land as their own source beside the apiserver's.
        return contract.MetricsEndpoint("kueue", self.process.metrics_url, self.process.metrics_token)

    def alive(self) -> bool:
        return self.process.alive()

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        return self.process.log_tail(lines)

    def stop(self) -> None:
        self.process.stop()


def _has_disable_gate(version: str) -> bool:
    """Whether this Kueue knows the DisableWaitForPodsReady gate (from the version that turned the feature on)."""
    return versions.kueue_defaults(version)["wait_for_pods_ready"]


def start_scheduler(cluster: state.ClusterInfo, section: sections.SchedulerFields, log_dir: Path) -> SchedulerHandle:
    """The runner's starter: the scenario's Kueue version with its shipped client limits unless the scenario
    sets them, and workers per kind (strategy does not apply: Kueue publishes positions only through its
    visibility API, copied and sorted per request)."""
    kueue = building.locate_kueue(version=section.kueue_version)
    shipped_qps, shipped_burst = installing.shipped_client_limits(kueue)
    qps = None if section.no_client_limit else shipped_qps if section.qps is None else section.qps
    burst = shipped_burst if section.burst is None else section.burst
    fair_sharing = tuple(section.fair_sharing_strategies.split(",")) if section.fair_sharing else None
    afs = manifests.AdmissionFairSharing(section.usage_half_life_seconds, section.usage_sampling_interval_seconds,
                                         dict(section.resource_weights)) if section.admission_fair_sharing else None
    # As the version ships it unless the scenario says: its choice written out, with the scenario's values.
    ready = scheduler_settings.wait_for_pods_ready_of(section, section.wait_for_pods_ready_on(kueue.version))
    return SchedulerHandle(start(cluster, qps=qps, burst=burst, log_dir=log_dir, kueue=kueue,
                                 concurrency=section.kueue_concurrency, log_level=section.kueue_log_level,
                                 fair_sharing=fair_sharing, admission_fair_sharing=afs, wait_for_pods_ready=ready),
                           contract.ClientLimits(qps, burst))
