"""Expected admission times scored in the run that served them, end to end through `kqbench run` on a real kwok
cluster: 12 Workloads of 1 CPU (each declaring its 1.5 s runtime) into a ClusterQueue with quota for 2, the
reference scheduler running the simulator, the kueue-baseline phase reading every pending Workload's estimate
every 2 s. Asserted: the estimates table has rows, every scored estimate's Workload was really admitted (its
QuotaReserved condition), and the eta.* metrics and the report part exist; no assertion on times."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from harness.drivers.kueuebaseline import etareporting, etascoring, tabulating
from tests.integration.conftest import run_cli

pytestmark = pytest.mark.integration

WORKLOADS = 12
RUNTIME_SECONDS = 1.5
SCENARIO = f"""
name: eta-scoring-tiny
description: "12 Workloads, quota for 2, the simulator's estimates read every 2 s and scored"
cluster: {{backend: kwok, nodes: 1}}
queues:
  flavors: [{{name: default}}]
  cluster_queues:
    - name: cq
      resource_groups:
        - covered_resources: [cpu]
          flavors: [{{flavor: default, resources: [{{name: cpu, nominal: 2}}]}}]
  local_queues: [{{name: lq, cluster_queue: cq}}]
scheduler:
  implementation: reference
  strategy: aggregated-indexed
  no_client_limit: true
  estimator: simulator
  estimate_refresh_seconds: 1
phases:
  drain: {{kind: kueue-baseline, seconds: 120, rangespec: false, estimates_every_seconds: 2}}
load:
  users: {{churn: 0, querier: 0, bystander: 0}}
  mix:
    - {{weight: 1, priority: 0, cpu: "1", runtime_seconds: {RUNTIME_SECONDS}, per_second: 10, count: {WORKLOADS}}}
measurements:
  scrape_interval_seconds: 2
  census: false
"""


@pytest.fixture(scope="module")
def run(binaries, state_dir, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("eta-scoring")
    scenario = folder / "eta-scoring-tiny.yaml"
    scenario.write_text(SCENARIO)
    out = folder / "runs"
    result = run_cli("run", str(scenario), "--out", str(out), timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    [found] = [p for p in out.iterdir() if p.is_dir()]
    return found


def table(out: Path, name: str) -> pd.DataFrame:
    return pd.read_parquet(out / "tables" / f"{name}.parquet")


def test_estimates_were_read_and_every_scored_one_was_really_admitted(run):
    assert json.loads((run / "run.json").read_text())["status"] == "ok"
    estimates, workloads = table(run, tabulating.ESTIMATES_TABLE), table(run, tabulating.WORKLOADS_TABLE)
    assert len(estimates) > 0 and set(estimates["estimator"]) == {"simulator"}
    assert len(workloads) == WORKLOADS and workloads["quota_reserved_s"].notna().all()
    assert (workloads["declared_runtime_s"] == RUNTIME_SECONDS).all()
    admissions = table(run, tabulating.ADMISSIONS_TABLE)
    # every Workload's reservations, the first of them the one kueue_workloads keeps
    firsts = admissions[admissions["n"] == 0].set_index("name")["quota_reserved_s"]
    assert set(firsts.index) == set(workloads["name"])
    assert (firsts.reindex(workloads["name"]).to_numpy() == workloads["quota_reserved_s"].to_numpy()).all()
    joined = etascoring.joined(estimates, workloads, admissions)
    scored = joined[joined["scored"]]
    assert len(scored) > 0
    reserved = set(workloads.loc[workloads["quota_reserved_s"].notna(), "name"])
    assert set(scored["workload"]) <= reserved
    assert (scored["real_s"] >= scored["read_s"] - etascoring.RESOLUTION_SECONDS).all()


def test_the_summary_and_the_report_carry_the_scores(run):
    metrics = json.loads((run / "summary.json").read_text())["metrics"]
    for name in ("eta.scored", "eta.abs_error_p50_seconds", "eta.abs_error_p90_seconds", "eta.relative_error_p50",
                 "eta.within_20pct_share", "eta.bias_abs_seconds", "eta.without_time_share",
                 "eta.refresh_cpu_p50_seconds", "eta.refresh_cpu_p99_seconds"):
        assert any(key.startswith(name) for key in metrics), name
    assert etareporting.TITLE in (run / "report.html").read_text()
