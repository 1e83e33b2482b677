"""Writes to Workloads per admitted Workload, by verb, in each case of a run (waitForPodsReady's cost).

    .venv/bin/python benchmarks/scripts/lifecycle/workload-writes.py results/lifecycle/pods-ready-cost-RUN

Reads the run's `tables/summary.csv`: kube-apiserver's `apiserver_request_total` deltas in the phase
that admitted (`jobs`) for the `workloads` resource and its subresources, writing verbs only, over the
admissions either scheduler counted (`kqbench_scheduler_admitted_total`, `kueue_admitted_workloads_total`).
Bytes per admission, where the run has them: what the writers sent (`apiserver_request_body_size_bytes`, by
verb; runs from before kqbench scraped it have none) and what kube-apiserver sent its watchers of Workloads
(`apiserver_watch_events_sizes`: every event to every watch, so it grows with the number of watchers).
Beside them, the CPU seconds the scheduler process spent in the phase (`cpu_seconds` of the component
`scheduler`, the reference's or Kueue's manager), for what a backlog's retries cost it.
Writes `workload-writes.json` into the run folder (case -> writes per admission by verb_subresource, e.g.
apply_status, their sum, the bytes and the scheduler's CPU seconds), which the README's tables read.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

PHASE = "jobs"
WRITES = ("POST", "PUT", "PATCH", "APPLY", "DELETE")
ADMITTED = {"scheduler": "kqbench_scheduler_admitted_total", "kueue": "kueue_admitted_workloads_total"}
WORKLOADS = {"group": "kueue.x-k8s.io", "resource": "workloads"}
BYTES = {"request_body_bytes": "apiserver_request_body_size_bytes", "watch_event_bytes": "apiserver_watch_events_sizes"}


def _bytes(rows: pd.DataFrame, metric: str) -> float | None:
    """The sum over the phase of a byte histogram's Workload series (None: the run did not scrape it)."""
    mine = rows[(rows["metric"] == metric) & (rows["stat"] == "sum")]
    values = [float(v) for labels, v in zip(mine["labels"], mine["value"])
              if all(json.loads(labels).get(k) == want for k, want in WORKLOADS.items())]
    return sum(values) if values else None


def per_case(folder: Path) -> dict[str, dict]:
    frame = pd.read_csv(folder / "tables" / "summary.csv", keep_default_na=False)
    phase = frame[frame["phase"] == PHASE]
    deltas = phase[phase["stat"] == "delta"]
    out = {}
    for case in sorted(deltas["case"].unique()):
        mine = deltas[deltas["case"] == case]
        admitted = float(mine[mine["metric"].isin(ADMITTED.values())]["value"].sum())
        requests = mine[mine["metric"] == "apiserver_request_total"]
        by_verb: dict[str, float] = {}
        for labels, value in zip(requests["labels"], requests["value"]):
            label = json.loads(labels)
            if label.get("resource") == "workloads" and label.get("verb") in WRITES:
                key = "_".join(filter(None, (label["verb"].lower(), label.get("subresource", ""))))
                by_verb[key] = by_verb.get(key, 0.0) + float(value)
        per_admission = {k: v / admitted for k, v in sorted(by_verb.items())} if admitted else {}
        name = case.rpartition(",r")[0].replace("implementation=", "").replace(",wait_for_pods_ready=", "_")
        out[name] = {"case": case, "admitted": admitted, "per_admission": per_admission,
                     "total_per_admission": sum(per_admission.values())}
        cpu = mine[(mine["metric"] == "cpu_seconds")
                   & mine["labels"].map(lambda text: json.loads(text).get("component") == "scheduler")]
        if len(cpu):
            out[name]["scheduler_cpu_seconds"] = float(cpu["value"].sum())
        for key, metric in BYTES.items():
            total = _bytes(phase[phase["case"] == case], metric)
            if total is not None and admitted:
                out[name][f"{key}_per_admission"] = total / admitted
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a pods-ready-cost run folder")
    args = parser.parse_args()
    record = per_case(args.run)
    (args.run / "workload-writes.json").write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
