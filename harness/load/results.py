"""A Locust run's frames as result tables, tagged with the phase that produced them.

Shared with the drivers that run Locust users of their own (the watch-cache list phases).
"""

from __future__ import annotations

import pandas as pd

from harness.errors import KqbenchError
from loadtests import running

HISTORY_TABLE = "load_history"
TOTALS_TABLE = "load_totals"
FAILURES_TABLE = "load_failures"
LATENCY_TABLE = "load_latency"
"""Whole-phase response-time histogram per request name: what latency intervals are bootstrapped from."""
HDR_TABLE = "load_hdr"
"""Whole-phase HDR histogram (us, encoded) per request name: the latencies at their real resolution."""
WORKERS_TABLE = "load_workers"
"""Per Locust worker (local or on another host): requests, failures and CPU seconds it reported."""
TABLES = (HISTORY_TABLE, TOTALS_TABLE, FAILURES_TABLE, LATENCY_TABLE, HDR_TABLE, WORKERS_TABLE)


def run_load(plan, out_dir) -> object:
    """Run a load plan; a failed run is a one-line KqbenchError."""
    try:
        return running.run(plan, out_dir)
    except running.LoadError as error:
        raise KqbenchError(str(error).splitlines()[0]) from None


def phase_tables(result, phase_name: str) -> dict[str, pd.DataFrame]:
    """load_history / load_totals / load_failures / load_latency / load_hdr / load_workers with a leading `phase` column."""
    tables = {}
    for name, frame in ((HISTORY_TABLE, result.history), (TOTALS_TABLE, result.totals),
                        (FAILURES_TABLE, result.failures), (LATENCY_TABLE, result.latencies), (HDR_TABLE, result.hdr),
                        (WORKERS_TABLE, result.workers)):
        framed = frame.copy()
        framed.insert(0, "phase", phase_name)
        tables[name] = framed
    return tables
