"""Kueue's cycles read from its log, and put to the reference core state by state."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.agreeing import replaying
from harness.cli import cli
from harness.drivers.kueuebaseline import replayshape
from harness.implementations.kueue import cycles
from harness.scenarios import loading

ROOT = Path(__file__).resolve().parents[3]
EXCERPT = ROOT / "tests" / "fixtures" / "kueue-v0.17.0-baseline-cycles.log.gz"
"""The first 130 cycles of Kueue v0.17.0 at --zap-log-level=3 on the one-cohort baseline (the lines
the reader takes, their other fields dropped)."""
SCENARIO = ROOT / "results" / "peer" / "kueue-baseline-1cohort-peers.yaml"


def _line(msg: str, t: float, **fields) -> str:
    seconds = int(t)
    stamp = f"2026-12-01T10:00:{seconds:02d}.{int(round((t - seconds) * 1e9)):09d}Z"
    return json.dumps({"ts": stamp, "msg": msg, **fields})


def _wl(name: str) -> dict:
    return {"name": name, "namespace": "kqbench-churn"}


def test_the_cache_keeps_an_assumed_workload_through_an_older_pending_write():
    lines = [
        "$ /cache/kueue --config=x",  # the command line the harness writes first
        _line("Workload assumed in the cache", 1.0, schedulingCycle=1, workload=_wl("a"), clusterQueue={"name": "cq"}),
        _line("Workload update event", 1.1, workload=_wl("a"), status="pending"),  # no prevStatus: a stale write
        _line("Snapshot taken", 1.2, schedulingCycle=2),
        _line("Workload update event", 1.3, workload=_wl("a"), status="admitted", prevStatus="pending", clusterQueue="cq"),
        _line("Workload update event", 1.4, workload=_wl("a"), status="pending", prevStatus="admitted"),  # released
        _line("Snapshot taken", 1.5, schedulingCycle=3),
        '{"ts": "2026-12-01T10:00:02Z", "msg": "cut sho',
    ]
    read, _ = cycles.read(lines)
    assert [c.number for c in read] == [2, 3]
    assert read[0].holding["a"] == cycles.Holding("cq", read[0].holding["a"].since, False)
    assert read[1].holding == {}


def test_outcomes_per_head_and_targets_marked_evicted():
    lines = [
        _line("Workload create event", 0.5, workload=_wl("low")),
        _line("Workload update event", 0.6, workload=_wl("low"), status="admitted", prevStatus="pending", clusterQueue="cq"),
        _line("Snapshot taken", 1.0, schedulingCycle=7),
        _line("Preempted", 1.1, schedulingCycle=7, workload=_wl("high"), preemptingWorkload=_wl("high"),
              targetWorkload=_wl("low")),
        _line("Workload successfully admitted and assigned flavors", 1.2, schedulingCycle=7, workload=_wl("other")),
        _line("Workload evaluated for admission", 1.3, schedulingCycle=7, workload=_wl("high"),
              reason="insufficient quota. Pending the preemption of 1 workload(s)"),
        _line("Workload evaluated for admission", 1.3, schedulingCycle=7, workload=_wl("other"), status="assumed"),
        _line("Workload evaluated for admission", 1.3, schedulingCycle=7, workload=_wl("waiting"), reason="no fit"),
        _line("Snapshot taken", 2.0, schedulingCycle=8),
        _line("Workload evaluated for admission", 2.1, schedulingCycle=8, workload=_wl("high"),
              reason="insufficient quota. Pending the preemption of 1 workload(s)"),
    ]
    (seven, eight), created = cycles.read(lines)
    assert seven.heads == ["high", "other", "waiting"]
    assert seven.outcomes["high"] == cycles.Outcome("preempt", ("low",))
    assert seven.outcomes["other"].kind == "admit" and seven.outcomes["waiting"] == cycles.Outcome("other", reason="no fit")
    assert not seven.holding["low"].evicted and eight.holding["low"].evicted
    assert eight.outcomes["high"].kind == "pending-preemption"
    assert set(created) == {"low"}


@pytest.fixture(scope="module")
def excerpt() -> tuple[list[cycles.Cycle], dict[str, float]]:
    with gzip.open(EXCERPT, "rt") as lines:
        return cycles.read(lines)


def test_the_reference_core_decides_as_kueue_did_on_kueues_own_cycles(excerpt):
    read, created = excerpt
    shape = replayshape.shape(loading.load(str(SCENARIO)).scenario, created)
    heads = replaying.replay(read, created, shape)
    summary = replaying.tally(heads)
    assert summary["heads"] > 400 and summary["kueue_kinds"].get("preempt", 0) >= 10
    assert summary["verdicts"]["differs"] <= summary["heads"] // 100, summary["differing_pairs"]
    preempting = [h for h in heads if h.kueue.kind == "preempt"]
    assert all(h.verdict != "differs" for h in preempting)
    assert sum(h.verdict == "same" for h in preempting) >= len(preempting) * 0.6  # the rest are ties Kueue breaks by UID


def test_a_tie_in_kueues_order_is_named_so():
    shape = replaying.Shape(objects=_queues(), workload=_body, ordering_of=lambda name: (0, 1))
    held = {"old": cycles.Holding("cq", 100.0, False)}
    # Kueue found nothing to do for either head; ours admits the first: a tie between equals
    cycle = cycles.Cycle(1, 101.0, held, heads=["a", "b"], outcomes={"a": cycles.Outcome("other"),
                                                                      "b": cycles.Outcome("admit")})
    verdicts = {h.name: h.verdict for h in replaying.replay_cycle(cycle, {"a": 100.0, "b": 100.0}, shape)}
    assert verdicts == {"a": "tie-order", "b": "tie-order"}


def _queues() -> list[dict]:
    api = "kueue.x-k8s.io/v1beta2"
    return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}},
            {"apiVersion": api, "kind": "ResourceFlavor", "metadata": {"name": "f"}, "spec": {}},
            {"apiVersion": api, "kind": "ClusterQueue", "metadata": {"name": "cq"}, "spec": {
                "namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                    {"name": "f", "resources": [{"name": "cpu", "nominalQuota": "2"}]}]}]}},
            {"apiVersion": api, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": "ns"},
             "spec": {"clusterQueue": "cq"}}]


def _body(name: str) -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": name, "namespace": "ns", "creationTimestamp": "2026-12-01T10:00:00Z"},
            "spec": {"queueName": "lq", "priority": 0, "podSets": [{"name": "main", "count": 1, "template": {
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}]}}


def test_the_command_writes_its_tally_and_refuses_a_log_without_cycles(tmp_path):
    out = tmp_path / "replay"
    result = CliRunner().invoke(cli, ["replay", str(EXCERPT), "--scenario", str(SCENARIO), "--out", str(out)])
    assert result.exit_code in (0, 1), result.output
    record = json.loads((out / "replay.json").read_text())
    assert record["heads"] == sum(record["verdicts"].values()) and record["cycles"] == 130
    with gzip.open(out / "heads.csv.gz", "rt") as rows:
        assert sum(1 for _ in rows) == record["heads"] + 1
    again = CliRunner().invoke(cli, ["replay", str(out / "kueue-cycles.log.gz"), "--scenario", str(SCENARIO)])
    def summary_line(output: str) -> str:
        return next(line for line in output.splitlines() if "head decisions" in line)

    assert summary_line(again.output) == summary_line(result.output)  # the trimmed log replays the same
    quiet = tmp_path / "quiet.log"
    quiet.write_text(_line("Workload create event", 1.0, workload=_wl("a")) + "\n")
    result = CliRunner().invoke(cli, ["replay", str(quiet), "--scenario", str(SCENARIO)], standalone_mode=False)
    assert "--zap-log-level=3" in str(result.exception)


def test_the_replay_decides_with_the_runs_fair_sharing_and_its_kueue_versions_defaults():
    fair = ROOT / "results" / "large-scale" / "kueue-large-scale-100cq-fair.yaml"
    section = loading.load(str(fair), ["scheduler.fair_sharing_strategies=LessThanInitialShare",
                                       "scheduler.preserve_scan_progress=false"]).scenario.scheduler
    settings = replayshape.core_settings(section, {"preserve_scan_progress": True, "tas_recompute_in_cycle": True})
    assert settings["fair_sharing"].enabled
    assert [s.value for s in settings["fair_sharing"].strategies] == ["LessThanInitialShare"]
    assert settings["tas_recompute_in_cycle"] is True, "as the version decides"
    assert settings["preserve_scan_progress"] is False, "the scenario's own setting wins"
    manager = replaying.simulating.manager_with([], **settings)
    assert manager.fair_sharing.enabled
