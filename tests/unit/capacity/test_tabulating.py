"""Capacity tables: steps round-trip through their table; the capacity table applies the post-pass;
the paper model predicts from fitted costs."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.drivers.capacity import conditions, extrapolating, searching, tabulating

PLAN = searching.SearchPlan(start=1000, stop=8000)
THRESHOLDS = conditions.BreakThresholds()


def _search(strategy: str, no_limit: bool, results: list[tuple[int, tuple[str, ...], dict]]):
    name = tabulating.design(strategy, no_limit)
    limit = tabulating.client_limit(no_limit, 50, 100)
    plan = tabulating.plan_row(name, strategy, limit, "queue.pending", PLAN, 30, THRESHOLDS)
    steps = [tabulating.step_row(name, strategy, limit, f"capacity-{i:02d}",
                                 searching.Step(i, load, searching.GEOMETRIC,
                                                searching.Verdict(broken, "; ".join(broken), figures)))
             for i, (load, broken, figures) in enumerate(results)]
    return plan, steps


def _tables(*searches):
    plans = pd.concat([p for p, _ in searches], ignore_index=True)
    steps = pd.concat([s for _, rows in searches for s in rows], ignore_index=True)
    return {tabulating.PLANS: plans, tabulating.STEPS: steps}


def _fig(n, admissions, **more):
    return {"pending": n, "admissions_per_second": admissions, **more}


INDEXED = _search("aggregated-indexed", False, [
    (1000, (), _fig(1000, 100, query_p99_seconds=0.010)), (2000, (), _fig(2000, 100, query_p99_seconds=0.011)),
    (4000, (), _fig(4000, 100, query_p99_seconds=0.012)), (8000, (), _fig(8000, 100, query_p99_seconds=0.013))])
STATUS = _search("status-field", False, [
    (1000, (), _fig(1000, 95, position_writes_per_second=50, position_writes_demanded_per_second=50)),
    (2000, (), _fig(2000, 80, position_writes_per_second=50, position_writes_demanded_per_second=400)),
    (4000, (conditions.STALENESS,), _fig(4000, 70, position_writes_per_second=50,
                                         position_writes_demanded_per_second=800, staleness_p99_seconds=45))])
STATUS_FREE = _search("status-field", True, [
    (1000, (), _fig(1000, 100, position_writes_per_second=100, position_writes_demanded_per_second=100)),
    (2000, (), _fig(2000, 100, position_writes_per_second=300, position_writes_demanded_per_second=400))])
SINGLE = _search("single-object", False, [
    (1000, (), _fig(1000, 100, largest_object_bytes=100_000)),
    (2000, (), _fig(2000, 100, largest_object_bytes=200_000)),
    (4000, (), _fig(4000, 100, largest_object_bytes=400_000)),
    (8000, (conditions.WRITE_REFUSED,), _fig(8000, 100, largest_object_bytes=400_000, refused_position_writes=3))])


def test_steps_round_trip_through_their_table():
    tables = _tables(STATUS)
    [(name, steps)] = tabulating.steps_of(tables[tabulating.STEPS]).items()
    assert name == "status-field"
    assert [(s.load, s.verdict.broken) for s in steps] == [(1000, ()), (2000, ()), (4000, ("staleness_p99",))]
    assert steps[2].verdict.figures["staleness_p99_seconds"] == 45
    assert "largest_object_bytes" not in steps[0].verdict.figures  # not measured stays not measured
    [(plan, thresholds, _)] = tabulating.plans_of(tables[tabulating.PLANS]).values()
    assert (plan, thresholds) == (PLAN, THRESHOLDS)


def test_capacity_table_names_the_break_and_applies_the_admissions_postpass():
    table = tabulating.capacity(_tables(INDEXED, STATUS, STATUS_FREE, SINGLE)).set_index("design")
    status = table.loc["status-field"]
    # 80 admissions/s at 2000 is 80% of aggregated-indexed's 100: broken after the post-pass
    assert (status["max_held"], status["first_broken"], status["broke_on"]) == (1000, 2000, "admissions_vs_indexed")
    assert status["at_step_admissions_share_of_indexed"] == pytest.approx(0.8)
    assert status["conclusion"] == searching.UNRESOLVED  # the gap 1000..2000 is wider than 10%: no re-search
    single = table.loc["single-object"]
    assert (single["max_held"], single["first_broken"], single["broke_on"]) == (4000, 8000, "write_refused")
    assert single["at_step_refused_position_writes"] == 3
    indexed = table.loc["aggregated-indexed"]
    assert (indexed["conclusion"], indexed["max_held"], indexed["broke_on"]) == (searching.HELD_TO_STOP, 8000, "")
    assert table.loc["status-field, no client limit", "client_limit"] == "none"


def test_capacity_table_of_a_run_without_steps_is_empty():
    assert tabulating.capacity({}).empty


def test_paper_model_fits_each_design_and_predicts_its_break():
    tables = _tables(INDEXED, STATUS, STATUS_FREE, SINGLE)
    steps = tabulating.judged_steps(tables)
    capacity = tabulating.capacity(tables)
    assert extrapolating.write_capacity(steps) == (300.0, True)
    predicted = extrapolating.predict(steps, capacity).set_index("design")
    single = predicted.loc["single-object"]
    assert single["predicted_break_here"] == pytest.approx(extrapolating.ETCD_REQUEST_LIMIT_BYTES / 100)
    assert single["at_100k_and_large_churn"] == "breaks"
    status = predicted.loc["status-field"]
    assert status["predicted_break_here"] == 30 * 50  # sweeping 1500 positions at 50 writes/s takes 30 s
    assert status["at_100k_and_large_churn"] == "breaks"
    indexed = predicted.loc["aggregated-indexed"]
    assert indexed["predicted_break_here"] > 1e6 and indexed["at_100k_and_large_churn"] == "holds"
    assert predicted.loc["status-field", "measured_first_broken"] == 2000


def test_report_section_writes_the_small_files_and_draws(tmp_path):
    from harness.drivers.capacity import reporting

    body, [(title, png)] = reporting.section(_tables(INDEXED, STATUS, STATUS_FREE, SINGLE), tmp_path)
    assert "write_refused" in body and "Paper model" in body
    assert png.startswith(b"\x89PNG") and "pending" in title
    written = pd.read_csv(tmp_path / tabulating.CAPACITY_CSV)
    assert list(written["design"]) == ["aggregated-indexed", "status-field", "status-field, no client limit",
                                       "single-object"]
    assert (tmp_path / reporting.MODEL_CSV).is_file()
    assert reporting.section({}) is None


def test_variants_put_the_reference_first_and_run_status_field_twice():
    found = tabulating.variants(["status-field", "single-object", "aggregated-indexed"], 50.0, 100)
    assert [(v["strategy"], v.get("no_client_limit", False)) for v in found] == [
        ("aggregated-indexed", False), ("status-field", False), ("status-field", True), ("single-object", False)]
    assert found[1]["qps"] == 50 and "qps" not in found[2]


def test_a_nearly_flat_log_fit_predicts_no_break_instead_of_overflowing():
    flat = _search("aggregated-indexed", False, [
        (1000, (), _fig(1000, 100, query_p99_seconds=0.0100000)),
        (2000, (), _fig(2000, 100, query_p99_seconds=0.0100001))])  # slope 1e-7 s per doubling: 2**1e7
    tables = _tables(flat)
    predicted = extrapolating.predict(tabulating.judged_steps(tables), tabulating.capacity(tables))
    row = predicted.set_index("design").loc["aggregated-indexed"]
    assert row["predicted_break_here"] == float("inf") and row["at_100k_and_large_churn"] == "holds"
