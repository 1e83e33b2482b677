"""`kqbench capacity` end to end: a tiny search (two designs, two small steps) on real local clusters."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from harness.drivers.capacity import searching
from tests.integration.conftest import run_cli

pytestmark = [pytest.mark.integration, pytest.mark.nightly]  # minutes each: the nightly tier (make test-nightly)


@pytest.fixture(scope="module")
def capacity_run(binaries, state_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("capacity")
    result = run_cli("capacity", "capacity-positions", "--strategies", "aggregated-indexed,single-object",
                     "--from", "100", "--to", "200", "--out", str(out),
                     "--set", "cluster.nodes=1", "--set", "phases.capacity.hold_seconds=10",
                     "--set", "phases.capacity.factor=2",
                     "--set", "phases.capacity.absolute_resolution=50",
                     # at 100-400 pending the churn's lag behind admissions is a large share of the target
                     "--set", "phases.capacity.thresholds.min_fill_share=0.3",
                     "--set", "load.users={churn: 2, querier: 1, bystander: 1, listwatch: 0}",
                     "--set", "load.rates.create_per_second=100", timeout=1500)
    assert result.returncode == 0, result.stderr[-3000:]
    [folder] = [p for p in out.iterdir() if p.is_dir()]
    return folder, result


def test_each_design_is_searched_step_by_step_with_progress(capacity_run):
    folder, result = capacity_run
    steps = pd.read_parquet(folder / "tables" / "capacity_steps.parquet")
    assert set(steps["design"]) == {"aggregated-indexed", "single-object"}
    for design, rows in steps.groupby("design"):
        assert list(rows["load"])[:2] == [100, 200], design
        assert (rows["admissions_per_second"] > 0).all(), design
        # churn keeps more pending at higher steps (below target by admissions/s x its refresh period)
        assert rows["pending"].iloc[1] > rows["pending"].iloc[0] > 0, design
    single = steps[steps["design"] == "single-object"]
    assert (single["largest_object_bytes"] > 0).all()
    assert single["largest_object_bytes"].is_monotonic_increasing  # the one object grows with pending
    assert "step 2 (geometric) at 200 pending" in result.stderr


def test_the_capacity_table_names_each_designs_outcome_and_the_report_shows_it(capacity_run):
    folder, result = capacity_run
    capacity = pd.read_csv(folder / "capacity.csv").set_index("design")
    assert set(capacity.index) == {"aggregated-indexed", "single-object"}
    for design, row in capacity.iterrows():
        assert row["conclusion"] in (searching.HELD_TO_STOP, searching.BROKE, searching.BROKE_BELOW_FLOOR,
                                     searching.UNRESOLVED), design
        if row["conclusion"] == searching.HELD_TO_STOP:
            assert row["max_held"] == 200
        else:
            assert row["broke_on"], design
    assert "Capacity: where each position design breaks" in (folder / "report.html").read_text()
    record = json.loads((folder / "run.json").read_text())
    assert [c["status"] for c in record["cases"]] == ["ok", "ok"]


def test_the_scheduler_restarted_per_step_is_still_scraped_by_the_run(capacity_run):
    folder, _ = capacity_run
    summary = pd.read_parquet(folder / "tables" / "summary.parquet")
    holds = summary[(summary["source"] == "scheduler") & summary["phase"].str.endswith("-hold")]
    assert set(holds.groupby("case")["phase"].nunique()) == {2}  # every hold of both designs
