"""compare: verdicts per direction and threshold; the shipped thresholds file parses."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import KqbenchError
from harness.reporting import comparing
from harness.results import summaries

ROOT = Path(__file__).resolve().parents[3]


def _summary(**values) -> summaries.Summary:
    entries = {}
    for metric, (value, better) in values.items():
        entry = summaries.Entry(metric.replace("_", "."), "p", value, "", better, [value])
        entries[entry.key] = entry
    return summaries.Summary("r", "s", "ok", entries)


RULES = comparing.Thresholds(schema_version=1, thresholds=[
    comparing.Threshold(metric="lat", max_regression=0.2),
    comparing.Threshold(metric="qps", max_regression=0.1),
    comparing.Threshold(metric="fails", max_regression=0.0, max_absolute=0),
    comparing.Threshold(metric="tiny", max_regression=0.1, min_base=5),
])


@pytest.mark.parametrize("metric, better, base, new, verdict", [
    ("lat", "lower", 100, 110, "same"),
    ("lat", "lower", 100, 130, "regressed"),
    ("lat", "lower", 100, 70, "improved"),
    ("qps", "higher", 100, 85, "regressed"),
    ("qps", "higher", 100, 120, "improved"),
    ("fails", "lower", 0, 0, "same"),
    ("fails", "lower", 0, 2, "regressed"),
    ("tiny", "lower", 1, 3, "unchecked"),
    ("other", "lower", 1, 100, "unchecked"),
])
def test_verdicts(metric, better, base, new, verdict):
    rows = comparing.compare(_summary(**{metric: (base, better)}), _summary(**{metric: (new, better)}), RULES)
    assert [r.verdict for r in rows] == [verdict]
    assert comparing.failed(rows) == (verdict == "regressed")


def test_missing_and_new():
    rows = comparing.compare(_summary(lat=(1, "lower")), _summary(qps=(1, "higher")), RULES)
    assert {r.metric: r.verdict for r in rows} == {"lat": "missing", "qps": "new"}
    assert not comparing.failed(rows)


def test_a_rule_for_one_point_comes_before_the_rule_for_all():
    rules = comparing.Thresholds(schema_version=1, thresholds=[
        comparing.Threshold(metric="lat", point="strategy=wide*", max_regression=2.0),
        comparing.Threshold(metric="lat", max_regression=0.2)])

    def entry(point, value):
        return summaries.Entry("lat", point, value, "ms", "lower", [value])

    base = summaries.Summary("r", "s", "ok", {e.key: e for e in (entry("strategy=wide", 10), entry("strategy=narrow", 10))})
    new = summaries.Summary("r", "s", "ok", {e.key: e for e in (entry("strategy=wide", 20), entry("strategy=narrow", 20))})
    verdicts = {r.point: (r.verdict, r.limit) for r in comparing.compare(base, new, rules)}
    assert verdicts == {"strategy=wide": ("same", 2.0), "strategy=narrow": ("regressed", 0.2)}


def test_a_rule_for_one_scenario_judges_that_scenarios_runs_only():
    rules = comparing.Thresholds(schema_version=1, thresholds=[
        comparing.Threshold(metric="lat", scenario="quick", kind="count", max_regression=0.2)])

    def summary(scenario, value):
        entry = summaries.Entry("lat", "strategy=x", value, "ms", "lower", [value], n=1)
        return summaries.Summary("r", scenario, "ok", {entry.key: entry})

    [quick] = comparing.compare(summary("quick", 10), summary("quick", 20), rules, other_machine=True)
    [other] = comparing.compare(summary("nightly-100k", 10), summary("nightly-100k", 20), rules)
    assert ((quick.verdict, quick.test), other.verdict) == (("regressed", comparing.COUNT_BEYOND), "unchecked")


def test_same_summary_passes():
    same = _summary(lat=(1, "lower"), qps=(2, "higher"), fails=(0, "lower"))
    assert not comparing.failed(comparing.compare(same, same, RULES))


def test_shipped_thresholds_parse_and_carry_provenance():
    rules = comparing.load_thresholds(ROOT / "ci" / "thresholds.yaml")
    assert rules.thresholds and all(rule.why for rule in rules.thresholds)


@pytest.mark.parametrize("text, error", [
    ("schema_version: 99\nthresholds: []\n", "newer"),
    ("schema_version: 1\nthresholds: [{metric: x}]\n", "max_regression"),
    ("schema_version: 1\nthresholds: [{metric: x, max_regression: -1}]\n", "max_regression"),
])
def test_bad_thresholds(tmp_path, text, error):
    path = tmp_path / "t.yaml"
    path.write_text(text)
    with pytest.raises(KqbenchError, match=error):
        comparing.load_thresholds(path)


NOT_IN_A_BASELINE_YET = ("bringup.", "apiserver.writes_per_admission")
"""Metrics newer than every committed baseline: their rules are checked by name below instead."""


def test_every_shipped_threshold_matches_an_entry_of_a_committed_baseline():
    # fnmatch reads `[*]` as a character class: a pattern like `write_qps[*]` silently matched nothing.
    rules = comparing.load_thresholds(ROOT / "ci" / "thresholds.yaml")
    baselines = [ROOT / "results" / "baselines" / "quick.summary.json",
                 *sorted((ROOT / "results" / "baselines" / "machines").glob("*/quick.summary.json"))]
    entries = [e for path in baselines for e in summaries.read(path).entries.values()]
    unmatched = [(r.metric, r.point) for r in rules.thresholds
                 if not r.metric.startswith(NOT_IN_A_BASELINE_YET) and not any(
                     comparing.fnmatch.fnmatchcase(e.metric, r.metric) and comparing.fnmatch.fnmatchcase(e.point, r.point)
                     for e in entries)]
    assert unmatched == []


@pytest.mark.parametrize("phase, design, scenario, judged", [
    ("fill", "aggregated-indexed", "quick", ("count", 0.25)),
    ("fill", "cq-status-topn", "quick", ("count", 0.25)),
    ("churn", "aggregated-snapshot", "quick", ("count", 0.3)),
    ("fill", "single-object", "quick", ("timing", 0.5)),
    ("churn", "single-object", "quick", ("timing", 0.5)),
    ("churn", "status-field", "quick", ("timing", 0.75)),
    ("query", "status-field", "quick", ("timing", 0.75)),
    ("query", "aggregated-indexed", "quick", None),
    ("churn", "aggregated-indexed", "nightly-100k", None),
])
def test_shipped_writes_per_admission_rules_count_only_the_designs_whose_figure_held_still(phase, design, scenario,
                                                                                           judged):
    rules = comparing.load_thresholds(ROOT / "ci" / "thresholds.yaml")
    entry = summaries.Entry(f"apiserver.writes_per_admission[{phase}]", f"strategy={design}", 1.4, "ratio", "lower")
    rule = comparing.rule_for(rules, entry, scenario)
    assert (rule and (rule.kind.value, rule.max_regression)) == judged


def test_a_newly_failed_check_regresses_even_from_one_repeat_against_intervals():
    base = summaries.Summary("r", "s", "ok", {"invariants.failed @ p": summaries.Entry(
        "invariants.failed", "p", 0, "checks", "lower", [0, 0], low=0, high=0, n=2)})
    new = summaries.Summary("r", "s", "ok", {"invariants.failed @ p": summaries.Entry(
        "invariants.failed", "p", 1, "checks", "lower", [1], n=1)})
    rules = comparing.Thresholds(schema_version=1, thresholds=[
        comparing.Threshold(metric="invariants.failed", max_regression=0.0, max_absolute=0)])
    rows = comparing.compare(base, new, rules)
    assert [(r.verdict, r.test) for r in rows] == [("regressed", "beyond max_absolute")]
    assert comparing.failed(rows)
