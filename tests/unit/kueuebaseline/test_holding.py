"""How long quota was held, from the API's times and the generator's clock (pure)."""

import pandas as pd
import pytest

from harness.drivers.kueuebaseline import holding


def _row(case: str, cpu: int, reserved: str, finished: str, seen: float, evictions: int = 0) -> dict:
    return {"case": case, "cpu_milli": cpu, "evictions": evictions, "admitted_seconds": seen,
            "api_quota_reserved": reserved, "api_finished": finished}


def test_weighted_by_cpu_and_split_into_the_lag_before_the_generator_saw_it():
    frame = pd.DataFrame([
        _row("a,r0", 1000, "2026-12-04T00:00:00Z", "2026-12-04T00:00:01Z", 0.5),
        _row("a,r0", 3000, "2026-12-04T00:00:10Z", "2026-12-04T00:00:15Z", 2.0),
    ])
    figures = holding.hold_figures(frame)["a,r0"]
    assert figures["decided_to_finished_seconds"] == pytest.approx((1 * 1 + 3 * 5) / 4)
    assert figures["seen_seconds"] == pytest.approx((1 * 0.5 + 3 * 2.0) / 4)
    assert figures["decision_to_seen_seconds"] == pytest.approx(4.0 - 1.625)


def test_evicted_unfinished_and_other_cases_are_kept_apart():
    frame = pd.DataFrame([
        _row("a,r0", 1000, "2026-12-04T00:00:00Z", "2026-12-04T00:00:02Z", 1.0),
        _row("a,r0", 1000, "2026-12-04T00:00:00Z", "2026-12-04T00:01:00Z", 1.0, evictions=1),
        _row("a,r0", 1000, "2026-12-04T00:00:00Z", "", 1.0),
        _row("b,r0", 2000, "2026-12-04T00:00:00Z", "2026-12-04T00:00:04Z", 3.0),
    ])
    figures = holding.hold_figures(frame)
    assert figures["a,r0"]["decided_to_finished_seconds"] == pytest.approx(2.0)
    assert figures["b,r0"]["decision_to_seen_seconds"] == pytest.approx(1.0)


def test_a_table_without_the_api_times_gives_nothing():
    assert holding.hold_figures(pd.DataFrame([{"case": "a,r0", "cpu_milli": 1000}])) == {}


def test_the_holds_table_a_run_keeps_in_git_says_what_the_workloads_table_says(tmp_path):
    frame = pd.DataFrame([
        _row("a,r0", 1000, "2026-12-04T00:00:00Z", "2026-12-04T00:00:02Z", 1.5),
        _row("b,r1", 2000, "2026-12-04T00:00:00Z", "2026-12-04T00:00:04Z", 3.0),
    ])
    path = tmp_path / f"{holding.TABLE}.parquet"
    holding.holds_frame(frame).to_parquet(path, index=False)
    assert holding.from_holds_frame(pd.read_parquet(path)) == holding.hold_figures(frame)
