"""One case's steps, each a named method: cluster -> calibration -> scheduler -> queue objects ->
measurements -> one step per phase (its driver, the faults planned for it, the invariants after it).

Teardowns (measurements, scheduler, cluster, faults) are registered with the engine as their piece
starts and run newest-first, also on error and Ctrl-C (harness.running.phases). What a case leaves
(its cluster, emitted tables, the measurements' meta) is in CaseState, which the runner writes.
"""

from __future__ import annotations

import functools

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from harness.clusters import bringup, state
from harness.drivers import contract
from harness.invariants import reading as invariantreading
from harness.progress import LineProgress
from harness.results import machines, tables as tidy
from harness.running import hooks as hookspecs, phases
from harness.scenarios import loading


@dataclass(slots=True)
class Position:
    """Where the run is (for run.json's `stopped_at` when an interrupt lands)."""

    now: str = "starting"
    interrupted: str = ""
    """The step of the running case that an interrupt stopped (teardowns run after it)."""


@dataclass(slots=True)
class CaseState:
    info: state.ClusterInfo | None = None
    measurements: hookspecs.Measurements | None = None
    scheduler: hookspecs.SchedulerHandle | None = None
    tables: dict[str, list[pd.DataFrame]] = field(default_factory=dict)
    meta: dict | None = None
    """The measurements' meta of the case (saved with the tables)."""
    invariants: hookspecs.InvariantChecker | None = None


class CaseRun:
    """The steps of one case over the run's hooks; `run()` once."""

    def __init__(self, case: loading.Case, cluster_name: str, hooks: hookspecs.Hooks, kubeconfig: str | None,
                 folder: Path, say: Callable[[str], None], clock, where: Position) -> None:
        self.case = case
        self.scenario = case.scenario
        self.cluster_name = cluster_name
        self.hooks = hooks
        self.kubeconfig = kubeconfig
        """Backend `existing` only: the kubeconfig given on the command line."""
        self.say = say
        self.where = where
        self.st = CaseState()
        self.engine = phases.Engine(clock=clock, on_event=self._on_event)
        self.case_dir = folder / "cases" / case.id

    def run(self) -> tuple[phases.Outcome, CaseState]:
        self.where.interrupted = ""
        self.case_dir.mkdir(parents=True, exist_ok=True)
        return self.engine.run(self.steps()), self.st

    def steps(self) -> list[phases.Step]:
        """The case's steps, the pieces the hooks leave out skipped."""
        hooks = self.hooks
        steps = [phases.Step("cluster", "cluster", self.cluster_up)]
        if hooks.calibrate is not None:
            steps.append(phases.Step("calibration", "calibration", self.calibrate))
        if hooks.scheduler is not None:
            steps.append(phases.Step("scheduler", "scheduler", self.scheduler_up))
        if hooks.install_queues is not None:
            steps.append(phases.Step("queues", "queues", self.queues_up))
        if hooks.measurements is not None:
            steps.append(phases.Step("measurements", "measurements", self.measure_start))
        steps += [phases.Step(phase_name, phase.kind, lambda name=phase_name, model=phase: self.run_phase(name, model))
                  for phase_name, phase in self.scenario.phases.items()]
        return steps

    def _on_event(self, event: str, record: phases.StepRecord) -> None:
        self.where.now = f"case {self.case.id}: {record.name}"
        if record.status == "interrupted" and not self.where.interrupted:  # the step the interrupt landed in
            self.where.interrupted = self.where.now
        announce(self.say, event, record)

    # -- the set-up steps ------------------------------------------------------------------------

    def cluster_up(self) -> None:
        spec = self.scenario.cluster.cluster_spec(self.cluster_name)
        if self.scenario.cluster.reuse:
            self.st.info = state.load(spec.name)
            return
        self.engine.on_teardown("cluster down", lambda: bringup.down(spec.name))
        self.st.info, report = bringup.up(spec, self.scenario.cluster.node_pools(), LineProgress(interval=10.0),
                                          kubeconfig_path=self.kubeconfig or self.scenario.cluster.kubeconfig)
        (self.case_dir / "bringup.json").write_text(report.to_json())
        tidy.append(self.st.tables, "observations",
                    tidy.observations(tidy.bringup_rows("", asdict(report))).drop(columns="case"))

    def calibrate(self) -> None:
        tidy.append(self.st.tables, machines.CALIBRATION_TABLE, self.hooks.calibrate(self.st.info))

    def scheduler_up(self) -> None:
        self.st.scheduler = self.hooks.scheduler(self.st.info, self.scenario.scheduler, self.case_dir)
        self.engine.on_teardown("scheduler stop", self.st.scheduler.stop)

    def queues_up(self) -> None:
        self.hooks.install_queues(self.st.info, self.scenario.queues)

    def measure_start(self) -> None:
        st = self.st
        st.measurements = self.hooks.measurements(st.info, self.scenario.measurements)
        endpoint = st.scheduler.metrics_endpoint() if st.scheduler is not None else None
        if endpoint is not None:
            st.measurements.watch_metrics(endpoint.source, endpoint.url, endpoint.bearer_token)
        st.measurements.start("setup")
        self.engine.on_teardown("measurements stop", self.collect)
        if st.scheduler is not None and st.scheduler.pid():
            st.measurements.watch_process("scheduler", st.scheduler.pid())

    def collect(self) -> None:
        measured = self.st.measurements.stop()
        self.st.meta = measured.meta
        for table, frame in measured.tables.items():
            # the collector's `samples` is the observations shape without `case`
            tidy.append(self.st.tables, "observations" if table == "samples" else table, frame)

    # -- what a driver's context calls -----------------------------------------------------------

    def mark_phase(self, name: str) -> None:
        if self.st.measurements is not None:
            self.st.measurements.mark_phase(name)

    def watch_process(self, component: str, pid: int) -> None:
        if self.st.measurements is not None:
            self.st.measurements.watch_process(component, pid)

    def emit(self, table: str, frame: pd.DataFrame) -> None:
        # kept in the case's state at once: a failed or interrupted case still writes what was emitted
        tidy.append(self.st.tables, table, frame)

    # -- one phase ---------------------------------------------------------------------------

    def run_phase(self, phase_name: str, phase) -> None:
        """Mark the phase, run its driver with the faults planned for it, then check the invariants
        (also after a failed phase)."""
        self.mark_phase(phase_name)
        if self.hooks.drivers is None:
            return
        out_dir = self.case_dir / phase_name
        restart = self.hooks.restart_scheduler
        context = contract.PhaseContext(cluster=self.st.info, scenario=self.scenario, phase_name=phase_name,
                                        phase=phase, out_dir=out_dir, scheduler=self.st.scheduler,
                                        restart_scheduler=None if restart is None or self.st.scheduler is None else
                                        functools.partial(restart, self.st.info, self.scenario.scheduler, out_dir),
                                        mark_phase=self.mark_phase, watch_process=self.watch_process, say=self.say,
                                        emit=self.emit, on_teardown=self.engine.on_teardown)
        faults = self.start_faults(phase_name, context)
        try:
            try:
                self.hooks.drivers.for_kind(phase.kind).run(context)
            finally:
                if faults is not None:  # brings back whatever is still down, also on Ctrl-C
                    for table, frame in faults.stop().items():
                        self.emit(table, frame)
        except Exception:
            self.check_invariants(phase_name, failed=True)
            raise
        self.check_invariants(phase_name)

    def start_faults(self, phase_name: str, context: contract.PhaseContext) -> hookspecs.FaultSession | None:
        planned = [fault for fault in self.scenario.faults if fault.phase == phase_name]
        if not planned or self.hooks.faults is None:
            return None
        session = self.hooks.faults(context, planned, self.invariant_rows)
        self.engine.on_teardown(f"{phase_name} faults: stop what they restarted", session.close)
        session.start()
        return session

    def invariant_rows(self, label: str) -> pd.DataFrame | None:
        if self.hooks.invariants is None or self.st.info is None or self.scenario.measurements.invariants == "off":
            return None
        self.st.invariants = self.st.invariants or self.hooks.invariants(self.st.info)
        return self.st.invariants.check(label)

    def check_invariants(self, phase_name: str, failed: bool = False) -> None:
        when = self.scenario.measurements.invariants
        if when == "last-phase" and not failed and phase_name != list(self.scenario.phases)[-1]:
            return
        found = self.invariant_rows(phase_name)
        if found is None:
            return
        self.emit(invariantreading.TABLE, found)
        cost = self.st.invariants.last_cost
        if cost is not None:  # a phase boundary's time at scale is mostly these reads
            self.emit(invariantreading.COST_TABLE, invariantreading.cost_frame(phase_name, cost))
            self.say(f"  - invariants after {phase_name}: {cost.reads} read(s) of every object "
                     f"({cost.workloads:,} Workloads) in {cost.seconds:.1f}s")
        failed = found[found["status"] != invariantreading.PASSED]
        if not failed.empty:
            self.say(f"  ! invariants after {phase_name}: {invariantreading.tally(found)} "
                     f"({', '.join(sorted(set(failed['check'])))})")


def announce(say: Callable[[str], None], event: str, record: phases.StepRecord) -> None:
    if event == "start":
        say(f"  - {record.name} ...")
    elif record.status != "ok" or record.kind == "teardown":
        say(f"  - {record.name}: {record.status}{' (' + record.error + ')' if record.error else ''}")
    else:
        say(f"  - {record.name}: ok in {record.seconds:.1f}s")
