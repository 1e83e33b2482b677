"""Results layer: run ids, run.json and summary.json versions, tidy tables round trip, summary numbers."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pandas as pd
import pytest

from harness.errors import KqbenchError
from harness.drivers import contract, registry
from harness.reporting import loading
from harness.results import runs, summaries, tables
from harness.stats import intervals


def test_run_id_is_sortable_and_safe():
    now = dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    assert runs.new_run_id("Positions Sweep!", now) == "20250102-030405-positions-sweep"


def test_unique_folder_never_reuses(tmp_path):
    first = runs.unique_folder(tmp_path, "x")
    second = runs.unique_folder(tmp_path, "x")
    assert first.name == "x" and second.name == "x-2"


@pytest.mark.parametrize("data, error", [
    ({"schema_version": runs.SCHEMA_VERSION + 1}, "newer than this kqbench"),
    ({}, "no schema_version"),
])
def test_run_json_refuses_newer_or_unversioned(tmp_path, data, error):
    (tmp_path / "run.json").write_text(json.dumps(data))
    with pytest.raises(KqbenchError, match=error):
        runs.read_run(tmp_path)


def test_run_json_round_trip(tmp_path):
    record = runs.RunRecord("r", "tiny", "tiny.yaml", {"name": "tiny"}, [],
                            cases=[runs.CaseRecord("a,r0", "a", {"x": 1}, 0, status="ok")])
    runs.write_run(tmp_path, record)
    back = runs.read_run(tmp_path)
    assert back == record and back.cases[0].status == "ok"


def test_run_json_missing_a_required_field_is_named(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"schema_version": runs.SCHEMA_VERSION, "run_id": "r"}))
    with pytest.raises(KqbenchError, match="not a complete run record"):
        runs.read_run(tmp_path)


def test_every_committed_run_reads_back_typed():
    from pathlib import Path

    folders = [p.parent for p in (Path(__file__).parents[3] / "results").rglob("run.json")]
    assert folders
    for folder in folders:
        record = runs.read_run(folder)
        assert record.cases and all(isinstance(c, runs.CaseRecord) for c in record.cases), folder


def test_tables_round_trip_parquet_and_csv(tmp_path):
    obs = tables.observations([("c", "bringup", "nodes_per_second", {"b": 2, "a": 1}, "bringup", 0.0, 10.0)])
    assert obs["labels"][0] == '{"a":"1","b":"2"}'
    tables.write(tmp_path, {"observations": [obs, obs]})
    assert (tmp_path / "tables" / "observations.csv").exists()
    back = tables.read(tmp_path)["observations"]
    assert list(back.columns) == list(tables.OBSERVATION_COLUMNS) and len(back) == 2


def _tables(case: str, query_p99: float, write_rate: float) -> dict[str, pd.DataFrame]:
    obs = tables.observations([(case, "bringup", "nodes_per_second", {}, "bringup", 0.0, 100.0)])
    summary = pd.DataFrame([
        {"case": case, "source": "apiserver", "metric": "apiserver_request_total", "stat": "rate",
         "labels": '{"verb":"POST"}', "phase": "churn", "t": 1.0, "value": write_rate},
        {"case": case, "source": "apiserver", "metric": "apiserver_request_total", "stat": "rate",
         "labels": '{"verb":"GET"}', "phase": "churn", "t": 1.0, "value": 1000.0},
    ])
    totals = pd.DataFrame([{"case": case, "phase": "churn", "verb": "GET", "name": "GET clusterqueues/pendingworkloads visibility-cq",
                            "requests": 10, "failures": 0, "p50_ms": query_p99 / 2, "p99_ms": query_p99}])
    slo = pd.DataFrame([{"case": case, "passed": True}, {"case": case, "passed": False}])
    return {"observations": obs, "summary": summary, "load_totals": totals, "slo": slo}


def _concat(*parts):
    names = set().union(*parts)
    return {n: pd.concat([p[n] for p in parts if n in p], ignore_index=True) for n in names}


def _run(cases):
    return runs.RunRecord("r", "s", "s.yaml", {}, [], status="ok",
                          cases=[runs.CaseRecord(f"strategy={s},r{r}", f"strategy={s}", {"scheduler.strategy": s}, r,
                                                 status="ok") for s, r in cases])


def test_summary_takes_medians_of_repeats_and_within_run_ratios():
    run = _run([("aggregated-indexed", 0), ("aggregated-indexed", 1), ("aggregated-indexed", 2),
                ("aggregated-snapshot", 0)])
    data = _concat(_tables("strategy=aggregated-indexed,r0", 10.0, 5.0),
                   _tables("strategy=aggregated-indexed,r1", 30.0, 5.0),
                   _tables("strategy=aggregated-indexed,r2", 20.0, 5.0),
                   _tables("strategy=aggregated-snapshot,r0", 40.0, 7.0))
    summary = summaries.summarise(run, data, registry.drivers())
    entry = summary.entries["load.position_query_p99_ms @ strategy=aggregated-indexed"]
    assert entry.value == 20.0 and sorted(entry.samples) == [10.0, 20.0, 30.0]
    assert summary.entries["apiserver.write_qps[churn] @ strategy=aggregated-snapshot"].value == 7.0
    assert summary.entries["slo.failed_checks @ strategy=aggregated-indexed"].value == 1.0
    assert summary.entries["ratio.position_query_p99_ms.indexed_over_snapshot @ all"].value == pytest.approx(0.5)


def test_summary_skips_unmeasured_and_skipped_cases():
    run = _run([("aggregated-indexed", 0)])
    run.cases[0].status = "skipped"
    assert summaries.summarise(run, _tables("strategy=aggregated-indexed,r0", 1.0, 1.0), registry.drivers()).entries == {}
    assert summaries.summarise(_run([("aggregated-indexed", 0)]), {}, registry.drivers()).entries == {}


def test_summary_json_versioned(tmp_path):
    summary = summaries.Summary("r", "s", "ok", {"m @ p": summaries.Entry("m", "p", 1.0, "s", "lower", [1.0])})
    summaries.write(tmp_path, summary)
    assert summaries.read(tmp_path).entries["m @ p"].value == 1.0
    data = json.loads((tmp_path / "summary.json").read_text())
    data["schema_version"] = summaries.SCHEMA_VERSION + 1
    (tmp_path / "summary.json").write_text(json.dumps(data))
    with pytest.raises(KqbenchError, match="newer"):
        summaries.read(tmp_path)


def test_summary_entries_carry_interval_and_sample_count(tmp_path):
    entry = summaries.Entry("m", "p", 1.0, "ms", "lower", [1.0], low=0.8, high=1.3, n=1000)
    summaries.write(tmp_path, summaries.Summary("r", "s", "ok", {entry.key: entry}))
    back = summaries.read(tmp_path).entries["m @ p"]
    assert (back.low, back.high, back.n) == (0.8, 1.3, 1000)
    assert summaries.read(tmp_path).schema_version == summaries.SCHEMA_VERSION == 4


def test_the_seed_of_an_interval_is_in_the_entrys_json_and_a_version_3_entry_reads_without_one(tmp_path):
    entry = summaries.estimate("kueue.ratio_to_kueue.wall_seconds", "p",
                               [contract.Metric("w", v, "ratio", "lower") for v in (0.63, 0.58, 0.67)])
    summaries.write(tmp_path, summaries.Summary("r", "s", "ok", {entry.key: entry}))
    data = json.loads((tmp_path / "summary.json").read_text())
    assert data["metrics"][entry.key]["seed"] == intervals.SEED and data["metrics"][entry.key]["low"] > 0
    assert summaries.read(tmp_path).entries[entry.key].seed == intervals.SEED
    del data["metrics"][entry.key]["seed"]
    data["schema_version"] = 3
    (tmp_path / "summary.json").write_text(json.dumps(data))
    back = summaries.read(tmp_path)
    assert back.entries[entry.key].seed is None and back.entries[entry.key].low == entry.low


@pytest.mark.parametrize("version, recomputed", [(1, True), (2, True), (3, False), (summaries.SCHEMA_VERSION, False)])
def test_a_report_reads_a_summary_as_written_unless_older_than_its_figures(tmp_path, monkeypatch, version, recomputed):
    """A version-3 summary is not summarised again from its run's tables (mostly out of git) for want of seeds."""
    summary = summaries.Summary("r", "s", "ok", {"m @ p": summaries.Entry("m", "p", 1.0, "s", "lower", [1.0])},
                                schema_version=version)
    summaries.write(tmp_path, summary)
    again = summaries.Summary("r", "s", "ok")
    monkeypatch.setattr(summaries, "summarise", lambda *args: again)
    found = loading._summary(tmp_path, None, {"a_table": pd.DataFrame()}, ())
    assert (found is again) == recomputed


def test_version_1_summary_reads_without_intervals():
    baseline = Path(__file__).resolve().parents[3] / "results" / "baselines" / "quick-v1-20261129-110045.summary.json"
    summary = summaries.read(baseline)
    assert summary.schema_version == 1 and summary.entries
    assert all(e.low is None and e.high is None and e.n is None for e in summary.entries.values())


def test_measurements_meta_is_saved_with_the_tables_and_checked(tmp_path):
    from harness.metrics import frames

    obs = tables.observations([("c", "bringup", "nodes_per_second", {}, "bringup", 0.0, 10.0)])
    meta = {"schema_version": frames.SCHEMA_VERSION, "phases": [{"name": "churn", "start": 0.0, "end": 5.0}]}
    tables.write(tmp_path, {"observations": obs}, {"c": meta})
    assert tables.read_meta(tmp_path) == {"c": meta} and "observations" in tables.read(tmp_path)
    tables.write(tmp_path, {"observations": obs}, {"c": {**meta, "schema_version": frames.SCHEMA_VERSION + 1}})
    with pytest.raises(KqbenchError, match="newer than this kqbench reads"):
        tables.read(tmp_path)


def _latency_rows(case: str, name: str, counts: dict[int, int]) -> pd.DataFrame:
    return pd.DataFrame([{"case": case, "phase": "churn", "verb": "GET", "name": name, "ms": ms, "count": count}
                         for ms, count in counts.items()])


def test_summary_bootstraps_latency_quantiles_over_the_requests_of_every_repeat():
    name = "GET clusterqueues/pendingworkloads visibility-cq"
    run = _run([("aggregated-indexed", 0), ("aggregated-indexed", 1), ("aggregated-indexed", 2)])
    parts = []
    for r, slow in enumerate((20, 22, 21)):
        case = f"strategy=aggregated-indexed,r{r}"
        parts.append({**_tables(case, float(slow), 5.0 + r),
                      "load_latency": _latency_rows(case, name, {5: 400, 10: 580, slow: 20})})
    summary = summaries.summarise(run, _concat(*parts), registry.drivers())
    p99 = summary.entries["load.position_query_p99_ms @ strategy=aggregated-indexed"]
    assert p99.n == 3000 and p99.low <= p99.value <= p99.high and p99.samples == [20.0, 22.0, 21.0]
    p50 = summary.entries["load.position_query_p50_ms @ strategy=aggregated-indexed"]
    assert p50.value == 10.0 and p50.n == 3000
    qps = summary.entries["apiserver.write_qps[churn] @ strategy=aggregated-indexed"]
    assert (qps.value, qps.n) == (6.0, 3) and qps.low < 6.0 < qps.high
