"""What kqbench adds to Locust's master/worker protocol, through Locust's own message hooks.

The settings themselves ride in Locust's spawn message (custom options reach every worker, late
joiners included; `engine` puts a portable copy there). On top of that:

- HELLO (worker -> master, once connected): who the worker is, which kqbench and which user classes
  it has. The master counts a worker as joined when its hello came, and refuses a mismatch with a
  one-line reason instead of a run whose users fail on the worker.
- WELCOME (master -> worker, the answer to its hello): accepted, refused and why, or "closing": a
  worker that reached the previous phase's master on its way out (or hears nothing) connects again.
- REJOIN (master -> workers, before its quit): come back for the next master (a scenario's next phase).
- every periodic worker report carries the worker's CPU seconds, and the master tallies each worker's
  requests from the same reports, so its tables say who sent what.
"""

from __future__ import annotations

import os
import resource
import socket
from dataclasses import dataclass, field
from importlib import metadata

HELLO = "kqbench_hello"
WELCOME = "kqbench_welcome"
REJOIN = "kqbench_rejoin"
CPU_KEY = "kqbench_cpu_seconds"
"""Key a worker adds to its Locust stats report: its own CPU seconds so far."""


def kqbench_version() -> str:
    try:
        return metadata.version("kqbench")
    except metadata.PackageNotFoundError:
        return "unknown"


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass(slots=True)
class WorkerTally:
    """One worker as the master saw it: what it said in its hello and what it reported."""

    worker: str
    host: str = ""
    pid: int = 0
    version: str = ""
    requests: int = 0
    failures: int = 0
    cpu_seconds: float = 0.0
    joined: bool = False


@dataclass(slots=True)
class MasterSide:
    """The master's half: joins, refusals and per-worker tallies (Locust events in, plain records out)."""

    user_classes: tuple[str, ...]
    """Classes the plan runs: every worker must have them."""
    version: str = field(default_factory=kqbench_version)
    tallies: dict[str, WorkerTally] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    """One line per worker that cannot take part (and how to fix it)."""
    closing: bool = False
    """The run is over: a worker saying hello now is meant for the next master."""
    sent_on: set[str] = field(default_factory=set)
    """Workers told to connect again (they reached this master on its way out): not in its tallies."""

    def install(self, environment, runner) -> None:
        runner.register_message(HELLO, self.on_hello)
        environment.events.worker_report.add_listener(self.on_report)

    def _tally(self, worker: str) -> WorkerTally:
        return self.tallies.setdefault(worker, WorkerTally(worker))

    def on_hello(self, environment, msg) -> None:
        if self.closing:
            self.sent_on.add(msg.node_id)
            self.tallies.pop(msg.node_id, None)  # a report may have come first: it was never ours
            environment.runner.send_message(WELCOME, {"closing": True}, client_id=msg.node_id)
            return
        data = msg.data or {}
        tally = self._tally(msg.node_id)
        tally.host, tally.pid, tally.version = str(data.get("host", "")), int(data.get("pid", 0)), str(data.get("version", ""))
        missing = sorted(set(self.user_classes) - set(data.get("user_classes", ())))
        problem = ""
        if tally.version != self.version:
            problem = (f"worker on {tally.host} runs kqbench {tally.version}, the master {self.version}: "
                       "install the same kqbench on every host")
        elif missing:
            problem = f"worker on {tally.host} lacks user classes {', '.join(missing)}: give it the master's --locustfile"
        if problem:
            self.problems.append(problem)
        tally.joined = not problem
        if environment is not None:
            environment.runner.send_message(WELCOME, {"reason": problem}, client_id=msg.node_id)

    def on_report(self, client_id: str, data: dict) -> None:
        if client_id in self.sent_on:
            return
        tally = self._tally(client_id)
        total = data.get("stats_total") or {}
        tally.requests += int(total.get("num_requests", 0))
        tally.failures += int(total.get("num_failures", 0))
        tally.cpu_seconds = max(tally.cpu_seconds, float(data.get(CPU_KEY, 0.0)))

    def joined(self) -> int:
        return sum(t.joined for t in self.tallies.values())

    def close(self, runner, rejoin: bool) -> None:
        """Before the master quits: later hellos are told to wait for the next master; `rejoin` asks
        the workers that served this run to come back for it."""
        self.closing = True
        if rejoin:
            runner.send_message(REJOIN, {})


@dataclass(slots=True)
class WorkerSide:
    """The worker's half: say hello, report CPU, remember whether to come back."""

    user_classes: tuple[str, ...]
    rejoin: bool = False
    welcome: dict | None = None
    """The master's answer to our hello: {"reason": ""} when accepted; None until it comes."""

    def install(self, environment, runner) -> None:
        runner.register_message(REJOIN, self.on_rejoin)
        runner.register_message(WELCOME, self.on_welcome)
        environment.events.report_to_master.add_listener(self.on_report)

    def on_welcome(self, environment, msg) -> None:
        self.welcome = dict(msg.data or {})

    def hello(self, runner) -> None:
        runner.send_message(HELLO, {"host": socket.gethostname(), "pid": os.getpid(), "version": kqbench_version(),
                                    "user_classes": list(self.user_classes)})

    def on_rejoin(self, environment, msg) -> None:
        self.rejoin = True

    def on_report(self, client_id: str, data: dict) -> None:
        data[CPU_KEY] = round(cpu_seconds(), 3)
