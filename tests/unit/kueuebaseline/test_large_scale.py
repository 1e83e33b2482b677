"""kueue-large-scale: the shipped scenario is Kueue v0.19.2's large-scale configuration, number for number,
its rangespec is read from the module, and a scaled-down copy plans and lists its case (no cluster)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from harness.drivers.kueuebaseline import rangespecs
from harness.load import arrivals
from harness.scenarios import loading
from harness.toolchain import building, gomodules

KUEUE_V0_19_2 = building.module_dir(gomodules.KUEUE_MODULE, "v0.19.2")
KUEUE_V0_17_0 = building.module_dir(gomodules.KUEUE_MODULE, "v0.17.0")


def _module(path: Path) -> Path:
    if not (path / rangespecs.CONFIGS).is_dir():
        pytest.skip(f"{path} is not in the Go module cache (kqbench toolchain build fetches it)")
    return path


def test_the_scenario_is_kueues_large_scale_generator():
    generator = yaml.safe_load((_module(KUEUE_V0_19_2) / rangespecs.CONFIGS / "large-scale/generator.yaml").read_text())
    [cohorts] = generator["cohorts"]
    [queues] = cohorts["queuesSets"]
    scenario = loading.load("kueue-large-scale").scenario
    plan = arrivals.from_scenario(scenario)
    assert len({cohort for cq in scenario.queues.cluster_queues for _, cohort in cq.expanded()}) == cohorts["count"]
    assert len(plan.queues) == cohorts["count"] * queues["count"]
    assert set(plan.nominal_milli.values()) == {queues["nominalQuota"] * 1000}
    quota = scenario.queues.cluster_queues[0].resource_groups[0].flavors[0].resources[0]
    assert quota.borrowing_limit == queues["borrowingLimit"]
    preemption = scenario.queues.cluster_queues[0].preemption
    assert (preemption.reclaim_within_cohort, preemption.within_cluster_queue) == (
        queues["reclaimWithinCohort"], queues["withinClusterQueue"])
    want = [(w["className"], s["count"], w["request"] * 1000, w["runtimeMs"] / 1000, w["priority"],
             s["creationIntervalMs"] / 1000) for s in queues["workloadsSets"] for w in s["workloads"]]
    assert [(c.name, c.count, c.cpu_milli, c.runtime_seconds, c.priority, c.interval_seconds)
            for c in plan.classes] == want
    assert plan.total == 50_000


def test_rangespec_of_large_scale_from_the_module():
    bounds = {b.metric: b for b in rangespecs.load("large-scale", _module(KUEUE_V0_19_2))}
    assert bounds["wall_seconds"].limit == 1416 and bounds["wall_seconds"].average == pytest.approx(1179.411)
    assert not bounds["cq_usage_percent"].upper and bounds["cq_usage_percent"].limit == 31.6
    assert bounds["cq_usage_percent"].average == pytest.approx(38.64)
    assert {m: (b.limit, b.average) for m, b in bounds.items() if m.startswith("time_to_admission")} == {
        "time_to_admission_seconds[large]": (128, 105.604), "time_to_admission_seconds[medium]": (308, 256.413),
        "time_to_admission_seconds[small]": (841, 700.379)}


def test_rangespec_of_the_baseline_gives_the_averages_the_driver_quotes():
    from harness.drivers.kueuebaseline import figures

    bounds = {b.metric: b for b in rangespecs.load("baseline", _module(KUEUE_V0_17_0))}
    assert bounds["wall_seconds"].limit == 425
    assert {m: b.average for m, b in bounds.items()} == pytest.approx(figures.KUEUE_RANGESPEC)


def test_verdicts_judge_both_directions_and_a_missing_figure():
    bounds = rangespecs.parse("cmd:\n  maxWallMs: 1_000\nclusterQueueClassesMinUsage:\n  cq: 50 #%\n"
                              "wlClassesMaxAvgTimeToAdmissionMs:\n  small: 2_000\n")
    verdicts = {v.bound.metric: v.passed for v in rangespecs.verdicts(
        bounds, {"wall_seconds": 1.5, "cq_usage_percent": 50.0})}
    assert verdicts == {"wall_seconds": False, "cq_usage_percent": True, "time_to_admission_seconds[small]": None}


def _scaled(tmp_path: Path) -> Path:
    """The shipped scenario at 2 cohorts x 3 ClusterQueues, one minute's bound: the same classes per queue."""
    data = yaml.safe_load((Path(loading.__file__).parent / "kueue-large-scale.yaml").read_text())
    data["name"] = "kueue-large-scale-scaled"
    data["queues"]["cohorts"][0]["each"] = {"c": 2}
    data["queues"]["cluster_queues"][0]["each"] = {"c": 2, "q": 3}
    data["queues"]["local_queues"][0]["each"] = {"c": 2, "q": 3}
    data["phases"]["churn"]["seconds"] = 60
    path = tmp_path / "kueue-large-scale-scaled.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_scaled_down_copy_plans_the_same_classes_for_fewer_queues(tmp_path):
    scenario = loading.load(str(_scaled(tmp_path))).scenario
    plan = arrivals.from_scenario(scenario)
    assert len(plan.queues) == 6 and plan.total == 6 * 50
    schedule = arrivals.schedule(plan)
    one_queue = [c for c in schedule if c.queue.cluster_queue == "cq-1-2"]
    assert [c.at for c in one_queue if c.workload_class.name == "small"][-1] == pytest.approx(35 * 0.06)
    assert [c.at for c in one_queue if c.workload_class.name == "large"][-1] == pytest.approx(4 * 0.7)


def test_dry_run_lists_the_case_and_starts_nothing(tmp_path):
    from harness.cli import run

    result = CliRunner().invoke(run.command, [str(_scaled(tmp_path)), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert result.stdout.split() == ["r0"]  # one case, one repeat
    assert "needs built: kubernetes" in result.stderr and "kueue" not in result.stderr  # the reference scheduler's


def test_the_peers_run_has_both_implementations_both_arms_two_repeats_and_the_same_shape():
    peers = loading.load(str(Path(__file__).parents[3] / "results/large-scale/kueue-large-scale-peers.yaml"))
    assert len(peers.cases) == 8
    plan = arrivals.from_scenario(peers.scenario)
    shipped = arrivals.from_scenario(loading.load("kueue-large-scale").scenario)
    assert len(plan.queues) == len(shipped.queues) and plan.total == shipped.total
    assert plan.classes == shipped.classes
    weights = [cq.fair_sharing_weight for cq in peers.scenario.queues.cluster_queues]
    assert weights == [None, 2]


def test_a_large_scale_run_is_set_beside_its_own_rangespec_not_the_baselines():
    from harness.drivers.kueuebaseline import figures as figs, tabulating
    from harness.toolchain import building

    assert loading.load("kueue-large-scale").scenario.phases["churn"].kueue_config == "large-scale"
    assert loading.load("kueue-baseline").scenario.phases["churn"].kueue_config == "baseline"
    _module(KUEUE_V0_19_2)
    bounds = rangespecs.shipped("large-scale", building.module_dir)
    record = figs.WorkloadRecord("w", "cq-0-0", "large", 20_000, created=0.0, admitted=130.0, finished=131.0)
    result = figs.compute([record], {"cq-0-0": 20_000}, start=0.0)
    frame = tabulating.figures_frame(result, {}, {}, rangespecs.reference("large-scale", bounds)).set_index("metric")
    assert frame.loc["wall_seconds", "kueue_rangespec_limit"] == 1416 and frame.loc["wall_seconds", "within_rangespec"]
    large = frame.loc["time_to_admission_seconds[large]"]
    assert (large["kueue_rangespec_average"], large["kueue_rangespec_limit"]) == (pytest.approx(105.604), 128)
    assert not large["within_rangespec"]  # 130 s > 128 s
    assert frame["kueue_published"].isna().all()  # Kueue published figures for its baseline only
    baseline = tabulating.figures_frame(result, {}, {}, rangespecs.reference(
        "baseline", rangespecs.shipped("baseline", building.module_dir))).set_index("metric")
    assert baseline.loc["wall_seconds", "kueue_published"] == 351.0
    assert baseline.loc["wall_seconds", "kueue_rangespec_limit"] == 425


def test_without_the_module_there_are_no_limits_and_the_baseline_keeps_its_quoted_figures(tmp_path):
    assert rangespecs.shipped("large-scale", lambda module, version: tmp_path) == ()
    reference = rangespecs.reference("baseline", ())
    assert reference.limits == {} and reference.published["wall_seconds"] == 351.0
    assert rangespecs.reference("large-scale", ()).averages == {}


def test_the_summary_counts_the_rangespec_bounds_a_case_breaks():
    import pandas as pd

    from harness.drivers.kueuebaseline import summarising, tabulating

    frame = pd.DataFrame([("c1", "wall_seconds", "s", 1500.0, False), ("c1", "cq_usage_percent", "%", 40.0, True),
                          ("c1", "evictions", "count", 3.0, None), ("c2", "wall_seconds", "s", 100.0, True)],
                         columns=["case", "metric", "unit", "kqbench", "within_rangespec"])
    tables = {tabulating.FIGURES_TABLE: frame}
    by_case = {case: {m.name: m.value for m in summarising.metrics(tables, case)} for case in ("c1", "c2")}
    assert by_case["c1"]["kueue.rangespec_failures"] == 1 and by_case["c2"]["kueue.rangespec_failures"] == 0
    no_limits = {tabulating.FIGURES_TABLE: frame.assign(within_rangespec=None)}
    assert "kueue.rangespec_failures" not in {m.name for m in summarising.metrics(no_limits, "c1")}
