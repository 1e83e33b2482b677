"""The estimators' scores in a scoring run (results/eta/*-scoring.yaml), per estimator over the run's repeats.

    .venv/bin/python benchmarks/scripts/eta/scores.py results/eta/baseline-scoring-RUN

Reads the run's `summary.json` (the kueue-baseline driver's `eta.*` metrics, one sample per repeat of each
estimator's point) and writes `scores.json` into the run folder: per estimator (a point with more settings
than the estimator is named by them too, `simulator-max-cpu-seconds-4`) and metric, the median of the repeats
with the lowest and highest, and each simulator's over the moving average's for the absolute errors (the
README's table reads it).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

METRICS = ("eta.scored", "eta.abs_error_p50_seconds", "eta.abs_error_p90_seconds", "eta.relative_error_p50",
           "eta.within_20pct_share", "eta.bias_abs_seconds", "eta.without_time_share", "eta.refresh_cpu_p50_seconds",
           "eta.refresh_cpu_p99_seconds", "eta.read_latency_p50_seconds", "eta.read_latency_p99_seconds",
           "eta.read_bytes_per_entry", "kueue.scheduler_cpu_seconds", "kueue.writes_per_admission")
"""The scores, the read path's cost and what the scheduler spent in the same case (its CPU, its writes)."""
POINT = "estimator="


def variant(point: str) -> str:
    """A sweep point as a name: `estimator=simulator` -> `simulator`; the point's other settings follow it
    (`estimator=simulator,estimate_max_cpu_seconds=4` -> `simulator-max-cpu-seconds-4`)."""
    estimator, *others = point.split(POINT, 1)[1].split(",")
    return "-".join([estimator, *(part.removeprefix("estimate_").replace("_", "-").replace("=", "-")
                                  for part in others)])


def per_estimator(metrics: dict) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for entry in metrics.values():
        if entry["metric"] not in METRICS or POINT not in entry["point"]:
            continue
        estimator = variant(entry["point"])
        samples = [s for s in entry["samples"] if s is not None]
        if samples:
            out.setdefault(estimator, {})[entry["metric"].split(".", 1)[1]] = {
                "median": statistics.median(samples), "low": min(samples), "high": max(samples), "n": len(samples)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a scoring run folder")
    args = parser.parse_args()
    scores = per_estimator(json.loads((args.run / "summary.json").read_text())["metrics"])
    record = {"estimators": scores}
    moving = scores.get("moving-average", {})
    for key, scored in scores.items():
        if not key.startswith("simulator"):
            continue
        for name in ("abs_error_p50_seconds", "abs_error_p90_seconds"):
            if name in moving and name in scored and moving[name]["median"]:
                prefix = key.replace("-", "_")
                record[f"{prefix}_over_moving_average_{name}"] = scored[name]["median"] / moving[name]["median"]
    (args.run / "scores.json").write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
