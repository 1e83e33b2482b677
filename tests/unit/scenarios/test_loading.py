"""Scenarios: shipped files validate, overrides and sweeps expand, bad input is one line with file:line: field."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.load import planning
from harness.scenarios import loading, sections

BASE = """\
name: t
cluster:
  nodes: 5
queues:
  cluster_queues:
    - name: cq-{i}
      each: {i: 2}
      resource_groups:
        - covered_resources: [cpu]
          flavors:
            - flavor: default
              resources:
                - {name: cpu, nominal: 10}
  local_queues:
    - {name: "lq-{i}", cluster_queue: "cq-{i}", each: {i: 2}}
scheduler:
  strategy: aggregated-indexed
phases:
  fill: {pending: 10}
  churn: {seconds: 5}
"""


@pytest.mark.parametrize("name", loading.shipped())
def test_shipped_scenarios_validate(name):
    loaded = loading.load(name)
    assert loaded.cases and loaded.scenario.name == name


def test_shipped_set_is_complete():
    assert {"quick", "positions-sweep", "kueue-baseline", "tiny"} <= set(loading.shipped())


@pytest.mark.parametrize("name, cases", [("tiny", 2), ("quick", 5), ("positions-sweep", 20), ("kueue-baseline", 1)])
def test_case_counts(name, cases):
    assert len(loading.load(name).cases) == cases


def test_kueue_baseline_numbers():
    scenario = loading.load("kueue-baseline").scenario
    assert len(scenario.queues.cluster_queue_names()) == 30
    quota = scenario.queues.cluster_queues[0].resource_groups[0].flavors[0].resources[0]
    assert (quota.nominal, quota.borrowing_limit) == (20, 100)
    assert [(m.count, m.cpu, m.priority) for m in scenario.load.mix] == [(350, "1", 50), (100, "5", 100), (50, "20", 200)]


@pytest.mark.parametrize("overrides, check", [
    (["scheduler.qps=20"], lambda s: s.scheduler.qps == 20),
    (["phases.fill.pending=77"], lambda s: s.phases["fill"].pending == 77),
    (["cluster.nodes=3", "scheduler.no_client_limit=true"], lambda s: s.cluster.nodes == 3 and s.scheduler.no_client_limit),
    (["measurements.census=false"], lambda s: s.measurements.census is False),
    (["cluster.allow_remote=true"], lambda s: s.cluster.allow_remote and s.cluster.cluster_spec("x").allow_remote),
    (["load.remote_workers=2", "load.master_bind=127.0.0.2:6000"],
     lambda s: planning.distribution(s.load) == {"workers": 0, "remote_workers": 2, "master_bind": "127.0.0.2",
                                                 "master_port": 6000, "worker_start_timeout": 120.0,
                                                 "workers_rejoin": True}),
    ([], lambda s: not s.cluster.allow_remote and planning.distribution(s.load) == {"workers": 0}),
    (["scheduler.kueue_concurrency={Job.batch: 50, Workload.kueue.x-k8s.io: 20}"],
     lambda s: s.scheduler.kueue_concurrency == {"Job.batch": 50, "Workload.kueue.x-k8s.io": 20}),
])
def test_overrides(overrides, check):
    loaded = loading.parse(BASE, "t.yaml", overrides)
    assert check(loaded.cases[0].scenario)


def test_sweep_expands_product_and_repeats():
    loaded = loading.parse(BASE + "repeat: 2\nsweep:\n  scheduler.strategy: [aggregated-snapshot, aggregated-indexed]\n"
                           "  phases.fill.pending: [10, 20]\n", "t.yaml")
    assert len(loaded.cases) == 8
    first = loaded.cases[0]
    assert first.id == "strategy=aggregated-snapshot,pending=10,r0"
    assert first.point == "strategy=aggregated-snapshot,pending=10"
    assert first.scenario.scheduler.strategy == "aggregated-snapshot" and first.scenario.phases["fill"].pending == 10
    assert [c.repeat for c in loaded.cases] == [0] * 4 + [1] * 4  # rounds: every point once, then again
    assert [c.point for c in loaded.cases[:4]] == [c.point for c in loaded.cases[4:]]


def test_sweep_from_set():
    loaded = loading.parse(BASE, "t.yaml", ["sweep.scheduler.strategy=[status-field, single-object]"])
    assert [c.scenario.scheduler.strategy for c in loaded.cases] == ["status-field", "single-object"]


def test_sweeping_a_whole_section_merges_each_variant_and_names_the_case_by_its_keys():
    loaded = loading.parse(BASE + "sweep:\n  scheduler:\n    - {strategy: status-field, qps: 50}\n"
                           "    - {strategy: status-field, no_client_limit: true}\n", "t.yaml",
                           ["scheduler.burst=7"])
    limited, unlimited = (c.scenario.scheduler for c in loaded.cases)
    assert (limited.strategy, limited.qps, limited.no_client_limit, limited.burst) == ("status-field", 50, False, 7)
    assert (unlimited.no_client_limit, unlimited.burst) == (True, 7)
    assert [c.id for c in loaded.cases] == ["strategy=status-field,qps=50,r0",
                                            "strategy=status-field,no_client_limit=True,r0"]


def test_sweeping_a_mapping_field_names_the_empty_mapping_default():
    loaded = loading.parse(BASE, "t.yaml", ["sweep.scheduler.kueue_concurrency=[{}, {Job.batch: 50}]"])
    assert [c.id for c in loaded.cases] == ["kueue_concurrency=default,r0", "Job.batch=50,r0"]
    assert [c.scenario.scheduler.kueue_concurrency for c in loaded.cases] == [{}, {"Job.batch": 50}]
    variants = loading.parse(BASE, "t.yaml", ["sweep.scheduler=[{implementation: kueue}, "
                                              "{implementation: kueue, kueue_concurrency: {Job.batch: 50}}]"])
    assert [c.id for c in variants.cases] == ["implementation=kueue,r0", "implementation=kueue,Job.batch=50,r0"]


def test_one_run_sweeps_the_reference_and_each_kueue_version_each_with_its_own_client_limits():
    loaded = loading.parse(BASE, "t.yaml", ["sweep.scheduler=[{implementation: reference}, "
                                            "{implementation: kueue, kueue_version: v0.17.0}, "
                                            "{implementation: kueue, kueue_version: v0.19.2}]"])
    reference, old, new = (c.scenario.scheduler for c in loaded.cases)
    assert (reference.qps, reference.burst) == (50, 100)  # its own defaults, filled in
    # Kueue's come from the Configuration its module ships, read when it starts
    assert (old.qps, old.burst, old.kueue_version) == (None, None, "v0.17.0")
    assert (new.qps, new.burst, new.kueue_version) == (None, None, "v0.19.2")
    assert loaded.cases[2].id == "implementation=kueue,kueue_version=v0.19.2,r0"
    given = loading.parse(BASE, "t.yaml", ["scheduler.implementation=kueue", "scheduler.qps=20"]).scenario.scheduler
    assert (given.qps, given.burst, given.kueue_version) == (20, None, None)


def test_templates_expand_queues():
    scenario = loading.parse(BASE, "t.yaml").scenario
    assert scenario.queues.cluster_queue_names() == ["cq-0", "cq-1"]
    assert [lq for q in scenario.queues.local_queues for lq in q.expanded()] == [
        ("kqbench-churn", "lq-0", "cq-0"), ("kqbench-churn", "lq-1", "cq-1")]


def test_node_pools_convert():
    scenario = loading.parse(BASE, "t.yaml").scenario
    [pool] = scenario.cluster.node_pools()
    assert pool.count == 5
    assert scenario.cluster.cluster_spec("x").name == "x"


@pytest.mark.parametrize("text, overrides, expected", [
    (BASE.replace("strategy: aggregated-indexed", "strategy: fastest"), [],
     "t.yaml:17: scheduler.strategy: Input should be"),
    (BASE.replace("nodes: 5", "nodes: -5"), [], "t.yaml:3: cluster.nodes: Input should be greater than or equal to 0"),
    (BASE.replace("pending: 10", "pending: -1"), [], "t.yaml:19: phases.fill.pending:"),
    (BASE, ["scheduler.strategy=nope"], "(from --set scheduler.strategy)"),
    (BASE, ["cluster.colour=blue"], "cluster.colour: Extra inputs are not permitted"),
    (BASE + "phases2: 1\n", [], "t.yaml:21: phases2: Extra inputs are not permitted"),
    (BASE.replace("cluster_queue: \"cq-{i}\"", "cluster_queue: \"cq-x{i}\""), [], "points to cluster queue 'cq-x0'"),
    (BASE.replace("flavor: default", "flavor: gold"), [], "uses flavor 'gold'"),
    (BASE + "sweep:\n  scheduler.strategy: [aggregated-indexed, warp]\n", [], "(in sweep scheduler.strategy=warp)"),
    ("name: [x\n", [], "t.yaml:2: not valid YAML"),
    ("- a\n- b\n", [], "t.yaml:1: a scenario is a mapping"),
    (BASE + "  warm: {seconds: 3}\n", [], "phases.warm: a phase needs `kind:`"),
    (BASE, ["novalue"], "--set 'novalue': use PATH=VALUE"),
    (BASE, ["load.master_bind=5557"], "load.master_bind"),
    (BASE, ["scheduler.kueue_concurrency={job.batch: 50}"], "'job.batch' is not Kind.group"),
    (BASE, ["scheduler.kueue_version=v0.18.0"], "Kueue v0.18.0 is not in harness/versions.toml: known versions are v0.17.0, "),
])
def test_errors_are_one_line_with_file_line_field(text, overrides, expected):
    with pytest.raises(loading.ScenarioError) as caught:
        loading.parse(text, "t.yaml", overrides)
    message = str(caught.value)
    assert expected in message
    assert "\n" not in message


def test_missing_file_and_unknown_name():
    with pytest.raises(loading.ScenarioError, match="does not exist"):
        loading.load("/nonexistent/x.yaml")
    with pytest.raises(loading.ScenarioError, match="neither a file nor a shipped scenario"):
        loading.load("no-such-scenario")


def test_strategies_constant_matches_literal():
    assert set(sections.STRATEGIES) == set(sections.Strategy.__args__)


def test_loading_a_scenario_draws_nothing():
    """Validating a scenario imports every driver's phase models, not what only the report draws: matplotlib
    takes about a second to import, so a driver imports its figures when the report asks (a fresh process:
    this one may have imported it already)."""
    code = "import sys; from harness.scenarios import loading; loading.load('quick'); print(sorted(" \
           "m for m in ('matplotlib', 'harness.reporting.plotting') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[3])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
