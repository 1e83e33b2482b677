"""`kqbench capacity --bulk` end to end: each step's pending written straight into etcd, the churn on top."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.integration.conftest import run_cli

pytestmark = [pytest.mark.integration, pytest.mark.nightly]  # minutes each: the nightly tier (make test-nightly)


def test_bulk_steps_load_their_pending_and_the_churn_keeps_only_its_share(binaries, state_dir, tmp_path):
    result = run_cli("capacity", "capacity-positions", "--strategies", "aggregated-indexed",
                     "--from", "2000", "--to", "4000", "--bulk", "--out", str(tmp_path),
                     "--set", "cluster.nodes=1", "--set", "phases.capacity.hold_seconds=10",
                     "--set", "phases.capacity.factor=2", "--set", "phases.capacity.absolute_resolution=1000",
                     "--set", "load.users={churn: 2, querier: 1, bystander: 1, listwatch: 0}",
                     "--set", "load.rates.create_per_second=100", timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    [folder] = [p for p in tmp_path.iterdir() if p.is_dir()]
    steps = pd.read_parquet(folder / "tables" / "capacity_steps.parquet")
    assert list(steps["load"])[:2] == [2000, 4000], steps[["load", "pending", "detail"]]
    # What the hold admits of the backlog is replaced, so a step keeps its pending (the default min_fill_share, 0.8)
    share = steps["pending"] / steps["load"]
    assert (share > 0.8).all(), steps[["load", "pending", "detail"]]
    assert (steps["admissions_per_second"] > 0).all()
    said = " ".join(result.stderr.split())  # the terminal wraps long lines
    # free quota admits a batch's first Workloads at once: they are topped up so that 1950 / 3950 stay pending
    assert "1950 of them kept pending" in said and "3950 of them kept pending" in said
    assert "each step bulk-loaded, the churn keeping 50 of it" in said
    assert "replaced" in said and "with new pending ones" in said
