"""`kqbench run list-configmaps` scaled down (2 x 100 x 10 KB, 4 workers, 2 modes x 2 arms) on real clusters:
the report has one row per mode and arm with p50/p99, etcd lists and peak apiserver RSS."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.integration.conftest import run_cli

pytestmark = pytest.mark.integration

SMALL = (
    "phases={populate: {namespaces: 2, per_namespace: 100, bytes: 10000},"
    " list-rv0: {kind: list, mode: rv0, workers: 4, seconds: 8},"
    " list-consistent: {kind: list, mode: consistent, workers: 4, seconds: 8}}",
    "sweep.arm=[default, emulated-1.33]",
    "measurements.scrape_interval_seconds=2",
)


@pytest.fixture(scope="module")
def small_run(binaries, state_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    args = [arg for item in SMALL for arg in ("--set", item)]
    result = run_cli("run", "list-configmaps", "--out", str(out), *args, timeout=400)
    assert result.returncode == 0, result.stderr[-3000:]
    [folder] = [p for p in out.iterdir() if p.is_dir()]
    return folder


def test_one_row_per_mode_and_arm(small_run):
    table = pd.read_csv(small_run / "watchcache.csv")
    assert sorted(zip(table["arm"], table["mode"])) == [
        ("default", "consistent"), ("default", "rv0"), ("emulated-1.33", "consistent"), ("emulated-1.33", "rv0")]
    assert (table["lists"] > 0).all() and (table["failures"] == 0).all()
    assert table["p50_ms"].notna().all() and (table["p99_ms"] >= table["p50_ms"]).all()
    assert (table["apiserver_rss_peak_mb"] > 0).all()
    assert (table["mb_per_list"] > 0.9).all()  # 100 ConfigMaps of 10 KB per namespace


def test_where_lists_were_served(small_run):
    rows = pd.read_csv(small_run / "watchcache.csv").set_index(["arm", "mode"])
    # rv=0 never reaches etcd; a consistent list does only when the watch cache may not serve it
    assert rows.loc[("default", "rv0"), "etcd_list_requests"] == 0
    assert rows.loc[("default", "consistent"), "etcd_list_requests"] == 0
    assert rows.loc[("default", "consistent"), "consistent_from_cache"] > 0
    emulated = rows.loc[("emulated-1.33", "consistent")]
    assert emulated["etcd_list_requests"] >= emulated["lists"] - emulated["failures"]


def test_report_has_the_section_and_the_json(small_run):
    html = (small_run / "report.html").read_text()
    assert "Watch cache: list modes x apiserver feature arms" in html and "etcd_list_requests" in html
    saved = json.loads((small_run / "watchcache.json").read_text())
    assert len(saved["rows"]) == 4 and {"p50_ms", "p99_ms", "etcd_list_requests", "apiserver_rss_peak_mb"} <= set(saved["columns"])
