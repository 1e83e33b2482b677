"""The kwok backend: a real kube-apiserver + etcd + kwok-controller as local processes (kwokctl, binary runtime)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import yaml

from harness.clusters import frontproxy, kwokconfig, ports as portpicking, processes, spec as specs, state
from harness.errors import KqbenchError
from harness.kube import kubeconfig, rest, waiting
from harness.toolchain import layout
from scheduler import listening

NAME = "kwok"
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kwok-controller", "kube-scheduler")
"""kube-scheduler runs only in clusters with Jobs (its pid file is missing otherwise)."""


def kwok_home(root: Path | None = None) -> Path:
    """KWOK_WORKDIR for every kqbench cluster (kept apart from a user's own ~/.kwok)."""
    return (root or state.state_root()) / "kwok"


def cluster_dir(name: str, root: Path | None = None) -> Path:
    return kwok_home(root) / "clusters" / name


def pki_dir(name: str, root: Path | None = None) -> Path:
    """Our own certificates for a cluster (front proxy), apart from kwokctl's pki folder."""
    return (root or state.state_root()) / "pki" / name


def _env(binaries: layout.Binaries, root: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env["KWOK_WORKDIR"] = str(kwok_home(root))
    # kwokctl waits for the cluster with whatever `kubectl` is first on PATH: make it ours.
    env["PATH"] = f"{binaries.kubectl.parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _first_fatal_line(workdir: Path) -> str:
    """The line most likely to explain a failed start (apiserver flag errors come first)."""
    for component in ("kube-apiserver", "etcd", "kube-controller-manager", "kwok-controller", "kube-scheduler"):
        log = workdir / "logs" / f"{component}.log"
        for line in processes.log_tail(log, 40).splitlines():
            lowered = line.lower()
            if any(w in lowered for w in ("error:", "fatal", "unrecognized feature gate", "invalid", "address already in use")):
                return f"{component}: {line.strip()[:400]}"
    return ""


def read_pids(workdir: Path) -> dict[str, int]:
    pids = {}
    for component in COMPONENTS:
        pid_file = workdir / "pids" / f"{component}.pid"
        if pid_file.is_file():
            text = pid_file.read_text().strip()
            if text.isdigit():
                pids[component] = int(text)
    return pids


def apiserver_command(info: state.ClusterInfo) -> list[str]:
    """The command line the cluster's kube-apiserver runs with (what it does is in its flags)."""
    pid = info.pids.get("kube-apiserver")
    try:
        if pid:
            return psutil.Process(pid).cmdline()
    except psutil.Error:
        pass
    raise KqbenchError(f"cluster {info.name}: kube-apiserver is not running (see `kqbench cluster status --name {info.name}`)")


def _component_died(workdir: Path) -> str | None:
    """Name of a component whose pid file exists but whose process is gone (a failed start)."""
    for component, pid in read_pids(workdir).items():
        if processes.describe(pid) is None:
            return component
    return None


def _run_kwokctl(command: list[str], env: dict, log, workdir: Path, timeout: float) -> int:
    """Run `kwokctl create`, but give up as soon as a component it started has died.

    kwokctl keeps waiting for an apiserver that exited on a bad flag; we would rather say why at once.
    """
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            try:
                return process.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                pass
            if _component_died(workdir):
                # Give the dying component a moment to flush its last log line.
                time.sleep(0.5)
                return -1
        return -2
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def up(cluster: specs.ClusterSpec, binaries: layout.Binaries, progress, root: Path | None = None,
       ready_timeout: float = 180.0) -> state.ClusterInfo:
    """Start the cluster's processes and wait until kube-apiserver is ready."""
    workdir = cluster_dir(cluster.name, root)
    if state.info_path(cluster.name, root).exists() or workdir.exists():
        raise KqbenchError(
            f"cluster name {cluster.name!r} is taken: stop it with `kqbench cluster down --name {cluster.name}` or pick another --name"
        )
    if cluster.apiserver_port:
        portpicking.require_free(cluster.apiserver_port, "kube-apiserver")
        others = listening.pick_free(6)
        others = [p for p in others if p != cluster.apiserver_port][:5]
        ports = kwokconfig.Ports(cluster.apiserver_port, *others)
    else:
        ports = kwokconfig.Ports.from_list(listening.pick_free(6))

    base = state.state_root() if root is None else root
    config_path = base / "configs" / f"{cluster.name}.yaml"
    # Every cluster can host aggregated APIs: the front-proxy identity is set at start.
    proxy = frontproxy.ensure(pki_dir(cluster.name, root))
    cluster = dataclasses.replace(cluster, apiserver_args=frontproxy.apiserver_args(proxy) + cluster.apiserver_args)
    config_path.parent.mkdir(parents=True, exist_ok=True)
    documents = kwokconfig.kwokctl_documents(cluster, binaries, ports)
    config_path.write_text(yaml.safe_dump_all(documents, sort_keys=False))

    info = state.ClusterInfo(
        name=cluster.name, backend=NAME,
        kubeconfig=str(workdir / "kubeconfig.yaml"),
        apiserver_url=f"https://{listening.LOOPBACK}:{ports.apiserver}",
        etcd_url=f"http://{listening.LOOPBACK}:{ports.etcd}",
        metrics_urls=kwokconfig.metrics_urls(cluster, ports),
        workdir=str(workdir),
        versions={"kubernetes": binaries.kubernetes_version, "etcd": binaries.etcd_version, "kwok": binaries.kwok_version},
        feature_gates=dict(cluster.feature_gates),
        created_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    )
    # Saved before starting so that `cluster down` can clean up even if this process dies now.
    state.save(info, root)
    log_path = config_path.with_suffix(".kwokctl.log")
    progress("cluster", f"starting {cluster.name}: kube-apiserver on {info.apiserver_url} (log: {log_path})", True)
    command = [str(binaries.kwokctl), "create", "cluster", "--name", cluster.name,
               "--config", str(config_path), "--timeout", "150s"]
    try:
        with log_path.open("w") as log:
            code = _run_kwokctl(command, _env(binaries, root), log, workdir, timeout=240)
        if code != 0:
            reason = _first_fatal_line(workdir) or processes.log_tail(log_path, 3).strip()
            raise KqbenchError(f"cluster {cluster.name} failed to start: {reason} (logs: {workdir / 'logs'})")
        creds = kubeconfig.load(info.kubeconfig)
        try:
            rest.wait_ready(creds, timeout=ready_timeout)
        except KqbenchError as error:
            reason = _first_fatal_line(workdir)
            raise KqbenchError(f"{error}{'; ' + reason if reason else ''}") from None
    except BaseException:
        down(cluster.name, binaries, root)
        raise
    info.pids = read_pids(workdir)
    state.save(info, root)
    return info


@contextmanager
def apiserver_stopped(info: state.ClusterInfo, progress, timeout: float = 300.0) -> Iterator[None]:
    """kube-apiserver stopped for the block, then started again as kwokctl started it (command line,
    working folder, environment, log) and waited for until it answers (/livez), also when the block fails.
    Not until /readyz: with 100k nodes its own informers sync seconds after it serves them (measured
    here: answering 2.7 s after the start, every node served 12.4 s, /readyz 17.0 s); a caller waits
    for what it needs served.

    With it stopped nothing watches etcd: what the block writes there reaches every client through
    the new kube-apiserver's initial LIST (a client resuming an older watch is told to list again),
    never as watch events that a cut-off watch could lose part of. It is killed, not asked to stop:
    its state is all in etcd, and with watchers connected it takes tens of seconds to drain them."""
    pid = info.pids.get("kube-apiserver")
    if not pid:
        raise KqbenchError(f"cluster {info.name}: no kube-apiserver pid recorded")
    process = psutil.Process(pid)
    command, cwd, environment = process.cmdline(), process.cwd(), process.environ()
    process.kill()
    process.wait(timeout=30)
    try:
        yield
    finally:
        progress("cluster", "starting kube-apiserver again", True)
        workdir = Path(info.workdir)
        with (workdir / "logs" / "kube-apiserver.log").open("a") as log:
            started = subprocess.Popen(command, cwd=cwd, env=environment, stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        (workdir / "pids" / "kube-apiserver.pid").write_text(str(started.pid))
        info.pids["kube-apiserver"] = started.pid
        state.save(info)
        creds = kubeconfig.load(info.kubeconfig)
        waiting.poll(lambda: rest.get(creds, "/livez", timeout=5.0)[0] == 200, timeout, 0.2,
                     lambda: f"kube-apiserver of {info.name} did not answer {timeout:.0f} s after its restart "
                             f"(log: {workdir / 'logs' / 'kube-apiserver.log'})", retry_on=(OSError,))


def down(name: str, binaries: layout.Binaries | None, root: Path | None = None) -> list[int]:
    """Stop every process of the cluster and remove its files; returns pids that would not die."""
    workdir = cluster_dir(name, root)
    if binaries is not None and workdir.exists():
        try:
            subprocess.run([str(binaries.kwokctl), "delete", "cluster", "--name", name],
                           env=_env(binaries, root), capture_output=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            pass  # whatever it left running is found by path below
    leftovers = processes.stop(processes.find_by_path(str(workdir) + "/"))
    shutil.rmtree(workdir, ignore_errors=True)
    shutil.rmtree(pki_dir(name, root), ignore_errors=True)
    state.forget(name, root)
    return leftovers
