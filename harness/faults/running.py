"""The fault injector of one phase: a thread that injects the phase's faults at their times, brings
each component back after its down time, and times the recovery; the runner starts it with the phase
and stops it when the phase ends (a fault still down is brought back at once).

A scheduler started again by a fault outlives the phase (the next phases need one): `close`, a
teardown of the case, stops it. Cluster components started again are stopped with the cluster.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from harness.clusters import kwok, processes, state
from harness.faults import injecting, recovering
from harness.kube import kubeconfig, rest
from harness.metrics import catalog, samples, scraping

"""The admissions counter of each scheduler implementation's /metrics, by its source name."""
_COMPONENT = {"restart-apiserver": ("kube-apiserver", signal.SIGTERM), "kill-etcd": ("etcd", signal.SIGKILL)}


@dataclass
class Targets:
    """What the faults act on and how recovery is seen."""

    cluster: state.ClusterInfo
    scheduler: object | None
    """The runner's SchedulerHandle (pid(), metrics_endpoint())."""
    out_dir: Path
    positions_path: str | None = None
    """A pendingworkloads path probed through kube-apiserver; None when the strategy serves no API."""
    watch_process: Callable[[str, int], None] = lambda component, pid: None
    check_invariants: Callable[[str], pd.DataFrame] | None = None
    say: Callable[[str], None] = print


@dataclass
class Injector:
    phase: str
    faults: list
    """The scenario's FaultSpecs of this phase."""
    targets: Targets
    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    records: list[recovering.FaultRecord] = field(default_factory=list)
    invariants: list[pd.DataFrame] = field(default_factory=list)
    _over: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _started: list = field(default_factory=list)
    _scheduler_pid: int | None = None

    def start(self) -> None:
        self._scheduler_pid = self.targets.scheduler.pid() if self.targets.scheduler is not None else None
        self._creds = kubeconfig.load(self.targets.cluster.kubeconfig)
        self._thread = threading.Thread(target=self._run, name=f"faults-{self.phase}", daemon=True)
        self._thread.start()

    def stop(self) -> dict[str, pd.DataFrame]:
        """The phase is over: bring back whatever is down, wait for the thread, return its tables."""
        self._over.set()
        if self._thread is not None:
            self._thread.join(timeout=120.0 + sum(f.recovery_timeout_seconds for f in self.faults))
        tables = {recovering.TABLE: recovering.frame(self.records)}
        if self.invariants:
            tables["invariants"] = pd.concat(self.invariants, ignore_index=True)
        return tables

    def close(self) -> None:
        """Stop the schedulers this injector started (cluster components go with the cluster)."""
        for process in self._started:
            processes.terminate(process, 15.0)

    # -- the thread ---------------------------------------------------------------------------

    def _run(self) -> None:
        began = self._began = self.clock()
        for fault in sorted(self.faults, key=lambda f: f.at_seconds):
            record = recovering.FaultRecord(self.phase, fault.kind, fault.at_seconds)
            self.records.append(record)
            if self._over.wait(max(0.0, began + fault.at_seconds - self.clock())):
                record.error = "the phase ended before the fault's time"
                continue
            try:
                self._inject(fault, record)
            except Exception as error:  # noqa: BLE001 - one line in the table, the phase goes on
                record.error = f"{type(error).__name__}: {error}"[:300]
                continue
            record.recovery = recovering.time_to_recover(self._probes(fault), fault.recovery_timeout_seconds,
                                                         self.clock, lambda s: self._over.wait(s), self._over.is_set)
            done = ", ".join(f"{k} {'-' if v is None else f'{v:.1f}s'}" for k, v in record.recovery.items())
            self.targets.say(f"  fault {fault.kind} at {fault.at_seconds:.0f}s of {self.phase}: back after "
                             f"{record.back_at - record.injected_at:.1f}s; recovered: {done}")
            found = self.targets.check_invariants(f"{self.phase}/after-{fault.kind}") if self.targets.check_invariants else None
            if found is not None:
                self.invariants.append(found)

    def _inject(self, fault, record: recovering.FaultRecord) -> None:
        down = fault.down_seconds
        if fault.kind == "pause-kwok":
            pid = self._cluster_pid("kwok-controller")
            injecting.pause(pid)
            self._injected(record)
            try:
                self._over.wait(down)
            finally:
                injecting.resume(pid)
        elif fault.kind == "kill-scheduler":
            if self._scheduler_pid is None:
                raise ValueError("the scenario runs no local scheduler process to kill")
            command = injecting.command_of(self._scheduler_pid)
            injecting.stop(self._scheduler_pid, signal.SIGKILL)
            self._injected(record)
            self._over.wait(down)
            log = self.targets.out_dir / f"scheduler-after-{fault.kind}-{len(self.records)}.log"
            process = injecting.start(command, log)
            self._started.append(process)
            self._scheduler_pid = process.pid
            self.targets.watch_process("scheduler", process.pid)
        else:
            component, sig = _COMPONENT[fault.kind]
            pid = self._cluster_pid(component)
            command = injecting.command_of(pid)
            injecting.stop(pid, sig)
            self._injected(record)
            self._over.wait(down)
            workdir = Path(self.targets.cluster.workdir or "")
            process = injecting.start(command, workdir / "logs" / f"{component}.log")
            (workdir / "pids" / f"{component}.pid").write_text(str(process.pid))  # where `cluster down` looks
            self.targets.watch_process(component, process.pid)
        record.back_at = self.wall()

    def _injected(self, record: recovering.FaultRecord) -> None:
        record.injected_at, record.injected_in_phase = self.wall(), self.clock() - self._began

    def _cluster_pid(self, component: str) -> int:
        pids = kwok.read_pids(Path(self.targets.cluster.workdir or ""))
        if component not in pids:
            raise ValueError(f"no {component} pid in the cluster's work folder (backend {self.targets.cluster.backend})")
        return pids[component]

    # -- probes ---------------------------------------------------------------------------------

    def _probes(self, fault) -> dict[str, Callable[[], bool]]:
        probes: dict[str, Callable[[], bool]] = {"apiserver": lambda: rest.get(self._creds, "/readyz", 2.0)[0] == 200}
        endpoint = self.targets.scheduler.metrics_endpoint() if self.targets.scheduler is not None else None
        if endpoint is not None and endpoint.source in catalog.ADMITTED:
            target = (scraping.bearer_target(endpoint.source, endpoint.url, endpoint.bearer_token)
                      if endpoint.bearer_token else scraping.Target(endpoint.source, endpoint.url))
            probes["admitting"] = self._admitting(target, catalog.ADMITTED[endpoint.source], fresh=fault.kind == "kill-scheduler")
        if self.targets.positions_path:
            probes["positions"] = lambda: rest.get(self._creds, self.targets.positions_path, 5.0)[0] == 200
        return probes

    @staticmethod
    def _admitting(target, metric: str, fresh: bool) -> Callable[[], bool]:
        """True once the admissions counter grew past its first reading after the fault (a restarted
        scheduler's counter starts at 0, so any admission counts)."""
        baseline: list[float] = [0.0] if fresh else []

        def probe() -> bool:
            value = samples.metric_sum(scraping.fetch(target, 2.0), metric)
            if not baseline or value < baseline[0]:  # first reading, or the counter restarted
                baseline[:] = [value]
                return False
            return value > baseline[0]
        return probe
