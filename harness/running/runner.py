"""A scenario's cases, one after another, into one run folder; partial results are always kept.

Per case: cluster up (or reuse) -> calibration (a fixed load on the apiserver alone) -> scheduler -> queue objects -> measurements -> phases with load ->
teardown (measurements, scheduler, cluster; newest first, also on error and Ctrl-C), each step a method
of casesteps.CaseRun. After every case the tables, run.json and summary.json are rewritten, so a crash
loses at most the running case.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from harness.drivers import registry
from harness.errors import KqbenchError
from harness.results import machines, runs, summaries, tables as tidy
from harness.running import casesteps, hooks as hookspecs, phases
from harness.scenarios import loading, models

UNFINISHED = frozenset({"pending", "interrupted", "skipped"})
"""Case statuses a resumed run runs again (a failed case is a result and stays)."""


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
class Carried:
    """What the run folder holds when the cases start (tables and meta of the cases kept) and which cases run."""
    tables: dict[str, list[pd.DataFrame]]
    meta: dict[str, dict]
    todo: set[str]


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
    return _guarded(loaded, hooks, options, say, now, clock, folder, record, Carried({}, {}, {case.id for case in record.cases}))


def resume(folder: Path, hooks_for: Callable[[models.Scenario], hookspecs.Hooks], options: RunOptions | None = None,
           say: Callable[[str], None] = print, now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.timezone.utc),
           clock: Callable[[], float] = time.monotonic) -> RunResult:
    """Run the cases a stopped run left undone into its own folder, with the scenario as that run resolved it
    (run.json), then its summary and report, so that the folder ends as one run would have; the cases it
    holds are kept as they are."""
    options = options or RunOptions()
    folder = Path(folder)
    record = runs.read_run(folder)
    loaded = loading.load(record.scenario_source, record.overrides)
    changed = _differences(models.Scenario.model_validate(record.scenario).model_dump(mode="json"),
                           loaded.scenario.model_dump(mode="json"))
    if changed or [case.id for case in loaded.cases] != [case.id for case in record.cases]:
        raise KqbenchError(f"{folder}: {record.scenario_source} no longer resolves to the scenario the run started "
                           f"with ({', '.join(changed[:3]) or 'its cases differ'}): restore it, or start a new run")
    todo = {case.id for case in record.cases if case.status in UNFINISHED}
    if not todo and record.status == "ok" and (folder / summaries.FILE).is_file():
        raise KqbenchError(f"{folder}: every case ended and its summary is written; nothing to resume")
    # With every case ended, a run stopped while writing its summary or report gets them written.
    kept = tidy.read(folder) if todo else {}  # the summary reads them again itself
    tables = {name: [frame[~frame["case"].isin(todo)] if "case" in frame.columns else frame]
              for name, frame in kept.items()}
    meta = {case: value for case, value in tidy.read_meta(folder).items() if case not in todo}
    for case in record.cases:
        if case.id in todo:
            case.status, case.error, case.started_at, case.ended_at, case.phases = "pending", "", "", "", []
    record.resumed.append({"at": now().isoformat(timespec="seconds"), "git_sha": runs.git_sha(),
                           "packages": runs.package_versions(), "cases": sorted(todo)})
    record.status, record.stopped_at = "running", ""
    runs.write_run(folder, record)
    return _guarded(loaded, hooks_for(loaded.scenario), options, say, now, clock, folder, record,
                    Carried(tables, meta, todo))


def _differences(then: object, now: object, path: str = "") -> list[str]:
    """Dotted paths where two resolved scenarios differ ('scheduler.qps: 20 -> 50')."""
    if isinstance(then, dict) and isinstance(now, dict):
        return [line for key in sorted(set(then) | set(now), key=str)
                for line in _differences(then.get(key), now.get(key), f"{path}.{key}" if path else str(key))]
    return [] if then == now else [f"{path}: {then!r} -> {now!r}"]


def _guarded(loaded, hooks, options, say, now, clock, folder, record, carried: Carried) -> RunResult:
    where = casesteps.Position()
    try:
        return _run_cases(loaded, hooks, options, say, now, clock, folder, record, where, carried)
    except KeyboardInterrupt:  # outside a case's steps (writing tables, the summary, the report): say so, then stop
        record.status, record.stopped_at = "interrupted", record.stopped_at or where.now
        record.ended_at = now().isoformat(timespec="seconds")
        runs.write_run(folder, record)
        raise


def _run_cases(loaded, hooks, options, say, now, clock, folder, record, where, carried: Carried) -> RunResult:
    run_id = record.run_id
    kept = len(loaded.cases) - len(carried.todo)
    say(f"run {run_id}: {len(loaded.cases)} case(s) -> {folder}" + (f" ({kept} kept from before)" if kept else ""))
    for note in hooks.notes:
        say(f"note: {note}")
    all_tables, all_meta = carried.tables, carried.meta
    interrupted = False
    for case, case_record in zip(loaded.cases, record.cases):
        if case.id not in carried.todo:
            continue
        if interrupted:
            case_record.status = "skipped"
            continue
        say(f"case {case.index + 1}/{len(loaded.cases)} {case.id}")
        case_record.started_at = now().isoformat(timespec="seconds")
        outcome, case_state = casesteps.CaseRun(case, cluster_name(run_id, case.index), hooks, options.kubeconfig,
                                                folder, say, clock, where).run()
        stopped_in, where.now = where.interrupted or where.now, f"case {case.id}: writing results"
        case_record.ended_at = now().isoformat(timespec="seconds")
        case_record.status = outcome.status
        case_record.error = "" if outcome.error is None else phases._one_line(outcome.error)
        case_record.phases = [asdict(s) for s in outcome.steps + outcome.teardowns]
        if case_state.info is not None:
            case_record.binaries = dict(case_state.info.versions)
        if case_state.scheduler is not None:
            case_record.client_limits = case_state.scheduler.client_limits.as_record()
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
    # hooks without drivers ran no phase of their own; the run's tables may still hold any driver's
    summary = summaries.summarise(record, tidy.read(folder), hooks.drivers or registry.drivers())
    summaries.write(folder, summary)
    report = None
    where.now = "writing the report"
    if options.report:
        from harness.reporting import rendering

        report = rendering.render([folder], folder / "report.html", registry.drivers())
    return RunResult(folder, record, summary, report, interrupted)
