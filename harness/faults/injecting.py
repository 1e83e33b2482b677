"""What a fault does to a process: signal it, and start the same command again.

A process is started again from what the OS says it ran (command line, working folder, environment),
so one mechanism serves etcd, kube-apiserver (both started by kwokctl) and the scheduler. The new
process writes to `log_path`; a cluster component's command line names the cluster's work folder,
so `kqbench cluster down` finds it as it finds the first.
"""

from __future__ import annotations

import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import psutil

from harness.clusters import processes
from harness.errors import KqbenchError


@dataclass(frozen=True, slots=True)
class Command:
    argv: list[str]
    cwd: str
    env: dict[str, str]


def command_of(pid: int) -> Command:
    """How to start `pid` again (read before it is killed)."""
    try:
        process = psutil.Process(pid)
        return Command(process.cmdline(), process.cwd(), process.environ())
    except psutil.Error as error:
        raise KqbenchError(f"cannot read process {pid} to restart it later: {error}") from None


def stop(pid: int, sig: signal.Signals, timeout: float = 60.0) -> None:
    """Send `sig` and wait until the process is gone (SIGKILL after `timeout`)."""
    try:
        processes.stop([psutil.Process(pid)], timeout, sig)
    except psutil.NoSuchProcess:
        pass


def start(command: Command, log_path: Path) -> subprocess.Popen:
    """The same command again, in its own session (as kwokctl starts components), output to log_path."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        return subprocess.Popen(command.argv, cwd=command.cwd, env=command.env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)


def pause(pid: int) -> None:
    psutil.Process(pid).send_signal(signal.SIGSTOP)


def resume(pid: int) -> None:
    try:
        psutil.Process(pid).send_signal(signal.SIGCONT)
    except psutil.NoSuchProcess:
        pass
