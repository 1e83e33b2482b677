"""A jobs README block's step rows: one figure per step pair in jobs_figures (which git keeps), the same as
computing it from the per-Job table (which leaves git)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from harness.drivers.jobs import tabulating
from harness.readmes import blocks, jobstables, rendering

CASE = "implementation=reference,r0"


def _jobs() -> pd.DataFrame:
    """Four Jobs; admitted -> unsuspended takes 1, 2, 3, 4 s (p50 2 s lower-interpolated, 2.5 s linear);
    one Job never ran, and no Job's Workload finished."""
    nan = math.nan
    return pd.DataFrame({
        "case": [CASE] * 4, "created_s": [0.0, 0.0, 0.0, 0.0], "admitted_s": [1.0, 2.0, 3.0, 4.0],
        "unsuspended_s": [2.0, 4.0, 6.0, 8.0], "first_running_s": [5.0, 6.0, 7.0, nan],
        "completed_s": [35.0, 36.0, 37.0, nan], "workload_finished_s": [nan, nan, nan, nan]})


def test_step_rows_are_lower_interpolated_p50s_of_every_later_step_and_leave_out_a_pair_no_job_has():
    rows = {row["metric"]: row for row in tabulating.step_rows(_jobs())}
    assert rows["step_p50_seconds:admitted:unsuspended"] == {
        "metric": "step_p50_seconds:admitted:unsuspended", "value": 2.0, "unit": "s", "job_class": ""}
    assert rows["step_p50_seconds:unsuspended:first_running"]["value"] == 2.0  # 3, 2, 1 s: the fourth Job never ran
    assert rows["step_p50_seconds:created:completed"]["value"] == 36.0
    # 15 ordered pairs of the six steps, less the 5 that end at workload_finished
    assert len(rows) == 10 and not any(name.endswith(":workload_finished") for name in rows)
    assert list(rows)[:2] == ["step_p50_seconds:created:admitted", "step_p50_seconds:created:unsuspended"]


def test_the_per_job_figures_add_when_the_last_job_was_complete():
    rows = {row["metric"]: row["value"] for row in tabulating.per_job_rows(_jobs())}
    assert rows[tabulating.LAST_COMPLETE_METRIC] == 37.0  # the Job that never ran is not counted
    assert set(rows) - {tabulating.LAST_COMPLETE_METRIC} == {row["metric"] for row in tabulating.step_rows(_jobs())}
    none_complete = _jobs().assign(completed_s=math.nan)
    assert tabulating.LAST_COMPLETE_METRIC not in {row["metric"] for row in tabulating.per_job_rows(none_complete)}


def _run(folder: Path, figures_have_steps: bool, jobs_table: bool) -> Path:
    tables = folder / "tables"
    tables.mkdir(parents=True)
    rows = [{"metric": "wall_seconds", "value": 40.0, "unit": "s", "job_class": ""}]
    rows += tabulating.step_rows(_jobs()) if figures_have_steps else []
    figures = pd.DataFrame(rows).assign(case=CASE, phase="jobs", implementation="reference")
    figures.to_parquet(tables / "jobs_figures.parquet", index=False)
    if jobs_table:
        _jobs().assign(phase="jobs").to_parquet(tables / "jobs_jobs.parquet", index=False)
    return folder


def _table(run: Path, tmp_path: Path) -> list[str]:
    text = (f"<!-- table: jobs-cases\nrun: {run}\ncolumns: {{ours: \"{CASE}\"}}\n"
            "rows: [\"step:admitted:unsuspended\", \"step:first_running:completed\", \"step:completed:workload_finished\"]"
            "\n-->\n<!-- end table -->")
    return blocks.render(text, "x.md", rendering.BUILDERS, tmp_path).split("-->\n")[1].split("\n")[2:5]


def test_a_step_row_renders_from_jobs_figures_alone_as_it_did_from_jobs_jobs(tmp_path):
    from_figures = _table(_run(tmp_path / "new", figures_have_steps=True, jobs_table=False), tmp_path)
    from_jobs = _table(_run(tmp_path / "old", figures_have_steps=False, jobs_table=True), tmp_path)
    assert from_figures == from_jobs == ["| admitted -> unsuspended p50 | 2.0 s |",
                                         "| first pod Running -> Complete p50 | 30.0 s |",
                                         "| Complete -> Workload Finished p50 | n/a |"]


def test_a_run_without_step_figures_still_needs_its_jobs_table(tmp_path):
    with pytest.raises(blocks.BlockError, match="jobs_jobs.parquet"):
        _table(_run(tmp_path / "old", figures_have_steps=False, jobs_table=False), tmp_path)


def test_a_step_row_goes_forward():
    assert jobstables.row("step:created:workload_finished").label == "created -> Workload Finished p50"
    with pytest.raises(Exception, match="FROM first"):
        jobstables.row("step:completed:admitted")
