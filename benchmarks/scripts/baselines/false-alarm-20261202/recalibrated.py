"""The gate's verdicts on this folder's runs, re-derived with the calibrated position p50
(`ratio.position_query_p50_ms.over_calibration`) and the thresholds of ci/thresholds.yaml at the
commit that added it. The runs predate that metric: each strategy's calibration is the median of its
cases' calibration p50s (summary.json `calibration.cases`, in run.json's case order), taken as exact
(the runs kept no calibration latencies, so the calibration side has no interval of its own).

    .venv/bin/python results/baselines/false-alarm-20261202/scripts/recalibrated.py

writes each run's verdicts as `kqbench compare --json` would (`<run>/compare-recalibrated.json`, what the
README's tables read).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from harness.drivers.locust import summarising
from harness.reporting import comparing
from harness.results import headlines, summaries

ROOT = Path(__file__).resolve().parents[4]
HERE = ROOT / "results" / "baselines" / "false-alarm-20261202"


def recalibrated(folder: Path) -> summaries.Summary:
    summary = summaries.read(folder / "summary.json")
    cases = json.loads((folder / "run.json").read_text())["cases"]
    measured = summary.calibration.cases
    if len(cases) != len(measured):
        sys.exit(f"{folder}: {len(cases)} cases but {len(measured)} calibrations")
    by_point: dict[str, list[float]] = {}
    for case, p50 in zip(cases, measured):
        by_point.setdefault(case["point"], []).append(p50)
    for point, values in by_point.items():
        value = statistics.median(values)
        entry = summaries.Entry(headlines.CALIBRATION_METRIC, point, value, "ms", "lower", values, value, value,
                                1000, 0.001)
        summary.entries[entry.key] = entry
    for entry in summaries.calibrated_ratios(list(summary.entries.values()), summarising.CALIBRATED_METRICS):
        summary.entries[entry.key] = entry
    return summary


def main() -> None:
    rules = comparing.load_thresholds(ROOT / "ci" / "thresholds.yaml")
    base = recalibrated(HERE / "baseline-run")
    for folder in sorted(p for p in HERE.iterdir() if p.name.startswith(("same-", "changed-"))):
        rows = comparing.compare(base, recalibrated(folder), rules)
        document = comparing.document(rows, "baseline-run (recalibrated)", f"{folder.name} (recalibrated)",
                                      "ci/thresholds.yaml")
        (folder / "compare-recalibrated.json").write_text(json.dumps(document, indent=1) + "\n")
        print(folder.name, ", ".join(f"{n} {v}" for v, n in document["counts"].items() if n))


if __name__ == "__main__":
    main()
