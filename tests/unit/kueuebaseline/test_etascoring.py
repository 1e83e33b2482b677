"""Expected admission times scored against real admissions: hand-checked tables, the metrics and the report."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from harness.drivers.kueuebaseline import etascoring, reporting, summarising, tabulating

NAN = math.nan
CASE = "estimator=simulator"


def workloads(case: str = CASE) -> pd.DataFrame:
    """a, b reserved at 10 s and 20 s; c seen admitted at 30.4 s (no QuotaReserved time kept); d never
    admitted; e first admitted at 5 s (then evicted and queued again)."""
    return pd.DataFrame({"name": ["a", "b", "c", "d", "e"], "cluster_queue": "cq", "class": "small", "cpu_milli": 1000,
                         "created_s": 0.0, "admitted_s": [10.3, 20.2, 30.4, NAN, 5.1], "finished_s": NAN,
                         "quota_reserved_s": [10.0, 20.0, NAN, NAN, 5.0], "case": case, "phase": "drain"})


ROWS = [  # (read_s, workload, estimated_s, reason)  error, real wait, |error| / wait
    (0.0, "a", 12.0, ""),     # +2, 10, 0.2 (within)
    (5.0, "a", 9.0, ""),      # -1, 5, 0.2 (within)
    (0.0, "b", 30.0, ""),     # +10, 20, 0.5
    (10.0, "b", 16.0, ""),    # -4, 10, 0.4
    (30.0, "c", 30.0, ""),    # -0.4, 0.4 counted as 1 s, 0.4
    (0.0, "d", 50.0, ""),     # never admitted: unadmitted
    (10.0, "e", 12.0, ""),    # read 5 s after its first admission: requeued, not scored
    (0.0, "b", NAN, "no runtime declared"),
    (5.0, "b", NAN, "not estimated yet"),
    (5.0, "d", NAN, "no runtime declared"),
]


def estimates(estimator: str = "simulator", case: str = CASE) -> pd.DataFrame:
    return pd.DataFrame([{"read": int(read_s), "read_s": read_s, "workload": name, "namespace": "ns", "cluster_queue": "cq",
                          "position": 0, "estimator": estimator, "estimated_s": estimated, "reason": reason, "note": "",
                          "snapshot_s": read_s, "age_seconds": 0.0, "case": case, "phase": "drain"}
                         for read_s, name, estimated, reason in ROWS])


def summary(case: str = CASE) -> pd.DataFrame:
    rows = [("count", 12.0), ("p50", 0.01), ("p99", 0.05), ("mean", 0.02)]
    return pd.DataFrame([{"source": "scheduler", "metric": etascoring.REFRESH_CPU, "stat": stat, "labels": "{}",
                          "phase": "drain", "t": 60.0, "value": value, "case": case} for stat, value in rows]
                        + [{"source": "scheduler", "metric": etascoring.REFRESH_CPU, "stat": "p99", "labels": "{}",
                            "phase": "other", "t": 60.0, "value": 9.0, "case": case}])


def test_scores_of_a_hand_checked_table():
    s = etascoring.score(estimates(), workloads(), summary())
    assert (s.estimator, s.estimates, s.scored, s.unadmitted, s.requeued) == ("simulator", 10, 5, 1, 1)
    assert s.abs_error_p50_seconds == pytest.approx(2.0)  # |errors| 0.4, 1, 2, 4, 10
    assert s.abs_error_p90_seconds == pytest.approx(7.6)  # 4 + 0.6 x (10 - 4), linear between order statistics
    assert s.relative_error_p50 == pytest.approx(0.4)  # 0.2, 0.2, 0.4, 0.4, 0.5
    assert s.within_share == pytest.approx(0.4)  # the two at exactly 20 %
    assert s.bias_seconds == pytest.approx(-0.4)  # signed -4, -1, -0.4, 2, 10
    assert s.without_time_share == pytest.approx(0.3)
    assert s.without_time_by_reason == pytest.approx({"no runtime declared": 0.2, "not estimated yet": 0.1})
    # the phase the estimates were read in only: the other phase's p99 is not this one's
    assert (s.refreshes, s.refresh_cpu_p50_seconds, s.refresh_cpu_p99_seconds) == (12.0, 0.01, 0.05)


def test_the_joined_rows_say_what_each_estimate_was_worth():
    rows = etascoring.joined(estimates(), workloads()).set_index(["workload", "read_s"])
    assert rows.loc[("c", 30.0), "real_s"] == pytest.approx(30.4)  # the generator's time where the API's is missing
    assert rows.loc[("b", 0.0), "estimated_wait_s"] == 30.0 and rows.loc[("b", 0.0), "real_wait_s"] == 20.0
    assert not rows.loc[("d", 0.0), "scored"] and not rows.loc[("e", 10.0), "scored"]
    assert len(rows) == 7  # only the estimates with a time


def admissions(case: str = CASE) -> pd.DataFrame:
    """Every reservation: a and b once; e at 5 s, evicted, and again at 15 s; c and d have none kept."""
    return tabulating.admissions_frame({"a": ["1970-01-01T00:00:10Z"], "b": ["1970-01-01T00:00:20Z"],
                                        "e": ["1970-01-01T00:00:05Z", "1970-01-01T00:00:15Z"]}, 0.0).assign(case=case)


def test_an_estimate_read_after_an_eviction_is_scored_against_the_admission_that_followed():
    rows = etascoring.joined(estimates(), workloads(), admissions()).set_index(["workload", "read_s"])
    assert rows.loc[("e", 10.0), "scored"] and rows.loc[("e", 10.0), "real_s"] == pytest.approx(15.0)
    assert rows.loc[("e", 10.0), "error_s"] == pytest.approx(-3.0)
    # the rest as without the table: c by the generator's time, d never admitted
    assert rows.loc[("c", 30.0), "real_s"] == pytest.approx(30.4) and not rows.loc[("d", 0.0), "scored"]
    s = etascoring.score(estimates(), workloads(), summary(), admissions())
    assert (s.scored, s.unadmitted, s.requeued) == (6, 1, 0)


def test_names_of_either_string_dtype_join():
    """As read back from parquet (a string dtype) beside a table built in memory (objects), and the reverse."""
    for left, right in (("string", object), (object, "string")):
        rows = etascoring.joined(estimates().astype({"workload": left}),
                                 workloads().astype({"name": right}), admissions().astype({"name": left}))
        assert int(rows["scored"].sum()) == 6
    empty = admissions().iloc[:0].astype({"name": object})
    assert int(etascoring.joined(estimates().astype({"workload": "string"}), workloads(), empty)["scored"].sum()) == 5


def test_an_estimate_read_after_the_last_admission_is_requeued_not_unadmitted():
    only_first = admissions()[lambda f: ~((f["name"] == "e") & (f["n"] == 1))]
    s = etascoring.score(estimates(), workloads(), summary(), only_first)
    assert (s.scored, s.unadmitted, s.requeued) == (5, 1, 1)


def test_every_reservation_becomes_a_row_on_the_generation_axis():
    frame = tabulating.admissions_frame({"e": ["1970-01-01T00:00:05Z", "1970-01-01T00:00:15Z"], "f": [""]}, 1.0)
    assert frame[["name", "n", "quota_reserved_s"]].values.tolist()[:2] == [["e", 0, 4.0], ["e", 1, 14.0]]
    assert math.isnan(frame["quota_reserved_s"].iloc[2])


def test_the_read_path_cost_is_the_pages_latency_and_bytes_per_entry():
    reads = pd.DataFrame({"read": [0, 0, 1], "cluster_queue": "cq", "offset": 0, "seconds": [0.01, 0.03, 0.02],
                          "entries": [10, 0, 30], "json_bytes": [2000, 80, 5000], "case": CASE})
    s = etascoring.score(estimates(), workloads(), summary(), reads=reads)
    assert s.read_latency_p50_seconds == pytest.approx(0.02)
    assert s.read_bytes_per_entry == pytest.approx(7000 / 40)  # the empty page's bytes are not an entry's
    names = {m.name for m in etascoring.metrics(s)}
    assert {"eta.read_latency_p50_seconds", "eta.read_latency_p99_seconds", "eta.read_bytes_per_entry"} <= names
    assert etascoring.score(estimates(), workloads(), summary()).read_latency_p50_seconds is None


def test_a_scheduler_serving_no_estimates_is_not_scored():
    assert etascoring.score(estimates(estimator=""), workloads()) is None
    assert etascoring.score(estimates().iloc[:0], workloads()) is None


def test_without_a_scrape_there_is_no_refresh_cpu():
    s = etascoring.score(estimates(), workloads())
    assert (s.refreshes, s.refresh_cpu_p50_seconds, s.refresh_cpu_p99_seconds) == (None, None, None)
    assert "eta.refresh_cpu_p99_seconds" not in {m.name for m in etascoring.metrics(s)}


def test_only_untimed_estimates_give_shares_and_no_errors():
    untimed = estimates()[lambda f: f["estimated_s"].isna()]
    s = etascoring.score(untimed, workloads())
    assert s.scored == 0 and s.abs_error_p50_seconds is None and s.within_share is None and s.without_time_share == 1.0
    names = {m.name for m in etascoring.metrics(s)}
    assert "eta.abs_error_p50_seconds" not in names and "eta.without_time_share[no-runtime-declared]" in names


def test_the_metrics_and_their_directions():
    metrics = {m.name: m for m in etascoring.metrics(etascoring.score(estimates(), workloads(), summary()))}
    better = {name: m.better for name, m in metrics.items()}
    assert better == {"eta.scored": "higher", "eta.abs_error_p50_seconds": "lower", "eta.abs_error_p90_seconds": "lower",
                      "eta.relative_error_p50": "lower", "eta.within_20pct_share": "higher",
                      "eta.bias_abs_seconds": "lower", "eta.without_time_share": "lower", "eta.unadmitted": "lower",
                      "eta.refresh_cpu_p50_seconds": "lower", "eta.refresh_cpu_p99_seconds": "lower",
                      "eta.without_time_share[no-runtime-declared]": "lower",
                      "eta.without_time_share[not-estimated-yet]": "lower"}
    assert metrics["eta.bias_abs_seconds"].value == pytest.approx(0.4)
    assert metrics["eta.abs_error_p50_seconds"].unit == "s" and metrics["eta.within_20pct_share"].unit == "ratio"


@pytest.mark.parametrize("reason, label", [("no runtime declared", "no-runtime-declared"), ("beyond budget", "beyond-budget"),
                                           ("not admitted in the forecast", "not-admitted-in-the-forecast"), ("", "none")])
def test_reasons_as_metric_labels(reason, label):
    assert etascoring.slug(reason) == label


def _figures(case: str) -> pd.DataFrame:
    return pd.DataFrame([{"metric": metric, "unit": unit, "kqbench": value, "case": case, "phase": "drain",
                          "implementation": "reference"}
                         for metric, unit, value in (("wall_seconds", "s", 60.0), ("evictions", "count", 0.0))])


def _run_tables() -> dict[str, pd.DataFrame]:
    other = "estimator=rate"
    return {tabulating.FIGURES_TABLE: pd.concat([_figures(CASE), _figures(other)]),
            tabulating.WORKLOADS_TABLE: pd.concat([workloads(), workloads(other)]),
            tabulating.ESTIMATES_TABLE: pd.concat([estimates(), estimates("rate", other)]),
            "summary": summary()}


def test_the_driver_summary_has_each_cases_own_scores():
    tables = _run_tables()
    mine = {m.name: m.value for m in summarising.metrics(tables, CASE)}
    other = {m.name: m.value for m in summarising.metrics(tables, "estimator=rate")}
    assert mine["eta.scored"] == other["eta.scored"] == 5.0
    assert mine["eta.refresh_cpu_p50_seconds"] == 0.01 and "eta.refresh_cpu_p50_seconds" not in other
    assert set(etascoring.scores_by_case(tables)) == {CASE, "estimator=rate"}


def test_the_report_has_the_error_table_and_the_scatter():
    section = reporting.section(_run_tables(), cpus=2)
    assert "expected admission times against real admissions" in section.html
    assert "<td>rate</td>" in section.html and "<td>simulator</td>" in section.html
    titles = dict(section.figures)
    png = titles[reporting.etareporting.TITLE]
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_run_without_estimates_has_no_eta_part():
    tables = {k: v for k, v in _run_tables().items() if k != tabulating.ESTIMATES_TABLE}
    section = reporting.section(tables, cpus=2)
    assert "expected admission times" not in section.html
    assert not any(name.startswith("eta.") for name in (m.name for m in summarising.metrics(tables, CASE)))


def test_repeats_of_a_point_share_a_panel():
    from harness.drivers.kueuebaseline import etareporting

    assert etareporting.point_of("estimator=rate,r2") == "estimator=rate"
    assert etareporting.point_of("estimator=simulator,estimate_max_cpu_seconds=4,r0") == \
        "estimator=simulator,estimate_max_cpu_seconds=4"
    assert etareporting.point_of("all") == "all" and etareporting.point_of("strategy=x,rate=1") == "strategy=x,rate=1"
