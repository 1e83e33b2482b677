"""A scenario's cases, one after another, into one run folder; partial results are always kept.

Per case: cluster up (or reuse) -> calibration (a fixed load on the apiserver alone) -> scheduler -> queue objects -> measurements -> phases with load ->
teardown (measurements, scheduler, cluster; newest first, also on error and Ctrl-C). After every case
the tables, run.json and summary.json are rewritten, so a crash loses at most the running case.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from harness.clusters import bringup, state
from harness.drivers import contract
from harness.invariants import reading as invariantreading
from harness.progress import LineProgress
from harness.results import machines, runs, summaries, tables as tidy
from harness.running import hooks as hookspecs, phases
from harness.scenarios import loading


@dataclass(slots=True)
class RunOptions:
    out_parent: Path = runs.RUNS_DIR
    report: bool = True
    kubeconfig: str | None = None
    """Backend `existing` only."""


@dataclass(slots=True)
class RunResult:
    folder: Path
    record: runs.RunRecord
    summary: summaries.Summary
    report: Path | None = None
    interrupted: bool = False


@dataclass(slots=True)
class _Position:
    """Where the run is (for run.json's `stopped_at` when an interrupt lands)."""

    now: str = "starting"
    interrupted: str = ""
    """The step of the running case that an interrupt stopped (teardowns run after it)."""


@dataclass(slots=True)
class _CaseState:
    info: state.ClusterInfo | None = None
    measurements: hookspecs.Measurements | None = None
    scheduler: hookspecs.SchedulerHandle | None = None
    tables: dict[str, list[pd.DataFrame]] = field(default_factory=dict)
    meta: dict | None = None
    """The measurements' meta of the case (saved with the tables)."""
    invariants: hookspecs.InvariantChecker | None = None


def cluster_name(run_id: str, index: int) -> str:
    """Short, unique per run and case, valid as a cluster name."""
    return f"kqb-{hashlib.sha1(run_id.encode()).hexdigest()[:6]}-{index}"


def run(loaded: loading.Loaded, hooks: hookspecs.Hooks, options: RunOptions | None = None,
        say: Callable[[str], None] = print, now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.timezone.utc),
        clock: Callable[[], float] = time.monotonic) -> RunResult:
    options = options or RunOptions()
    run_id = runs.new_run_id(loaded.scenario.name, now())
    folder = runs.unique_folder(Path(options.out_parent), run_id)
    run_id = folder.name
    record = runs.RunRecord(run_id=run_id, scenario_name=loaded.scenario.name, scenario_source=loaded.source,
                            scenario=loaded.scenario.model_dump(mode="json"), overrides=list(loaded.overrides),
                            cases=[runs.CaseRecord(c.id, c.point, c.params, c.repeat) for c in loaded.cases],
                            packages=runs.package_versions(), machine=runs.machine(), fingerprint=machines.read(),
                            git_sha=runs.git_sha(),
                            started_at=now().isoformat(timespec="seconds"))
    runs.write_run(folder, record)
    where = _Position()
    try:
        return _run_cases(loaded, hooks, options, say, now, clock, folder, record, where)
    except KeyboardInterrupt:  # outside a case's steps (writing tables, the summary, the report): say so, then stop
        record.status, record.stopped_at = "interrupted", record.stopped_at or where.now
        record.ended_at = now().isoformat(timespec="seconds")
        runs.write_run(folder, record)
        raise


def _run_cases(loaded, hooks, options, say, now, clock, folder, record, where) -> RunResult:
    run_id = record.run_id
    say(f"run {run_id}: {len(loaded.cases)} case(s) -> {folder}")
    for note in hooks.notes:
        say(f"note: {note}")
    all_tables: dict[str, list[pd.DataFrame]] = {}
    all_meta: dict[str, dict] = {}
    interrupted = False
    for case, case_record in zip(loaded.cases, record.cases):
        if interrupted:
            case_record.status = "skipped"
            continue
        say(f"case {case.index + 1}/{len(loaded.cases)} {case.id}")
        case_record.started_at = now().isoformat(timespec="seconds")
        outcome, case_state = _run_case(case, cluster_name(run_id, case.index), hooks, options, folder, say, clock, where)
        stopped_in, where.now = where.interrupted or where.now, f"case {case.id}: writing results"
        case_record.ended_at = now().isoformat(timespec="seconds")
        case_record.status = outcome.status
        case_record.error = "" if outcome.error is None else phases._one_line(outcome.error)
        case_record.phases = [asdict(s) for s in outcome.steps + outcome.teardowns]
        if case_state.info is not None:
            case_record.binaries = dict(case_state.info.versions)
        for name, parts in case_state.tables.items():
            all_tables.setdefault(name, []).extend(tidy.with_case(p, case.id) for p in parts)
        if case_state.meta is not None:
            all_meta[case.id] = case_state.meta
        tidy.write(folder, all_tables, all_meta)
        runs.write_run(folder, record)
        interrupted = outcome.status == "interrupted"
        if interrupted:
            record.stopped_at = stopped_in
            runs.write_run(folder, record)
        say(f"case {case.id}: {outcome.status}{' — ' + case_record.error if case_record.error else ''}")
    where.now = "writing the summary"
    record.ended_at = now().isoformat(timespec="seconds")
    statuses = {c.status for c in record.cases}
    record.status = "interrupted" if interrupted else ("ok" if statuses <= {"ok"} else "failed")
    runs.write_run(folder, record)
    summary = summaries.summarise(record, tidy.read(folder), hooks.drivers)
    summaries.write(folder, summary)
    report = None
    where.now = "writing the report"
    if options.report:
        from harness.reporting import rendering

        report = rendering.render([folder], folder / "report.html")
    return RunResult(folder, record, summary, report, interrupted)


def _run_case(case: loading.Case, name: str, hooks: hookspecs.Hooks, options: RunOptions, folder: Path,
              say: Callable[[str], None], clock, where: _Position) -> tuple[phases.Outcome, _CaseState]:
    scenario = case.scenario
    st = _CaseState()
    where.interrupted = ""

    def on_event(event: str, record: phases.StepRecord) -> None:
        where.now = f"case {case.id}: {record.name}"
        if record.status == "interrupted" and not where.interrupted:  # the step the interrupt landed in
            where.interrupted = where.now
        _announce(say, event, record)

    engine = phases.Engine(clock=clock, on_event=on_event)
    case_dir = folder / "cases" / case.id
    case_dir.mkdir(parents=True, exist_ok=True)

    def cluster_up() -> None:
        spec = scenario.cluster.cluster_spec(name)
        if scenario.cluster.reuse:
            st.info = state.load(spec.name)
            return
        engine.on_teardown("cluster down", lambda: bringup.down(spec.name))
        st.info, report = bringup.up(spec, scenario.cluster.node_pools(), LineProgress(interval=10.0),
                                     kubeconfig_path=options.kubeconfig or scenario.cluster.kubeconfig)
        (case_dir / "bringup.json").write_text(report.to_json())
        tidy.append(st.tables, "observations", tidy.observations(tidy.bringup_rows("", asdict(report))).drop(columns="case"))

    def calibrate() -> None:
        tidy.append(st.tables, machines.CALIBRATION_TABLE, hooks.calibrate(st.info))

    def scheduler_up() -> None:
        st.scheduler = hooks.scheduler(st.info, scenario.scheduler, case_dir)
        engine.on_teardown("scheduler stop", st.scheduler.stop)

    def queues_up() -> None:
        hooks.install_queues(st.info, scenario.queues)

    def measure_start() -> None:
        st.measurements = hooks.measurements(st.info, scenario.measurements)
        endpoint = st.scheduler.metrics_endpoint() if st.scheduler is not None else None
        if endpoint is not None:
            st.measurements.watch_metrics(endpoint.source, endpoint.url, endpoint.bearer_token)
        st.measurements.start("setup")
        engine.on_teardown("measurements stop", collect)
        if st.scheduler is not None and st.scheduler.pid():
            st.measurements.watch_process("scheduler", st.scheduler.pid())

    def collect() -> None:
        measured = st.measurements.stop()
        st.meta = measured.meta
        for table, frame in measured.tables.items():
            # the collector's `samples` is the observations shape without `case`
            tidy.append(st.tables, "observations" if table == "samples" else table, frame)

    def mark_phase(name: str) -> None:
        if st.measurements is not None:
            st.measurements.mark_phase(name)

    def watch_process(component: str, pid: int) -> None:
        if st.measurements is not None:
            st.measurements.watch_process(component, pid)

    def emit(table: str, frame: pd.DataFrame) -> None:
        # kept in the case's state at once: a failed or interrupted case still writes what was emitted
        tidy.append(st.tables, table, frame)

    def phase_step(phase_name, phase) -> Callable[[], None]:
        def action() -> None:
            mark_phase(phase_name)
            if hooks.drivers is None:
                return
            context = contract.PhaseContext(cluster=st.info, scenario=scenario, phase_name=phase_name, phase=phase,
                                           out_dir=case_dir / phase_name, scheduler=st.scheduler,
                                           mark_phase=mark_phase, watch_process=watch_process, say=say,
                                           emit=emit)
            faults = start_faults(phase_name, context)
            try:
                try:
                    hooks.drivers.for_kind(phase.kind).run(context)
                finally:
                    if faults is not None:  # brings back whatever is still down, also on Ctrl-C
                        for table, frame in faults.stop().items():
                            emit(table, frame)
            except Exception:
                check_invariants(phase_name)
                raise
            check_invariants(phase_name)
        return action

    def start_faults(phase_name: str, context: contract.PhaseContext) -> hookspecs.FaultSession | None:
        planned = [fault for fault in scenario.faults if fault.phase == phase_name]
        if not planned or hooks.faults is None:
            return None
        session = hooks.faults(context, planned, invariant_rows)
        engine.on_teardown(f"{phase_name} faults: stop what they restarted", session.close)
        session.start()
        return session

    def invariant_rows(label: str) -> pd.DataFrame | None:
        if hooks.invariants is None or st.info is None or not scenario.measurements.invariants:
            return None
        st.invariants = st.invariants or hooks.invariants(st.info)
        return st.invariants.check(label)

    def check_invariants(phase_name: str) -> None:
        found = invariant_rows(phase_name)
        if found is None:
            return
        emit(invariantreading.TABLE, found)
        failed = found[found["status"] != invariantreading.PASSED]
        if not failed.empty:
            say(f"  ! invariants after {phase_name}: {len(failed)} failed, unread or unsettled ({', '.join(sorted(set(failed['check'])))})")

    steps = [phases.Step("cluster", "cluster", cluster_up)]
    if hooks.calibrate is not None:
        steps.append(phases.Step("calibration", "calibration", calibrate))
    if hooks.scheduler is not None:
        steps.append(phases.Step("scheduler", "scheduler", scheduler_up))
    if hooks.install_queues is not None:
        steps.append(phases.Step("queues", "queues", queues_up))
    if hooks.measurements is not None:
        steps.append(phases.Step("measurements", "measurements", measure_start))
    steps += [phases.Step(phase_name, phase.kind, phase_step(phase_name, phase))
              for phase_name, phase in scenario.phases.items()]
    return engine.run(steps), st


def _announce(say: Callable[[str], None], event: str, record: phases.StepRecord) -> None:
    if event == "start":
        say(f"  - {record.name} ...")
    elif record.status != "ok" or record.kind == "teardown":
        say(f"  - {record.name}: {record.status}{' (' + record.error + ')' if record.error else ''}")
    else:
        say(f"  - {record.name}: ok in {record.seconds:.1f}s")
