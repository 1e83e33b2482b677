"""The side-by-side table: one row per metric, one column per case (or run), units per row, the best
marked and the rest as ratios to it; column labels say what varies and are never shortened."""

from __future__ import annotations

import pytest

from harness.drivers import registry
from harness.reporting import loading, pivoting, rendering
from harness.results import summaries
from tests.unit.reporting import builders


def _summary(run_id: str, rows: list[tuple[str, str, float, str, str]], **interval) -> summaries.Summary:
    summary = summaries.Summary(run_id, "tiny", "ok")
    for metric, point, value, unit, better in rows:
        entry = summaries.Entry(metric, point, value, unit, better, [value], **interval.get(point, {}))
        summary.entries[entry.key] = entry
    return summary


def _view(summary: summaries.Summary, points: list[str]) -> pivoting.RunView:
    return pivoting.RunView(summary.run_id, summary, tuple(points), {p: p.split("=", 1)[-1] for p in points})


def test_a_run_gives_one_row_per_metric_and_one_column_per_case(tmp_path):
    folder = builders.RunBuilder().write(tmp_path)
    loaded = loading.load([folder], registry.drivers())
    pivot, _, _ = rendering.analyse(loaded)
    summary = loaded.views[0].summary
    metrics = {e.metric for e in summary.entries.values() if not e.metric.startswith("ratio.")}
    assert [row.metric for row in pivot.rows if row.metric in metrics] == [row.metric for row in pivot.rows]
    assert sorted(row.metric for row in pivot.rows) == sorted(metrics)
    assert [c.label for c in pivot.columns] == ["status-field", "single-object", "aggregated-indexed"]
    assert all(len(row.cells) == 3 for row in pivot.rows)
    # each value sits in its own case's column
    row = pivot.row("load.position_query_p99_ms")
    assert [cell.value for cell in row.cells] == [15.0, 140.0, 29.0]


def test_best_is_marked_and_others_are_ratios_to_it():
    points = ["strategy=a", "strategy=b", "strategy=c"]
    summary = _summary("r", [("lat", "strategy=a", 20.0, "ms", "lower"), ("lat", "strategy=b", 10.0, "ms", "lower"),
                             ("lat", "strategy=c", 10.0, "ms", "lower"),
                             ("held", "strategy=a", 4000.0, "pending", "higher"),
                             ("held", "strategy=b", 1000.0, "pending", "higher"),
                             ("same", "strategy=a", 1.0, "count", "lower"), ("same", "strategy=b", 1.0, "count", "lower")])
    pivot = pivoting.build([_view(summary, points)])
    lat, held, same = pivot.row("lat"), pivot.row("held"), pivot.row("same")
    assert [c.best for c in lat.cells] == [False, True, True] and lat.cells[0].ratio == 2.0
    assert [c.best for c in held.cells[:2]] == [True, False] and held.cells[1].ratio == 0.25 and held.cells[2] is None
    assert not any(c.best for c in same.cells if c is not None)  # all equal: nothing marked


def test_bytes_are_scaled_per_row_and_units_named():
    summary = _summary("r", [("size", "strategy=a", 3 * 2**20, "B", "lower"), ("size", "strategy=b", 2**20, "B", "lower"),
                             ("rate", "strategy=a", 5.0, "1/s", "lower")])
    pivot = pivoting.build([_view(summary, ["strategy=a", "strategy=b"])])
    assert (pivot.row("size").unit, pivot.row("size").shown(3 * 2**20)) == ("MiB", "3")
    assert pivot.row("rate").unit == "/s"


def test_intervals_and_sample_counts_reach_the_cells():
    summary = _summary("r", [("lat", "strategy=a", 20.0, "ms", "lower"), ("lat", "strategy=b", 10.0, "ms", "lower")],
                       **{"strategy=a": {"low": 18.0, "high": 23.0, "n": 2000}})
    pivot = pivoting.build([_view(summary, ["strategy=a", "strategy=b"])], counts={("lat", "r strategy=b"): 7})
    a, b = pivot.row("lat").cells
    assert (a.low, a.high, a.n, a.has_interval) == (18.0, 23.0, 2000, True)
    assert (b.n, b.has_interval) == (7, False)  # counted from the tables where the summary has no n


@pytest.mark.parametrize("points, heading, labels", [
    (["strategy=status-field", "strategy=single-object"], "strategy", ["status-field", "single-object"]),
    (["strategy=aggregated-indexed", "strategy=status-field,qps=50,burst=100", "strategy=status-field,no_client_limit=True"],
     "strategy", ["aggregated-indexed", "status-field, qps=50, burst=100", "status-field, no_client_limit=True"]),
    (["strategy=a,qps=5", "strategy=a,qps=10"], "qps; all with strategy=a", ["5", "10"]),
    (["x", "y"], "case", ["x", "y"]),
])
def test_column_labels_say_what_varies_and_keep_every_character(points, heading, labels):
    assert pivoting.point_labels(points) == (heading, labels)


def test_several_runs_give_one_column_per_run(tmp_path):
    first = builders.RunBuilder(run_id="20260101-000000-a", designs=[builders.Design("aggregated-indexed")]).write(tmp_path / "a")
    second = builders.RunBuilder(run_id="20260102-000000-b",
                                 designs=[builders.Design("aggregated-indexed", query_p99_ms=60)]).write(tmp_path / "b")
    pivot, answers, _ = rendering.analyse(rendering.load([first, second], registry.drivers()))
    assert pivot.heading == "run" and [c.label for c in pivot.columns] == ["20260101-000000-a", "20260102-000000-b"]
    row = pivot.row("load.position_query_p99_ms")
    assert [c.value for c in row.cells] == [30.0, 60.0] and row.cells[1].ratio == 2.0
    assert next(a for a in answers if a.question.title == "Position latency").best == ("20260101-000000-a",)
    html = rendering.render([first, second], tmp_path / "report.html", registry.drivers()).read_text()
    assert "20260102-000000-b" in html and "×2.00" in html


def test_cases_without_a_single_metric_get_no_column(tmp_path):
    summary = _summary("r", [("lat", "strategy=a", 20.0, "ms", "lower"), ("lat", "strategy=b", 10.0, "ms", "lower")])
    pivot = pivoting.build([_view(summary, ["strategy=a", "strategy=b", "strategy=c"])])
    assert [c.label for c in pivot.columns] == ["a", "b"] and pivot.unmeasured == ("c",)


def test_a_run_with_response_time_histograms_shows_the_summarys_latency_intervals(tmp_path):
    pivot = rendering.pivot_of([builders.RunBuilder().write(tmp_path)], registry.drivers())
    for cell in pivot.row("load.position_query_p99_ms").cells:
        assert cell.has_interval and cell.low <= cell.value <= cell.high and cell.n == 1000  # n: requests
    assert not any(c.has_interval for c in pivot.row("apiserver.write_qps[churn]").cells)  # one repeat: none


def test_without_histograms_the_requests_behind_a_percentile_come_from_the_tables(tmp_path):
    pivot = rendering.pivot_of([builders.RunBuilder(histograms=False).write(tmp_path)], registry.drivers())
    assert [(c.has_interval, c.n) for c in pivot.row("load.bystander_p99_ms").cells] == [(False, 500)] * 3
