"""The figures the README reads from the per-Job table, per case, into the jobs_figures table git keeps:
appends `step_p50_seconds:FROM:TO` rows (the p50 from each step of a Job to each later one) and
`last_job_complete_seconds` to tables/jobs_figures.parquet of each jobs run folder given whose figures predate
them (a newer run's driver writes them).

The README blocks' `step:FROM:TO` and `last_complete` rows came from the per-Job table
(tables/jobs_jobs.parquet, up to 1.2 MiB a run), which leaves git for the results store; the rows are the same
function of it (harness.drivers.jobs.tabulating.per_job_rows), so a block renders the same from either. A new row
takes the other columns (phase, implementation, ...) of its case's rows for all classes; the existing rows stay
as they are, and jobs_figures.csv is left alone. Re-runnable: a figure a case has is left as it is.

    .venv/bin/python benchmarks/scripts/jobs/per-job-rows.py results/jobs/peers-10k-20261201-032413 ...
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from harness.drivers.jobs import tabulating


def _new_rows(figures: pd.DataFrame, jobs: pd.DataFrame) -> pd.DataFrame:
    """The per-Job figures (tabulating.per_job_rows) each case of figures lacks, each with the columns of its
    case's overall rows."""
    overall = figures[figures["job_class"].fillna("") == ""]
    parts = []
    for case, mine in overall.groupby("case", sort=False):
        rows = pd.DataFrame(tabulating.per_job_rows(jobs[jobs["case"] == case]),
                            columns=["metric", "value", "unit", "job_class"])
        rows = rows[~rows["metric"].isin(set(mine["metric"]))]
        if rows.empty:
            continue
        shared = [c for c in figures.columns if c not in rows.columns]
        for column in shared:
            values = mine[column].drop_duplicates()
            if len(values) != 1:
                raise SystemExit(f"case {case}: its rows differ in {column} ({', '.join(map(str, values))})")
            rows[column] = values.iloc[0]
        parts.append(rows[list(figures.columns)])
    return pd.concat(parts, ignore_index=True) if parts else figures.iloc[:0]


def main(folders: list[str]) -> int:
    for name in folders:
        tables = Path(name) / "tables"
        target = tables / f"{tabulating.FIGURES_TABLE}.parquet"
        figures = pd.read_parquet(target)
        source = tables / f"{tabulating.JOBS_TABLE}.parquet"
        if not source.is_file():
            print(f"{name}: no {source.name} here: `kqbench results pull {source}` brings it back", file=sys.stderr)
            return 1
        added = _new_rows(figures, pd.read_parquet(source))
        if added.empty:
            print(f"{name}: every case has the per-Job figures; nothing to do")
            continue
        merged = pd.concat([figures, added.astype(figures.dtypes.to_dict())], ignore_index=True)
        merged.to_parquet(target, index=False)
        print(f"{name}: {len(added)} rows for {added['case'].nunique()} cases, {target.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
