"""The capacity search on fake step functions whose break point is known."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from harness.drivers.capacity import searching


def breaks_above(limit: int, calls: list[int] | None = None):
    """A step function that holds up to `limit` and breaks above it on a named condition."""
    def step(load: int) -> searching.Verdict:
        if calls is not None:
            calls.append(load)
        if load > limit:
            return searching.Verdict(("staleness_p99",), f"staleness p99 at {load}", {"pending": load})
        return searching.Verdict(figures={"pending": load})
    return step


def search(plan: searching.SearchPlan, step) -> searching.Outcome:
    return searching.run(searching.Search(plan), step)


PLAN = searching.SearchPlan(start=1000, stop=100_000)


def test_geometric_loads_double_and_end_at_stop():
    assert PLAN.geometric_loads() == (1000, 2000, 4000, 8000, 16000, 32000, 64000, 100_000)
    assert searching.SearchPlan(start=5, stop=5).geometric_loads() == (5,)


def test_break_point_found_within_resolution_and_named():
    calls: list[int] = []
    outcome = search(PLAN, breaks_above(17_500, calls))
    assert outcome.conclusion == searching.BROKE
    assert outcome.max_held <= 17_500 < outcome.first_broken
    assert outcome.first_broken - outcome.max_held <= PLAN.resolution_at(outcome.max_held)
    assert outcome.breaking_step.verdict.broken == ("staleness_p99",)
    assert calls[:6] == [1000, 2000, 4000, 8000, 16000, 32000]
    assert all(s.stage == searching.BISECTION for s in outcome.steps[6:])
    assert len(calls) <= searching.steps_needed(PLAN)


@given(limit=st.integers(min_value=1000, max_value=99_999), factor=st.sampled_from([1.5, 2.0, 3.0]),
       relative=st.sampled_from([0.05, 0.1, 0.2]))
def test_any_break_point_is_bracketed_within_resolution(limit, factor, relative):
    plan = searching.SearchPlan(start=1000, stop=100_000, factor=factor, relative_resolution=relative, max_steps=40)
    outcome = search(plan, breaks_above(limit))
    assert outcome.conclusion == searching.BROKE
    assert outcome.max_held <= limit < outcome.first_broken
    assert plan.resolved(outcome.max_held, outcome.first_broken)


def test_a_step_that_raises_is_broken_with_its_reason_and_the_search_goes_on():
    def step(load):
        if load == 4000:
            raise RuntimeError("apiserver went away\nsecond line")
        return breaks_above(3000)(load)

    outcome = search(PLAN, step)
    first_error = next(s for s in outcome.steps if s.load == 4000)
    assert first_error.verdict.broken == (searching.ERROR,)
    assert first_error.verdict.detail == "RuntimeError: apiserver went away"
    assert outcome.conclusion == searching.BROKE and outcome.max_held <= 3000 < outcome.first_broken


def test_consecutive_errors_end_the_search():
    calls: list[int] = []

    def step(load):
        calls.append(load)
        if load > 1000:
            raise OSError("connection refused")
        return searching.Verdict()

    outcome = search(PLAN, step)
    assert len(calls) == 1 + PLAN.max_consecutive_errors
    assert outcome.conclusion == searching.UNRESOLVED
    assert (outcome.max_held, outcome.first_broken) == (1000, 1500)


def test_never_breaks_holds_to_stop():
    outcome = search(PLAN, breaks_above(10**9))
    assert outcome.conclusion == searching.HELD_TO_STOP
    assert (outcome.max_held, outcome.first_broken, outcome.breaking_step) == (100_000, None, None)
    assert len(outcome.steps) == len(PLAN.geometric_loads())


def test_breaks_at_first_step_descends_to_the_floor_and_says_so():
    calls: list[int] = []
    outcome = search(PLAN, breaks_above(10, calls))
    assert calls == [1000, 500, 250, 125, 100]  # x1/2, absolute_resolution (100) tried last
    assert [s.stage for s in outcome.steps] == [searching.GEOMETRIC] + [searching.DESCENT] * 4
    assert outcome.conclusion == searching.BROKE_BELOW_FLOOR
    assert (outcome.max_held, outcome.first_broken) == (None, 100)


@pytest.mark.parametrize("limit", [100, 130, 300, 480, 700, 999])
def test_breaks_at_first_step_descends_then_bisects_to_the_resolution(limit):
    plan = searching.SearchPlan(start=1000, stop=16_000, factor=4, relative_resolution=0.2)
    outcome = search(plan, breaks_above(limit))
    assert outcome.conclusion == searching.BROKE
    assert outcome.max_held <= limit < outcome.first_broken
    assert outcome.gap <= plan.resolution_at(outcome.max_held)
    assert {s.stage for s in outcome.steps} >= {searching.GEOMETRIC, searching.DESCENT}


def test_step_limit_leaves_the_search_unresolved_with_its_gap():
    plan = searching.SearchPlan(start=1000, stop=64_000, max_steps=8)
    outcome = search(plan, breaks_above(40_000))
    assert len(outcome.steps) == 8
    assert outcome.conclusion == searching.UNRESOLVED
    assert (outcome.max_held, outcome.first_broken, outcome.gap) == (32_000, 48_000, 16_000)


def test_ctrl_c_propagates_and_finished_steps_stay():
    seen: list[searching.Step] = []

    def step(load):
        if load == 4000:
            raise KeyboardInterrupt
        return searching.Verdict()

    found = searching.Search(PLAN)
    with pytest.raises(KeyboardInterrupt):
        searching.run(found, step, on_step=seen.append)
    assert [s.load for s in seen] == [1000, 2000] == [s.load for s in found.steps]
    outcome = found.outcome(interrupted=True)
    assert (outcome.conclusion, outcome.max_held) == (searching.INTERRUPTED, 2000)


def test_conclude_after_a_changed_verdict_reports_loads_that_held_above_the_break():
    steps = [searching.Step(i, load, searching.GEOMETRIC, searching.Verdict(() if ok else ("x",)))
             for i, (load, ok) in enumerate([(1000, True), (2000, False), (4000, True), (8000, False)])]
    outcome = searching.conclude(PLAN, steps)
    assert (outcome.max_held, outcome.first_broken, outcome.out_of_order) == (1000, 2000, (4000,))


@pytest.mark.parametrize("kwargs, message", [
    ({"start": 0, "stop": 10}, "1 <= from <= to"),
    ({"start": 10, "stop": 5}, "1 <= from <= to"),
    ({"start": 1, "stop": 10, "factor": 1.0}, "factor must be > 1"),
    ({"start": 1, "stop": 10**6, "max_steps": 5}, "raise the factor or max_steps"),
])
def test_bad_plans_say_what_is_wrong(kwargs, message):
    with pytest.raises(ValueError, match=message):
        searching.SearchPlan(**kwargs)


def test_midpoint_is_round_when_it_can_be_and_always_strictly_inside():
    assert searching.midpoint(16_000, 32_000, 100) == 24_000
    assert searching.midpoint(1000, 1150, 100) == 1100
    assert searching.midpoint(1000, 1003, 100) == 1001
