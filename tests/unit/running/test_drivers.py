"""The driver registry: kinds to drivers, the scenario's phase union, and the runner asking it.

The runner tests adopt a "running" cluster from a state file (scenario `cluster.reuse`), so no
process starts; a fake driver stands in for the experiments.
"""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from harness.clusters import state
from harness.drivers import contract, registry
from harness.drivers.locust import phases as locustphases
from harness.results import tables as tidy
from harness.running import hooks, runner
from harness.scenarios import loading


def test_every_kind_belongs_to_one_driver():
    drivers = registry.drivers()
    assert {drivers.for_kind(k).name for k in ("fill", "churn", "query", "drain")} == {"locust"}
    assert {drivers.for_kind(k).name for k in ("populate", "list")} == {"watchcache"}
    assert drivers.for_kind("kueue-baseline").name == "kueue-baseline"
    with pytest.raises(KeyError, match="no driver runs phase kind 'nope'"):
        drivers.for_kind("nope")


def test_two_drivers_claiming_one_kind_are_refused():
    twin = contract.DriverSpec(name="twin", phases=(locustphases.ChurnPhase,), tables=(), run_phase=lambda c: None)
    with pytest.raises(ValueError, match="'churn' is claimed by locust and twin"):
        registry.Registry((registry.drivers().for_kind("churn"), twin))


def test_every_driver_declares_its_tables_and_each_table_has_one_owner_or_is_shared_load():
    owners: dict[str, list[str]] = {}
    for driver in registry.drivers():
        assert driver.tables, driver.name
        for table in driver.tables:
            owners.setdefault(table, []).append(driver.name)
    shared = {name for name, who in owners.items() if len(who) > 1}
    assert shared <= {"load_history", "load_totals", "load_failures", "load_latency", "load_hdr", "load_workers"}  # Locust's tables, also from list phases


@pytest.mark.parametrize("kind, field", [("fill", "pending: 5"), ("list", "mode: consistent"),
                                         ("kueue-baseline", "seconds: 5")])
def test_the_scenario_accepts_every_registered_kind(kind, field):
    loaded = loading.parse(f"name: t\nphases:\n  p: {{kind: {kind}, {field}}}\n", "t.yaml")
    assert loaded.scenario.phases["p"].kind == kind


def test_an_unknown_kind_names_the_registered_ones():
    with pytest.raises(loading.ScenarioError, match="kueue-baseline"):
        loading.parse("name: t\nphases:\n  p: {kind: nope}\n", "t.yaml")


@pytest.mark.parametrize("package", ["locust", "watchcache", "kueuebaseline"])
def test_a_driver_package_imports_first_without_a_cycle(package):
    code = f"import harness.drivers.{package}; from harness.drivers import registry; print(len(registry.drivers().kinds))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]


# -- the runner asks the registry --------------------------------------------------------------


class Recorder:
    """A driver of churn phases that emits one table per sub-phase, then optionally raises."""

    name = "recorder"
    phases = (locustphases.ChurnPhase,)
    tables = ("steps",)
    ratio_metrics = ()
    calibrated_metrics = ()

    def __init__(self, fail: BaseException | None = None) -> None:
        self.fail = fail
        self.contexts: list[contract.PhaseContext] = []

    def run(self, context: contract.PhaseContext) -> None:
        self.contexts.append(context)
        for step in range(2):
            context.mark_phase(f"{context.phase_name}/step-{step}")
            context.watch_process("scheduler", 1000 + step)
            context.emit("steps", pd.DataFrame([{"phase": context.phase_name, "step": step}]))
        if self.fail is not None:
            raise self.fail

    def metrics(self, tables, case):
        steps = tables.get("steps")
        mine = steps[steps["case"] == case] if steps is not None else []
        return [contract.Metric("recorder.steps", float(len(mine)), "count", "higher")]

    def report(self, tables, context):
        return None


class Marks:
    def __init__(self, cluster, measurements) -> None:
        self.marks: list[str] = []
        MARKS.append(self.marks)

    def start(self, phase):
        self.marks.append(phase)

    def watch_process(self, component, pid):
        WATCHED.append((component, pid))

    def watch_metrics(self, source, url, bearer_token=""):
        pass

    def mark_phase(self, name):
        self.marks.append(name)

    def stop(self):
        return hooks.Measured({}, {"schema_version": 1, "phases": list(self.marks)})


MARKS: list[list[str]] = []
WATCHED: list[tuple[str, int]] = []
SCENARIO = "name: t\ncluster: {name: adopted, reuse: true}\nscheduler: {enabled: false}\nphases:\n  churn: {seconds: 1}\n"


def _adopted_cluster(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("KQBENCH_STATE", str(tmp_path / "state"))
    state.save(state.ClusterInfo(name="adopted", backend="kwok", kubeconfig=str(tmp_path / "kubeconfig"),
                                 apiserver_url="https://127.0.0.1:1"))


@pytest.mark.parametrize("fail, status", [(None, "ok"), (KeyboardInterrupt(), "interrupted"),
                                          (RuntimeError("boom"), "failed")])
def test_the_runner_keeps_emitted_tables_whatever_the_end(tmp_path, monkeypatch, fail, status):
    _adopted_cluster(tmp_path, monkeypatch)
    driver = Recorder(fail)
    MARKS.clear()
    WATCHED.clear()
    result = runner.run(loading.parse(SCENARIO, "t.yaml"),
                        hooks.Hooks(measurements=Marks, drivers=registry.Registry((driver,))),
                        runner.RunOptions(out_parent=tmp_path / "runs", report=False), say=lambda line: None)
    assert result.record.status == status
    assert result.record.stopped_at == ("case r0: churn" if status == "interrupted" else "")
    steps = tidy.read(result.folder)["steps"]
    assert list(steps["step"]) == [0, 1] and set(steps["case"]) == {"r0"}
    assert MARKS == [["setup", "churn", "churn/step-0", "churn/step-1"]]
    assert WATCHED == [("scheduler", 1000), ("scheduler", 1001)]  # a restarted scheduler is followed
    [context] = driver.contexts
    assert (context.phase_name, context.phase.seconds, context.scheduler) == ("churn", 1, None)
    assert context.out_dir == result.folder / "cases" / "r0" / "churn"
    assert result.summary.entries["recorder.steps @ all"].value == 2.0
    assert tidy.read_meta(result.folder) == {"r0": {"schema_version": 1, "phases": MARKS[0]}}


@pytest.mark.parametrize("strategy", ["status-field", "cq-status-topn", "aggregated-snapshot"])
def test_the_locust_query_phase_reads_where_the_strategy_publishes(tmp_path, strategy):
    from harness.drivers.locust import planning
    from scheduler.publishing import strategies

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                          "users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
                          "current-context: x\n")
    cluster = state.ClusterInfo(name="c", backend="kwok", kubeconfig=str(kubeconfig), apiserver_url="https://127.0.0.1:1")
    scenario = loading.parse(f"name: t\nscheduler: {{strategy: {strategy}}}\nphases:\n  query: {{limit: 7}}\n",
                             "t.yaml").scenario
    plan = planning.load_plan(cluster, scenario, scenario.phases["query"])
    assert plan.settings.query.mode == strategies.get(strategy).query_mode
    assert plan.settings.query.limit == 7


class Invariants:
    """Stands in for harness.invariants' checker: one failed check after every second phase."""

    def __init__(self, cluster) -> None:
        self.calls: list[str] = []
        self.last_cost = None
        CHECKERS.append(self)

    def check(self, phase):
        from harness.invariants import reading
        from harness.invariants.checking import QUOTA, Violation

        self.calls.append(phase)
        self.last_cost = reading.ReadCost(reads=len(self.calls), seconds=0.5, workloads=3)
        found = [Violation(QUOTA, ("ClusterQueue/a",), "over")] if len(self.calls) % 2 == 0 else []
        return reading.frame(phase, found)


CHECKERS: list[Invariants] = []
TWO_PHASES = SCENARIO + "  again: {kind: churn, seconds: 1}\n"


@pytest.mark.parametrize("fail, checked", [(None, ["churn", "again"]), (RuntimeError("boom"), ["churn"]),
                                           (KeyboardInterrupt(), [])])
def test_the_runner_checks_invariants_after_every_phase_also_a_failed_one(tmp_path, monkeypatch, fail, checked):
    from harness.drivers import invariants

    _adopted_cluster(tmp_path, monkeypatch)
    CHECKERS.clear()
    result = runner.run(loading.parse(TWO_PHASES, "t.yaml"),
                        hooks.Hooks(drivers=registry.Registry((Recorder(fail), invariants.DRIVER)), invariants=Invariants),
                        runner.RunOptions(out_parent=tmp_path / "runs", report=False), say=lambda line: None)
    assert [c.calls for c in CHECKERS] == ([checked] if checked else [])
    if not checked:
        return
    table = tidy.read(result.folder)["invariants"]
    assert list(table["phase"].unique()) == checked
    failed = table[table["status"] == "failed"]
    assert list(failed["objects"]) == (["ClusterQueue/a"] if len(checked) == 2 else [])
    assert result.summary.entries["invariants.failed @ all"].value == (1.0 if len(checked) == 2 else 0.0)
    costs = tidy.read(result.folder)["invariant_reads"]  # what each boundary's reads took, per phase
    assert list(costs["phase"]) == checked and list(costs["reads"]) == list(range(1, len(checked) + 1))


@pytest.mark.parametrize("fail, checked", [(None, ["again"]), (RuntimeError("boom"), ["churn"])])
def test_invariants_after_the_last_phase_only_or_after_the_phase_that_failed(tmp_path, monkeypatch, fail, checked):
    from harness.drivers import invariants

    _adopted_cluster(tmp_path, monkeypatch)
    CHECKERS.clear()
    runner.run(loading.parse(TWO_PHASES + "measurements: {invariants: last-phase}\n", "t.yaml"),
               hooks.Hooks(drivers=registry.Registry((Recorder(fail), invariants.DRIVER)), invariants=Invariants),
               runner.RunOptions(out_parent=tmp_path / "runs", report=False), say=lambda line: None)
    assert [c.calls for c in CHECKERS] == [checked]


def test_invariants_can_be_turned_off_per_scenario(tmp_path, monkeypatch):
    _adopted_cluster(tmp_path, monkeypatch)
    CHECKERS.clear()
    runner.run(loading.parse(SCENARIO + "measurements: {invariants: false}\n", "t.yaml"),
               hooks.Hooks(drivers=registry.Registry((Recorder(),)), invariants=Invariants),
               runner.RunOptions(out_parent=tmp_path / "runs", report=False), say=lambda line: None)
    assert CHECKERS == []


def test_an_interrupt_while_writing_results_is_in_run_json_and_raised(tmp_path, monkeypatch):
    from harness.results import runs

    _adopted_cluster(tmp_path, monkeypatch)

    def interrupted_write(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tidy, "write", interrupted_write)
    with pytest.raises(KeyboardInterrupt):
        runner.run(loading.parse(SCENARIO, "t.yaml"), hooks.Hooks(drivers=registry.Registry((Recorder(),))),
                   runner.RunOptions(out_parent=tmp_path / "runs", report=False), say=lambda line: None)
    [folder] = (tmp_path / "runs").iterdir()
    record = runs.read_run(folder)
    assert (record.status, record.stopped_at) == ("interrupted", "case r0: writing results")


class Faults:
    """Stands in for harness.faults' injector: records its life and hands back one row."""

    def __init__(self, context, planned, check) -> None:
        self.events = [("made", context.phase_name, [f.kind for f in planned])]
        self.check = check
        SESSIONS.append(self)

    def start(self):
        self.events.append("start")

    def stop(self):
        self.events.append("stop")
        return {"faults": pd.DataFrame([{"phase": "churn", "kind": "kill-etcd", "recovered": True, "recovery_seconds": 2.0}])}

    def close(self):
        self.events.append("close")


SESSIONS: list[Faults] = []
WITH_FAULTS = TWO_PHASES + "faults:\n  - {kind: kill-etcd, phase: churn, at_seconds: 1}\n"


@pytest.mark.parametrize("fail", [None, KeyboardInterrupt()])
def test_faults_start_with_their_phase_stop_with_it_and_close_with_the_case(tmp_path, monkeypatch, fail):
    from harness.drivers import faults

    _adopted_cluster(tmp_path, monkeypatch)
    SESSIONS.clear()
    result = runner.run(loading.parse(WITH_FAULTS, "t.yaml"),
                        hooks.Hooks(drivers=registry.Registry((Recorder(fail), faults.DRIVER)), faults=Faults),
                        runner.RunOptions(out_parent=tmp_path / "runs", report=False), say=lambda line: None)
    [session] = SESSIONS  # only the phase that names faults has a session
    assert session.events == [("made", "churn", ["kill-etcd"]), "start", "stop", "close"]
    assert list(tidy.read(result.folder)["faults"]["kind"]) == ["kill-etcd"]
    if fail is None:
        assert result.summary.entries["faults.recovery_seconds[kill-etcd] @ all"].value == 2.0


class StopsAtTwo(Recorder):
    """Interrupted (as by Ctrl-C) in the case whose churn runs 2 s."""

    def run(self, context: contract.PhaseContext) -> None:
        self.fail = KeyboardInterrupt() if context.phase.seconds == 2 else None
        super().run(context)


SWEPT = SCENARIO + "sweep:\n  phases.churn.seconds: [1, 2, 3]\n"


def _stopped_run(tmp_path, monkeypatch) -> runner.RunResult:
    _adopted_cluster(tmp_path, monkeypatch)
    source = tmp_path / "t.yaml"
    source.write_text(SWEPT)
    return runner.run(loading.load(str(source)), hooks.Hooks(measurements=Marks, drivers=registry.Registry((StopsAtTwo(),))),
                      runner.RunOptions(out_parent=tmp_path / "runs", report=False), say=lambda line: None)


def test_a_resumed_run_runs_the_cases_left_undone_into_the_same_folder_and_keeps_the_others(tmp_path, monkeypatch):
    stopped = _stopped_run(tmp_path, monkeypatch)
    assert [c.status for c in stopped.record.cases] == ["ok", "interrupted", "skipped"]
    driver = Recorder()
    result = runner.resume(stopped.folder, lambda scenario: hooks.Hooks(measurements=Marks, drivers=registry.Registry((driver,))),
                           runner.RunOptions(report=False), say=lambda line: None)
    assert result.folder == stopped.folder and result.record.status == "ok"
    assert [c.status for c in result.record.cases] == ["ok", "ok", "ok"]
    assert [c.phase.seconds for c in driver.contexts] == [2, 3]  # the finished case did not run again
    steps = tidy.read(result.folder)["steps"]
    assert steps.groupby("case").size().to_dict() == {"seconds=1,r0": 2, "seconds=2,r0": 2, "seconds=3,r0": 2}
    assert set(tidy.read_meta(result.folder)) == {"seconds=1,r0", "seconds=2,r0", "seconds=3,r0"}
    [resumed] = runner.runs.read_run(result.folder).resumed
    assert resumed["cases"] == ["seconds=2,r0", "seconds=3,r0"]
    assert sorted(e.value for e in result.summary.entries.values() if e.metric == "recorder.steps") == [2.0, 2.0, 2.0]


def test_resuming_refuses_a_finished_run_and_a_changed_scenario(tmp_path, monkeypatch):
    stopped = _stopped_run(tmp_path, monkeypatch)
    (tmp_path / "t.yaml").write_text(SWEPT.replace("[1, 2, 3]", "[1, 2, 4]"))
    with pytest.raises(runner.KqbenchError, match=r"no longer resolves .*sweep.phases.churn.seconds: \[1, 2, 3\] -> \[1, 2, 4\]"):
        runner.resume(stopped.folder, lambda scenario: hooks.Hooks(), say=lambda line: None)
    (tmp_path / "t.yaml").write_text(SWEPT.replace("scheduler: {enabled: false}", "scheduler: {enabled: false, qps: 20}"))
    with pytest.raises(runner.KqbenchError, match="no longer resolves"):
        runner.resume(stopped.folder, lambda scenario: hooks.Hooks(), say=lambda line: None)
    (tmp_path / "t.yaml").write_text(SWEPT)
    runner.resume(stopped.folder, lambda scenario: hooks.Hooks(measurements=Marks, drivers=registry.Registry((Recorder(),))),
                  runner.RunOptions(report=False), say=lambda line: None)
    with pytest.raises(runner.KqbenchError, match="every case ended and its summary is written"):
        runner.resume(stopped.folder, lambda scenario: hooks.Hooks(), say=lambda line: None)


def test_resuming_a_run_stopped_while_writing_its_summary_writes_it_and_runs_no_case(tmp_path, monkeypatch):
    stopped = _stopped_run(tmp_path, monkeypatch)
    runner.resume(stopped.folder, lambda scenario: hooks.Hooks(measurements=Marks, drivers=registry.Registry((Recorder(),))),
                  runner.RunOptions(report=False), say=lambda line: None)
    (stopped.folder / "summary.json").unlink()
    record = runner.runs.read_run(stopped.folder)
    record.status, record.stopped_at = "interrupted", "writing the summary"
    runner.runs.write_run(stopped.folder, record)
    driver = Recorder()
    result = runner.resume(stopped.folder, lambda scenario: hooks.Hooks(measurements=Marks, drivers=registry.Registry((driver,))),
                           runner.RunOptions(report=False), say=lambda line: None)
    assert driver.contexts == [] and result.record.status == "ok" and result.record.resumed[-1]["cases"] == []
    assert (stopped.folder / "summary.json").is_file()
    assert sorted(e.value for e in result.summary.entries.values() if e.metric == "recorder.steps") == [2.0, 2.0, 2.0]
