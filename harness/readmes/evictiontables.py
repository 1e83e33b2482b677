"""README table of a kueue-baseline run's evictions, per case on average (every case of the implementation), by the Preempted condition's reason
and the classes of preemptor and victim, one column per implementation: the report's own table
(harness/drivers/kueuebaseline/reporting.evictions_table), from the run's `tables/kueue_evictions.parquet`.

Spec of a `kueue-evictions` block (paths relative to the README):

    run: fair-100cq-stretched
    columns: {ours: reference, Kueue: kueue}    # header -> the cases' implementation
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.drivers.kueuebaseline import reporting, tabulating
from harness.errors import KqbenchError
from harness.readmes import inputs, markdown


def _mean(value: float) -> str:
    return f"{value:,.1f}"


def _figures(run: Path) -> pd.DataFrame:
    path = run / "tables" / f"{tabulating.FIGURES_TABLE}.csv"
    if not path.is_file():
        raise inputs.missing(path, f"is {run} a kueue-baseline run folder?")
    return pd.read_csv(path)


def evictions(spec: dict, folder: Path) -> str:
    run = folder / spec["run"]
    columns: dict[str, str] = spec["columns"]
    figures = _figures(run)
    known = set(figures["implementation"].unique())
    unknown = [name for name in columns.values() if name not in known]
    if unknown:
        raise KqbenchError(f"{run}: no case of {', '.join(unknown)} (its implementations: {', '.join(sorted(known))})")
    path = run / "tables" / f"{tabulating.EVICTIONS_TABLE}.parquet"
    if not path.is_file():
        raise inputs.missing(path)
    table = reporting.evictions_table(pd.read_parquet(path), figures)
    # An implementation that evicted nothing has no column of its own.
    counts = {header: table[name] if name in table.columns else pd.Series(0.0, index=table.index)
              for header, name in columns.items()}
    rows = [[reason, preemptor, victim, *(_mean(counts[h][i]) for h in columns)]
            for i, (reason, preemptor, victim) in enumerate(zip(table["reason"], table["preemptor_class"],
                                                                  table["victim_class"]))]
    rows.append(["all", "", "", *(_mean(counts[h].sum()) for h in columns)])
    return markdown.table(["reason", "preemptor", "victim", *columns], rows)
