"""The Locust driver's items of perfdata.json: client latency percentiles per request name (pure)."""

from __future__ import annotations

from harness.drivers import contract
from harness.load import results


def perfdata(tables: contract.Tables, run_id: str) -> list[dict]:
    """One ClientLatency item per row of `load_totals` (perfdash's shape)."""
    totals = tables.get(results.TOTALS_TABLE)
    if totals is None or totals.empty:
        return []
    return [{"data": {"Perc50": float(row["p50_ms"]), "Perc90": float(row["p90_ms"]), "Perc99": float(row["p99_ms"])},
             "unit": "ms", "labels": {"Metric": "ClientLatency", "Name": str(row["name"]), "Case": str(row["case"]),
                                      "Phase": str(row.get("phase", "")), "RunID": run_id}}
            for _, row in totals.iterrows()]
