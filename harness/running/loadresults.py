"""A Locust run's frames as result tables, tagged with the phase that produced them."""

from __future__ import annotations

import pandas as pd

from harness.errors import KqbenchError


def run_load(plan, out_dir) -> object:
    """Run a load plan; a failed run is a one-line KqbenchError."""
    from loadtests import running

    try:
        return running.run(plan, out_dir)
    except running.LoadError as error:
        raise KqbenchError(str(error).splitlines()[0]) from None


def phase_tables(result, phase_name: str) -> dict[str, pd.DataFrame]:
    """load_history / load_totals / load_failures with a leading `phase` column."""
    tables = {}
    for name, frame in (("load_history", result.history), ("load_totals", result.totals),
                        ("load_failures", result.failures)):
        framed = frame.copy()
        framed.insert(0, "phase", phase_name)
        tables[name] = framed
    return tables
