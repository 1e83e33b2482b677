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

from harness.results import machines, runs, summaries, tables as tidy
from harness.running import casesteps, hooks as hookspecs, phases
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
    where = casesteps.Position()
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
        outcome, case_state = casesteps.CaseRun(case, cluster_name(run_id, case.index), hooks, options.kubeconfig,
                                                folder, say, clock, where).run()
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
