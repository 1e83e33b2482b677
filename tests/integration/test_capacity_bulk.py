"""`kqbench capacity --bulk` end to end: each step's pending written straight into etcd, the churn on top."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.integration.conftest import run_cli

pytestmark = pytest.mark.integration


def test_bulk_steps_reach_their_pending_at_once_and_the_churn_keeps_only_its_share(binaries, state_dir, tmp_path):
    result = run_cli("capacity", "capacity-positions", "--strategies", "aggregated-indexed",
                     "--from", "1000", "--to", "2000", "--bulk", "--out", str(tmp_path),
                     "--set", "cluster.nodes=1", "--set", "phases.capacity.hold_seconds=10",
                     "--set", "phases.capacity.factor=2", "--set", "phases.capacity.absolute_resolution=500",
                     "--set", "load.users={churn: 2, querier: 1, bystander: 1, listwatch: 0}",
                     "--set", "load.rates.create_per_second=100", timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    [folder] = [p for p in tmp_path.iterdir() if p.is_dir()]
    steps = pd.read_parquet(folder / "tables" / "capacity_steps.parquet")
    assert list(steps["load"])[:2] == [1000, 2000]
    # a churn fill of 100 creates/s would need 10-20 s per step to get here; the backlog is there at once
    assert (steps["pending"] / steps["load"] >= 0.9).all(), steps[["load", "pending"]]
    assert (steps["admissions_per_second"] > 0).all()
    assert "backlog: 950 Workloads written and held by the scheduler" in result.stderr
    assert "backlog: 1950 Workloads written and held by the scheduler" in result.stderr
    assert "each step bulk-loaded, the churn keeping 50 of it" in result.stderr
