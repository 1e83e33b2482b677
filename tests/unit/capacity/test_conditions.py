"""Break conditions: each named when its figure passes its threshold, the admissions one after all strategies."""

from __future__ import annotations

import pydantic
import pytest

from harness.drivers.capacity import conditions, searching

DEFAULTS = conditions.BreakThresholds()


def test_defaults_are_the_ones_the_capacity_report_states():
    assert (DEFAULTS.refused_position_writes, DEFAULTS.staleness_p99_seconds, DEFAULTS.bystander_p99_seconds,
            DEFAULTS.list_p99_seconds, DEFAULTS.throttled_share, DEFAULTS.query_p99_seconds,
            DEFAULTS.admissions_share_of_indexed, DEFAULTS.min_fill_share) == (0, 30.0, 1.0, 30.0, 0.001, 1.0, 0.9, 0.8)


@pytest.mark.parametrize("figures, broken", [
    ({}, ()),
    ({"staleness_p99_seconds": 29.9, "bystander_p99_seconds": 0.2, "query_p99_seconds": 1.0}, ()),
    ({"refused_position_writes": 1}, (conditions.WRITE_REFUSED,)),
    ({"staleness_p99_seconds": 45.0}, (conditions.STALENESS,)),
    ({"bystander_p99_seconds": 1.5}, (conditions.BYSTANDER,)),
    ({"list_p99_seconds": 31.0}, (conditions.LIST,)),
    ({"requests": 10_000, "throttled_requests": 10}, ()),
    ({"requests": 10_000, "throttled_requests": 11}, (conditions.THROTTLED,)),
    ({"throttled_requests": 50}, ()),  # without a request count there is no share to judge
    ({"fill_share": 0.85}, ()),
    ({"fill_share": 0.5}, (conditions.FILL_SHORT,)),
    ({"query_p99_seconds": 2.0, "refused_position_writes": 3, "staleness_p99_seconds": 100.0},
     (conditions.WRITE_REFUSED, conditions.STALENESS, conditions.QUERY)),
])
def test_each_condition_is_named_when_its_figure_passes_the_threshold(figures, broken):
    verdict = conditions.verdict(DEFAULTS, conditions.StepFigures.from_dict(figures))
    assert verdict.broken == broken
    assert verdict.held == (not broken)


def test_the_detail_says_value_and_threshold_and_thresholds_come_from_the_spec():
    strict = conditions.BreakThresholds(staleness_p99_seconds=5)
    verdict = conditions.verdict(strict, conditions.StepFigures(staleness_p99_seconds=7.25, pending=4000))
    assert verdict.detail == "position staleness p99 7.25 s > 5.00 s"
    assert verdict.figures == {"pending": 4000, "staleness_p99_seconds": 7.25}


def test_thresholds_reject_unknown_and_negative_fields():
    with pytest.raises(pydantic.ValidationError):
        conditions.BreakThresholds(staleness_seconds=3)
    with pytest.raises(pydantic.ValidationError):
        conditions.BreakThresholds(query_p99_seconds=-1)


def _steps(*points, broken=()):
    return tuple(searching.Step(i, load, searching.GEOMETRIC,
                                searching.Verdict(broken,
                                                  figures={"admissions_per_second": rate}))
                 for i, (load, rate) in enumerate(points))


def test_admissions_postpass_breaks_steps_below_the_share_of_the_reference_at_the_same_load():
    steps = {
        conditions.REFERENCE_STRATEGY: _steps((1000, 100.0), (2000, 100.0), (4000, 80.0)),
        "status-field": _steps((1000, 95.0), (2000, 85.0), (3000, 85.0), (4000, 75.0)),
    }
    amended = conditions.admissions_postpass(DEFAULTS, steps)
    status = {s.load: s.verdict for s in amended["status-field"]}
    assert status[1000].held
    assert status[2000].broken == (conditions.ADMISSIONS,) and "85% of aggregated-indexed's 100.0/s" in status[2000].detail
    assert status[3000].held  # 85 vs 90 interpolated between 2000 and 4000: 94%
    assert status[4000].held  # 75 / 80 = 94%
    assert status[1000].figures["admissions_share_of_indexed"] == pytest.approx(0.95)  # shown when it held too
    assert amended[conditions.REFERENCE_STRATEGY] == steps[conditions.REFERENCE_STRATEGY]
    outcome = searching.conclude(searching.SearchPlan(start=1000, stop=4000), amended["status-field"])
    assert (outcome.max_held, outcome.first_broken, outcome.out_of_order) == (1000, 2000, (3000, 4000))


def test_admissions_postpass_leaves_steps_outside_the_reference_range_and_without_reference_alone():
    steps = {conditions.REFERENCE_STRATEGY: _steps((2000, 100.0)), "single-object": _steps((1000, 1.0), (4000, 1.0))}
    assert conditions.admissions_postpass(DEFAULTS, steps)["single-object"] == steps["single-object"]
    alone = {"single-object": _steps((1000, 1.0))}
    assert conditions.admissions_postpass(DEFAULTS, alone) == alone


def test_admissions_postpass_keeps_earlier_breaches_first():
    reference = _steps((1000, 100.0))
    broken = (searching.Step(0, 1000, searching.GEOMETRIC,
                             searching.Verdict((conditions.STALENESS,), "stale", {"admissions_per_second": 10.0})),)
    [step] = conditions.admissions_postpass(DEFAULTS, {conditions.REFERENCE_STRATEGY: reference, "x": broken})["x"]
    assert step.verdict.broken == (conditions.STALENESS, conditions.ADMISSIONS)
    assert step.verdict.detail.startswith("stale; admissions 10.0/s")
    assert step.verdict.figures["admissions_share_of_indexed"] == pytest.approx(0.1)


def test_a_broken_step_says_whether_the_machine_had_cores_to_spare():
    busy = conditions.StepFigures(bystander_p99_seconds=2.0, machine_cores=1.9, cores_available=2.0,
                                  apiserver_cores=1.2, scheduler_cores=0.3, etcd_cores=0.1, others_cores=0.3)
    found = conditions.verdict(conditions.BreakThresholds(), busy)
    assert found.detail.endswith("[the machine's limit: 1.90 of 2 cores busy (kube-apiserver 1.20, "
                                 "scheduler 0.30, etcd 0.10, others 0.30)]")
    idle = conditions.StepFigures(bystander_p99_seconds=2.0, machine_cores=0.8, cores_available=2.0)
    assert "[not the machine's cores: 0.80 of 2 cores busy ()]" in conditions.verdict(conditions.BreakThresholds(), idle).detail
    assert "[" not in conditions.verdict(conditions.BreakThresholds(), conditions.StepFigures(bystander_p99_seconds=2.0)).detail
