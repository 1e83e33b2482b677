"""The scheduler-on-the-cluster benchmark's figures: counters to per-unit costs, bounded waits, ratios."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import scheduler_cluster_figures as figs

APISERVER = """# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",group="kueue.x-k8s.io",resource="workloads",subresource="status",verb="APPLY",version="v1beta2"} 40
apiserver_request_total{code="200",component="apiserver",group="kueue.x-k8s.io",resource="workloads",subresource="status",verb="PUT",version="v1beta2"} 2
apiserver_request_total{code="201",component="apiserver",group="",resource="events",subresource="",verb="POST",version="v1"} 20
apiserver_request_total{code="200",component="apiserver",group="kueue.x-k8s.io",resource="workloads",subresource="",verb="LIST",version="v1beta2"} 7
apiserver_request_total{code="200",component="apiserver",group="kueue.x-k8s.io",resource="workloads",subresource="",verb="WATCH",version="v1beta2"} 3
"""


def test_only_mutating_requests_count_as_writes_by_resource_and_subresource():
    assert figs.apiserver_writes(APISERVER) == {"workloads/status": 42.0, "events": 20.0}


def test_request_codes_count_one_resources_writes_by_answer():
    refused = APISERVER + ('apiserver_request_total{code="500",component="apiserver",group="kueue.x-k8s.io",'
                           'resource="workloads",subresource="status",verb="APPLY",version="v1beta2"} 5\n')
    assert figs.request_codes(refused, "workloads", "status") == {"200": 42.0, "500": 5.0}
    assert figs.request_codes(refused, "workloads") == {}  # LIST and WATCH are not writes
    assert figs.request_codes(refused, "events") == {"201": 20.0}


def test_delta_keeps_what_grew():
    assert figs.delta({"events": 25.0, "workloads/status": 42.0, "new": 1.0},
                      {"events": 20.0, "workloads/status": 42.0}) == {"events": 5.0, "new": 1.0}


@pytest.mark.parametrize("samples, reached, done, estimate", [
    ([(0.0, 0.0), (10.0, 400.0), (20.0, 1000.0)], True, 1000.0, None),
    # stopped at the bound: how far it got, and the time to the target at the rate seen
    ([(0.0, 0.0), (100.0, 800.0)], False, 800.0, 125.0),
    ([(0.0, 0.0), (100.0, 0.0)], False, 0.0, None),
])
def test_a_bounded_wait_records_where_it_stopped(samples, reached, done, estimate):
    m = figs.milestone("processed", 1000, samples, reached)
    assert (m.reached, m.done, m.estimated_seconds) == (reached, done, estimate)
    assert m.seconds == samples[-1][0]


def test_latency_quantiles_are_in_milliseconds_and_an_empty_arm_says_so():
    arm = figs.latency_summary([0.001] * 98 + [0.5, 0.9], seconds=10)
    assert arm["requests"] == 100 and arm["per_second"] == 10.0
    assert arm["p50_ms"] == 1.0 and arm["p99_ms"] == 900.0
    assert figs.latency_summary([], 10) == {"requests": 0, "per_second": 0.0}


def test_fewer_than_100_requests_have_no_p99_but_their_slowest():
    # Kueue's arm at 100k pending: 50 pages, each slower than the 20 s arm
    arm = figs.latency_summary([24.5] * 49 + [24.77], seconds=29.0)
    assert arm["p99_ms"] is None and arm["max_ms"] == 24770.0 and arm["per_second"] == 1.7
    assert figs.latency_summary([0.001] * 99, seconds=1.0)["p99_ms"] is None
    assert figs.latency_summary([0.001] * 100, seconds=1.0)["p99_ms"] == 1.0
    assert figs.ratio(85.8, None) is None  # so no ratio ours / Kueue rests on such an arm


def result(churn_p99, ceiling_p99, admissions, rss, processed_seconds, reached=True, no_cache_p99=None, requests=1000):
    arms = {"cq_page_churn": {"p99_ms": churn_p99, "requests": requests},
            "cq_page_idle": {"p99_ms": churn_p99 / 2, "requests": requests},
            "proxy_ceiling": {"p99_ms": ceiling_p99, "requests": 1000}}
    if no_cache_p99:
        arms["cq_page_churn_no_page_cache"] = {"p99_ms": no_cache_p99, "requests": 1000}
    return {"startup_seconds": 2.0, "arms": arms, "admissions": {"per_second": admissions, "apiserver_writes_per_admission": 2.0},
            "processed": {"scheduler_rss_bytes": rss, "milestone": {
                "seconds": processed_seconds, "reached": reached,
                "estimated_seconds": None if reached else processed_seconds * 4}},
            "etcd": {"bytes_per_workload": 1000.0}}


def test_ratios_are_ours_over_kueue_and_the_goals_are_judged():
    ours = result(churn_p99=100.0, ceiling_p99=80.0, admissions=500.0, rss=200e6, processed_seconds=10,
                  no_cache_p99=120.0)
    kueue = result(churn_p99=10_000.0, ceiling_p99=90.0, admissions=250.0, rss=100e6, processed_seconds=300,
                   reached=False)
    found = figs.ratios(ours, kueue)
    assert found["visibility_p99_under_churn_ours_over_kueue"] == 0.01
    assert found["visibility_p99_under_churn_no_page_cache_ours_over_kueue"] == 0.012
    assert found["visibility_p99_under_churn_ours_over_proxy_ceiling"] == 1.25
    assert found["admissions_per_second_ours_over_kueue"] == 2.0
    assert found["rss_at_pending_ours_over_kueue"] == 2.0
    # Kueue did not finish within the bound: its estimate stands in, so the ratio is not flattered
    assert found["seconds_to_every_workload_processed_ours_over_kueue"] == round((2 + 10) / (2 + 1200), 4)
    assert all(goal["met"] for goal in found["goals"].values())


def test_a_missing_implementation_leaves_its_ratios_empty_not_zero():
    found = figs.ratios(result(100.0, 80.0, 500.0, 1e8, 10), {})
    assert found["admissions_per_second_ours_over_kueue"] is None
    assert found["goals"]["admissions_per_second_ours_over_kueue"]["met"] is None
    assert found["visibility_p99_under_churn_ours_over_proxy_ceiling"] == 1.25
    assert "| admissions/s | 500 |" in figs.markdown({"reference": result(100.0, 80.0, 500.0, 1e8, 10)}, found)


@pytest.mark.parametrize("kueue_requests, ratio, met", [(50, None, None), (99, None, None), (100, 0.01, True)])
def test_a_p99_of_too_few_requests_gives_no_ratio_and_its_goal_is_not_judged(kueue_requests, ratio, met):
    """Kueue's file at 100k pending (written before latency_summary held such a p99 back) has a "p99" of 50
    requests, their slowest: no ratio may rest on it and its goal is not judged, however far inside it looks."""
    ours = result(churn_p99=100.0, ceiling_p99=80.0, admissions=500.0, rss=1e8, processed_seconds=10)
    kueue = result(churn_p99=10_000.0, ceiling_p99=90.0, admissions=250.0, rss=1e8, processed_seconds=10,
                   requests=kueue_requests)
    found = figs.ratios(ours, kueue)
    assert found["visibility_p99_under_churn_ours_over_kueue"] == ratio
    assert found["goals"]["visibility_p99_under_churn_ours_over_kueue"]["met"] is met
    assert found["visibility_p99_under_churn_ours_over_proxy_ceiling"] == 1.25  # ours has its requests


def _round(ours_p99: float, kueue_p99: float) -> dict:
    arms = lambda p99: {"arms": {"cq_page_churn": {"p99_ms": p99, "requests": 1000},  # noqa: E731
                                 "proxy_ceiling": {"p99_ms": 100.0, "requests": 1000}}}
    return {"reference": arms(ours_p99), "kueue-v0.19.2": arms(kueue_p99)}


def test_repeated_rounds_give_each_kueue_the_median_of_its_ratios_with_an_interval_and_a_goal_judged_by_it():
    rounds = [_round(50.0, 1000.0), _round(60.0, 1000.0), _round(55.0, 1000.0)]
    found = figs.repeated_ratios(rounds, ["kueue-v0.19.2"])["kueue-v0.19.2"]
    churn = found["visibility_p99_under_churn_ours_over_kueue"]
    assert churn["each"] == [0.05, 0.06, 0.055]
    assert churn["median"] == pytest.approx(0.055)
    assert churn["low"] < 0.055 < churn["high"]
    assert found["goals"]["visibility_p99_under_churn_ours_over_kueue"]["met_by_the_interval"] is True
    # A ratio no round has (admissions not run) has no median and no verdict.
    assert found["admissions_per_second_ours_over_kueue"]["median"] is None
    assert found["goals"]["admissions_per_second_ours_over_kueue"]["met_by_the_interval"] is None


def test_one_round_has_a_median_but_no_interval():
    found = figs.repeated_ratios([_round(50.0, 1000.0)], ["kueue-v0.19.2"])["kueue-v0.19.2"]
    entry = found["visibility_p99_under_churn_ours_over_kueue"]
    assert (entry["median"], entry["low"], entry["high"]) == (0.05, None, None)


def test_implementations_name_a_kueue_version_of_versions_toml_or_are_refused(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(figs.__file__).parent))  # the script imports its siblings by name
    from benchmarks import bench_scheduler_cluster as bench

    arms = bench.parse_arms("reference, kueue, kueue@v0.19.2")
    assert [a.label for a in arms] == ["reference", "kueue", "kueue-v0.19.2"]
    with pytest.raises(ValueError, match="known versions are"):
        bench.parse_arms("kueue@v0.1.0")
    with pytest.raises(ValueError, match="only kueue takes a @VERSION"):
        bench.parse_arms("reference@v0.19.2")
