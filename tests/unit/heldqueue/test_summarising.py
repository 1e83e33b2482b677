"""The held-queue driver's summary: each case's figures from its tables, and ours / Kueue's of one run."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.drivers.heldqueue import figures as figs, reporting, summarising, tabulating as tab

OURS, KUEUE, NO_CACHE = ("implementation=reference,r0", "implementation=kueue,r0",
                         "implementation=reference,page_cache=False,r0")


def case(tables: dict[str, list[pd.DataFrame]], case_id: str, implementation: str = "reference", page_cache=True, *,
         churn_p99: float = 100.0, ceiling_p99: float = 80.0, requests: int = 1000, admissions: float = 500.0,
         rss: float = 2e8, processed_seconds: float = 10.0, reached: bool = True) -> None:
    """One case's rows of every table, as the run function emits them (the runner adds `case`)."""
    labels = tab.Labels("held", implementation, page_cache)
    target = 10_000
    done = target if reached else target * processed_seconds / (4 * processed_seconds)
    frames = {
        tab.FIGURES_TABLE: tab.figures_frame(labels, {"scheduler_rss_bytes": rss, "admissions_per_second": admissions,
                                                      "apiserver_writes_per_admission": 2.0,
                                                      "etcd_bytes_per_workload": 1000.0, "pending_gauge": target,
                                                      "idle_cores[scheduler]": 0.01, "created_per_second": None}),
        tab.MILESTONES_TABLE: tab.milestone_frame(labels, figs.milestone(
            tab.PROCESSED, target, [(0.0, 0.0), (processed_seconds, done)], reached)),
        tab.READS_TABLE: pd.concat([
            tab.read_frame(labels, arm, "/p", 50, figs.Latencies(requests, 50.0, p99_ms=p99, max_ms=p99), 0, 20.0, {})
            for arm, p99 in ((tab.IDLE_ARM, churn_p99 / 2), (tab.CHURN_ARM, churn_p99), (tab.CEILING_ARM, ceiling_p99))]),
    }
    for name, frame in frames.items():
        tables.setdefault(name, []).append(frame.assign(case=case_id))


def run_tables(build) -> dict[str, pd.DataFrame]:
    tables: dict[str, list[pd.DataFrame]] = {}
    build(tables)
    return {name: pd.concat(frames, ignore_index=True) for name, frames in tables.items()}


def metrics_of(tables, case_id: str) -> dict[str, float]:
    return {m.name: m.value for m in summarising.metrics(tables, case_id)}


def three_cases(tables) -> None:
    case(tables, OURS, churn_p99=100.0, ceiling_p99=80.0, admissions=500.0, rss=2e8, processed_seconds=10.0)
    case(tables, KUEUE, "kueue", False, churn_p99=10_000.0, ceiling_p99=90.0, admissions=250.0, rss=1e8,
         processed_seconds=300.0, reached=False)
    case(tables, NO_CACHE, page_cache=False, churn_p99=120.0)


def test_each_case_has_its_own_figures_by_the_drivers_names():
    found = metrics_of(run_tables(three_cases), OURS)
    assert found["heldqueue.page_p99_ms[cq_page_churn]"] == 100.0
    assert found["heldqueue.churn_p99_over_proxy_ceiling"] == 1.25
    assert found["heldqueue.processed_seconds"] == 10.0 and found["heldqueue.processed_reached"] == 1.0
    assert found["heldqueue.admissions_per_second"] == 500.0
    assert "heldqueue.pending_gauge" not in found and "heldqueue.idle_cores[scheduler]" not in found  # table only


def test_ours_over_kueue_from_one_run_also_for_ours_without_its_page_cache():
    tables = run_tables(three_cases)
    ours = metrics_of(tables, OURS)
    assert ours["heldqueue.ratio_to_kueue.page_p99_ms[cq_page_churn]"] == pytest.approx(0.01)
    assert ours["heldqueue.ratio_to_kueue.admissions_per_second"] == 2.0
    assert ours["heldqueue.ratio_to_kueue.scheduler_rss_bytes"] == 2.0
    # Kueue stopped at its bound: its estimate (4x the wait) stands in, so the ratio is not flattered
    assert ours["heldqueue.ratio_to_kueue.processed_seconds"] == pytest.approx(10.0 / 1200.0)
    assert metrics_of(tables, NO_CACHE)["heldqueue.ratio_to_kueue.page_p99_ms[cq_page_churn]"] == pytest.approx(0.012)
    assert not any("ratio_to_kueue" in name for name in metrics_of(tables, KUEUE))


def test_a_run_without_kueue_has_no_ratios_and_a_run_without_the_phase_no_metrics():
    alone = run_tables(lambda tables: case(tables, OURS))
    assert not any("ratio_to_kueue" in name for name in metrics_of(alone, OURS))
    assert summarising.metrics({}, OURS) == []
    assert reporting.section({}) is None


@pytest.mark.parametrize("kueue_requests, has_ratio", [(50, False), (99, False), (100, True)])
def test_a_p99_of_too_few_requests_is_no_metric_and_gives_no_ratio(kueue_requests, has_ratio):
    """Kueue's arm at 100k pending served 50 pages, too few for a p99 (their "p99" is their slowest): no metric
    and no ratio may rest on it, however far inside a goal it looks; its pages per second still count."""
    def build(tables):
        case(tables, OURS)
        case(tables, KUEUE, "kueue", False, churn_p99=10_000.0, requests=kueue_requests)

    tables = run_tables(build)
    assert ("heldqueue.ratio_to_kueue.page_p99_ms[cq_page_churn]" in metrics_of(tables, OURS)) is has_ratio
    assert ("heldqueue.page_p99_ms[cq_page_churn]" in metrics_of(tables, KUEUE)) is has_ratio
    assert "heldqueue.pages_per_second[cq_page_churn]" in metrics_of(tables, KUEUE)


def test_the_report_sets_every_case_side_by_side_and_judges_the_goals():
    tables = run_tables(three_cases)
    frame = summarising.case_figures(tables)
    headlines = reporting.headline_table(frame).set_index("figure")
    assert list(headlines.columns) == [f"reference ({OURS})", f"kueue ({KUEUE})",
                                       f"reference, no page cache ({NO_CACHE})"]
    assert headlines.loc["page of 100, under churn: p99 ms"].tolist() == [100.0, 10_000.0, 120.0]
    ratios = reporting.ratio_table(frame)
    churn = ratios[(ratios["case"] == "reference") & (ratios["figure"] == "page_p99_ms[cq_page_churn]")].iloc[0]
    assert (churn["goal"], churn["met"]) == ("<= 0.1", True)
    proxy = ratios[ratios["figure"].str.startswith("churn_p99_over_proxy_ceiling")]
    assert list(proxy["case"]) == ["reference", "reference, no page cache"] and proxy["met"].tolist() == [True, True]
    section = reporting.section(tables)
    assert "ours / Kueue" in section.html and section.figures[0][1].startswith(b"\x89PNG")
