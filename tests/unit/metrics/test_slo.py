"""SLO verdicts per (verb, resource, scope) from recorded SLI histograms."""

from __future__ import annotations

from harness.metrics import slo
from tests.unit.metrics import recorded


def _scrapes():
    return [recorded.scrape(recorded.APISERVER, "before", 0.0), recorded.scrape(recorded.APISERVER, "after", 10.0)]


def _by_key(verdicts):
    return {(v.verb, v.resource, v.scope): v for v in verdicts}


def test_recorded_calls_get_the_upstream_thresholds():
    verdicts = _by_key(slo.evaluate(_scrapes(), "work"))
    expected = {
        ("POST", "configmaps", "resource"): ("mutating", 1.0),
        ("DELETE", "configmaps", "resource"): ("mutating", 1.0),
        ("GET", "configmaps", "resource"): ("read-single", 1.0),
        ("LIST", "configmaps", "namespace"): ("read-list", 30.0),
    }
    for key, (kind, threshold) in expected.items():
        assert (verdicts[key].kind, verdicts[key].threshold_seconds) == (kind, threshold), key
        assert verdicts[key].passed and verdicts[key].metric == slo.SLI_METRIC
    assert verdicts[("LIST", "configmaps", "namespace")].count == 3.0
    assert not [v for v in verdicts.values() if v.verb == "WATCH" or not v.resource]


def test_a_tighter_threshold_fails():
    strict = (slo.Threshold("mutating", ("POST",), ("resource",), 1e-9, "test"),)
    verdicts = slo.evaluate(_scrapes(), "work", strict)
    assert verdicts and all(not v.passed and v.verb == "POST" for v in verdicts)


def test_without_sli_histogram_the_request_duration_is_used():
    scrapes = _scrapes()
    for scrape in scrapes:
        scrape.values = {k: v for k, v in scrape.values.items() if not k[0].startswith(slo.SLI_METRIC)}
    verdicts = slo.evaluate(scrapes, "work")
    assert verdicts and {v.metric for v in verdicts} == {slo.FALLBACK_METRIC}
