"""A fill with `bulk: true` end to end on a real cluster: the backlog written straight into etcd, held by
the reference scheduler before the phase ends, the churn going first on top of it, and admitted backlog
Workloads finished by the keeper instead of holding their quota for ever.

StrictFIFO, so that "first" is the queue order: under BestEffortFIFO a churn Workload that was tried
while the quota was full waits parked for the next requeue (1 s after a release, as in Kueue), and
backlog Workloads not tried yet take the freed quota before it: Kueue's semantics, not a test of order."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.integration.conftest import run_cli

pytestmark = pytest.mark.integration

PENDING = 400
SCENARIO = f"""
name: backlog-fill
description: a bulk backlog beneath a small churn on a small cluster
cluster: {{backend: kwok, nodes: 10}}
queues:
  flavors: [{{name: default}}]
  cluster_queues:
    - name: cq-0
      queueing_strategy: StrictFIFO
      resource_groups:
        - covered_resources: [cpu, memory]
          flavors:
            - flavor: default
              resources: [{{name: cpu, nominal: 6}}, {{name: memory, nominal: 24Gi}}]
  local_queues:
    - {{name: "lq-{{i}}", cluster_queue: cq-0, each: {{i: 2}}}}
scheduler: {{strategy: aggregated-indexed, qps: 50}}
phases:
  fill: {{pending: {PENDING}, bulk: true, churn_pending: 6, timeout_seconds: 120}}
  churn: {{seconds: 25}}
load:
  users: {{churn: 1, querier: 1, bystander: 0}}
  rates: {{create_per_second: 5, query_per_second: 2}}
  mix:
    - {{weight: 1, priority: 10, cpu: "1", runtime_seconds: 3}}
measurements: {{scrape_interval_seconds: 5}}
"""


@pytest.fixture(scope="module")
def run(binaries, state_dir, tmp_path_factory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("backlog")
    scenario = folder / "backlog-fill.yaml"
    scenario.write_text(SCENARIO)
    result = run_cli("run", str(scenario), "--out", str(folder / "runs"), "--no-report", timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    [out] = [p for p in (folder / "runs").iterdir() if p.is_dir()]
    return out, result.stdout + result.stderr


def test_the_scheduler_held_the_whole_backlog_before_the_fill_ended(run):
    out, _ = run
    assert json.loads((out / "run.json").read_text())["status"] == "ok"
    loaded = pd.read_parquet(out / "tables" / "backlog.parquet")
    assert sorted(loaded["queue"]) == ["lq-0", "lq-1"] and loaded["workloads"].sum() == PENDING
    assert (loaded["held_seconds"] >= 0).all() and (loaded["write_seconds"] > 0).all()


def test_the_churn_went_first_and_the_keeper_freed_what_the_backlog_was_admitted(run):
    out, printed = run
    totals = pd.read_parquet(out / "tables" / "load_totals.parquet")
    churn = totals[totals["phase"] == "churn"].groupby("name")["successes"].sum()  # names are "VERB path user"
    # Churn Workloads (priority 10) were admitted and finished on top of 400 backlog ones (priority 9):
    # had the backlog kept its quota, no churn Workload would have been admitted, nor finished.
    assert churn.get("POST workloads churn", 0) > 0, churn
    assert churn.get("PATCH workloads/status churn-finish", 0) > 0, churn
    finished = [line for line in printed.splitlines() if "backlog keeper: finished" in line]
    assert finished, printed[-2000:]
    assert int(finished[-1].split("finished ")[1].split()[0]) > 0  # admitted while no churn waited, then freed
