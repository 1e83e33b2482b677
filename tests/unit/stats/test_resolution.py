"""Resolution: no interval narrower than its data's step; ratios of small numbers marked; the gate reads a
change only beyond what rounding could make; latency quantiles read from HDR histograms when a run has them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from harness.drivers import locust, registry
from harness.drivers.locust import summarising
from harness.reporting import comparing
from harness.results import runs, summaries
from harness.stats import intervals
from loadtests import histograms, recording

QUERY = "GET clusterqueues/pendingworkloads visibility-cq"
RATIO = "ratio.position_query_p50_ms.indexed_over_snapshot"
RULES = comparing.Thresholds(schema_version=1, thresholds=[comparing.Threshold(metric="ratio.*", max_regression=0.5)])
"""As ci/thresholds.yaml gates them: the within-run ratios at +50%, the p50s themselves not at all."""


@pytest.mark.parametrize("found, widened", [
    (intervals.Estimate(3.0, 3.0, 3.0, 1200), (2.5, 3.5)),  # a bootstrap over whole ms: zero width
    (intervals.Estimate(3.0, 2.0, 5.0, 1200), (2.0, 5.0)),  # wider than a step already: unchanged
    (intervals.Estimate(0.2, 0.0, 0.3, 1200), (0.0, 0.7)),  # non-negative stays non-negative
    (intervals.Estimate(3.0, None, None, 12), (None, None)),  # no interval: none made up
])
def test_an_interval_is_never_narrower_than_one_step_of_its_data(found, widened):
    result = intervals.widen(found, histograms.locust_step_ms)
    assert (result.low, result.high) == widened and result.value == found.value and result.n == found.n


def test_without_a_step_nothing_is_widened():
    found = intervals.Estimate(3.0, 3.0, 3.0, 10)
    assert intervals.widen(found, None) == found


def _entry(metric: str, point: str, value: float, step: float | None, low=None, high=None, n=1200) -> summaries.Entry:
    return summaries.Entry(metric, point, value, "ms", "lower", [value], low, high, n, step)


@pytest.mark.parametrize("numerator, denominator, step, coarse", [
    (3.0, 5.0, 1.0, True),        # the failing example: Locust's whole ms
    (6.0, 5.0, 1.0, True),
    (30.0, 50.0, 1.0, False),     # 20+ steps: one step moves the ratio by 5% at most
    (3.214, 5.020, histograms.hdr_step_ms(5.0), False),  # the same ms from HDR: 2 us steps
])
def test_a_ratio_of_small_numbers_is_marked_with_its_parts(numerator, denominator, step, coarse):
    ratio = summaries.ratio_entry(RATIO, "all", _entry("p", "i", numerator, step, numerator - step, numerator + step),
                                  _entry("p", "s", denominator, step, denominator - step, denominator + step))
    assert ratio.value == pytest.approx(numerator / denominator)
    assert ratio.step == pytest.approx(ratio.value * (step / numerator + step / denominator))
    assert bool(ratio.note) == coarse
    if coarse:
        assert f"parts {numerator:g} and {denominator:g} ms" in ratio.note and "steps of 1 ms apart" in ratio.note


def _ratio_summary(numerator: float, denominator: float, step) -> summaries.Summary:
    parts = [_entry("load.position_query_p50_ms", f"strategy=aggregated-{name}", value, step(value),
                    value - step(value) / 2, value + step(value) / 2) for name, value in
             (("indexed", numerator), ("snapshot", denominator))]
    ratio = summaries.ratio_entry(RATIO, "all", *parts)
    return summaries.Summary("r", "quick", "ok", {e.key: e for e in (*parts, ratio)})


def test_the_failing_example_is_inconclusive_within_resolution_not_regressed():
    # p50s of 3 and 5 ms, then 6 and 5 ms at 1 ms steps: 0.6 -> 1.2, "+100%, significant" before.
    rows = comparing.compare(_ratio_summary(3.0, 5.0, histograms.locust_step_ms),
                             _ratio_summary(6.0, 5.0, histograms.locust_step_ms), RULES)
    row = next(r for r in rows if r.metric == RATIO)
    assert (row.verdict, row.test) == ("inconclusive", "within resolution")
    assert "ratio of small numbers" in row.note
    assert not comparing.failed(rows)


def test_a_change_beyond_the_resolution_of_small_numbers_still_regresses():
    rows = comparing.compare(_ratio_summary(3.0, 5.0, histograms.locust_step_ms),
                             _ratio_summary(15.0, 5.0, histograms.locust_step_ms), RULES)
    assert next(r for r in rows if r.metric == RATIO).verdict == "regressed"


def test_hdr_resolution_leaves_a_real_change_of_a_few_ms_to_the_significance_test():
    base, new = _ratio_summary(3.0, 5.0, histograms.hdr_step_ms), _ratio_summary(6.0, 5.0, histograms.hdr_step_ms)
    row = next(r for r in comparing.compare(base, new, RULES) if r.metric == RATIO)
    assert row.test != "within resolution" and row.note == ""


@pytest.mark.parametrize("base, new, step, resolved", [
    (3.0, 4.0, 1.0, 0.0),                      # 2.5..3.5 vs 3.5..4.5: they touch, no change is needed
    (3.0, 6.0, 1.0, 5.5 / 3.5 - 1),            # the least increase rounding allows
    (100.0, 130.0, None, None),                # no step: not a resolution question
])
def test_the_resolved_change_is_the_smallest_the_rounding_allows(base, new, step, resolved):
    found = comparing.resolved_change(_entry("m", "p", base, step), _entry("m", "p", new, step))
    assert found == (None if resolved is None else pytest.approx(resolved))


# -- latency quantiles from HDR histograms --------------------------------------------------------


def _hdr_row(case: str, phase: str, values_ms) -> dict:
    recorder = recording.Recorder()
    for value in values_ms:
        recorder.on_request(request_type="GET", name=QUERY, response_time=float(value))
    row = recorder.frame().iloc[0].to_dict()
    return {"case": case, "phase": phase, **row}


def _tables(case: str, values_ms, with_hdr: bool) -> dict[str, pd.DataFrame]:
    rounded = pd.Series(np.round(values_ms)).value_counts()
    totals = pd.DataFrame([{"case": case, "phase": "churn", "verb": "GET", "name": QUERY, "requests": len(values_ms),
                            "failures": 0, "p50_ms": float(np.round(np.median(values_ms))),
                            "p99_ms": float(np.round(np.quantile(values_ms, 0.99)))}])
    latency = pd.DataFrame([{"case": case, "phase": "churn", "verb": "GET", "name": QUERY, "ms": int(ms), "count": int(c)}
                            for ms, c in rounded.items()])
    tables = {"load_totals": totals, "load_latency": latency}
    if with_hdr:
        tables["load_hdr"] = pd.DataFrame([_hdr_row(case, "churn", values_ms)])
    return tables


def test_latency_metrics_read_the_hdr_histograms_when_the_run_has_them():
    values = np.random.default_rng(3).lognormal(math.log(3.2), 0.2, size=1000)
    fine = {m.name: m for m in summarising.metrics(_tables("c", values, True), "c")}
    coarse = {m.name: m for m in summarising.metrics(_tables("c", values, False), "c")}
    p50 = fine["load.position_query_p50_ms"]
    assert p50.resolution is histograms.hdr_step_ms and p50.value != round(p50.value)
    assert abs(p50.value - float(np.sort(values)[500])) <= histograms.hdr_step_ms(p50.value)
    assert coarse["load.position_query_p50_ms"].resolution is histograms.locust_step_ms
    assert coarse["load.position_query_p50_ms"].value == round(coarse["load.position_query_p50_ms"].value)


def test_hdr_intervals_are_finer_than_a_millisecond_and_whole_ms_ones_a_step_wide():
    values = np.random.default_rng(4).lognormal(math.log(3.2), 0.05, size=1200)
    for with_hdr, narrowest, widest in ((True, 0.0, 0.5), (False, 1.0, 2.0)):
        metric = next(m for m in summarising.metrics(_tables("c", values, with_hdr), "c")
                      if m.name == "load.position_query_p50_ms")
        entry = summaries.estimate(metric.name, "all", [metric])
        assert narrowest <= entry.high - entry.low <= widest, (with_hdr, entry)
        assert entry.step == metric.resolution(entry.value)


def test_repeats_merge_their_hdr_histograms_into_one_pool():
    rng = np.random.default_rng(5)
    repeats = [rng.lognormal(math.log(3.2), 0.2, size=400) for _ in range(3)]
    metrics = [next(m for m in summarising.metrics(_tables(f"c{i}", v, True), f"c{i}") if m.name.endswith("p50_ms"))
               for i, v in enumerate(repeats)]
    entry = summaries.estimate("load.position_query_p50_ms", "all", metrics)
    pooled = float(np.sort(np.concatenate(repeats))[600])
    assert entry.n == 1200 and abs(entry.value - pooled) <= histograms.hdr_step_ms(pooled)
    assert entry.low < entry.value < entry.high


def test_a_summary_of_hdr_runs_has_fine_ratios_with_no_note():
    run = runs.RunRecord("r", "s", "s.yaml", {}, [], status="ok",
                         cases=[runs.CaseRecord(f"strategy={s},r0", f"strategy={s}", {"scheduler.strategy": s}, 0,
                                                status="ok") for s in ("aggregated-indexed", "aggregated-snapshot")])
    rng = np.random.default_rng(6)
    tables = [_tables(f"strategy=aggregated-{s},r0", rng.lognormal(math.log(m), 0.2, size=600), True)
              for s, m in (("indexed", 3.0), ("snapshot", 5.0))]
    data = {name: pd.concat([t[name] for t in tables], ignore_index=True) for name in tables[0]}
    summary = summaries.summarise(run, data, registry.Registry((locust.DRIVER,)))
    ratio = summary.entries[f"{RATIO} @ all"]
    assert 0.5 < ratio.value < 0.7 and ratio.note == "" and ratio.step < 0.01


@pytest.mark.parametrize("q, repeats", [(0.5, 1), (0.5, 3), (0.99, 3)])
def test_drawing_requests_and_multinomial_draws_give_the_same_interval(q, repeats, monkeypatch):
    rng = np.random.default_rng(7)
    data = []
    for scale in (1.0, 1.15, 0.95)[:repeats]:
        histogram = histograms.new()
        for value in rng.lognormal(math.log(3.2 * scale), 0.3, size=1500):
            histograms.record(histogram, float(value))
        data.append([histograms.counts_ms(histogram)])
    found = {}
    # multinomial when values x COUNTS_PER_DRAW < requests: 0 always takes it, 10^9 never does
    for method, counts_per_draw in (("drawn", 10 ** 9), ("multinomial", 0)):
        monkeypatch.setattr(intervals, "COUNTS_PER_DRAW", counts_per_draw)
        found[method] = intervals.quantile_interval(data, q, np.random.default_rng(8))
    drawn, multinomial = found["drawn"], found["multinomial"]
    assert drawn.value == multinomial.value and drawn.n == multinomial.n
    width = multinomial.high - multinomial.low
    assert abs(drawn.low - multinomial.low) < 0.15 * width and abs(drawn.high - multinomial.high) < 0.15 * width
