"""kube-apiserver's answers to writes of one resource, by HTTP code, from its /metrics text (pure)."""

from __future__ import annotations

from collections.abc import Mapping

from prometheus_client import parser

from harness.metrics import samples

FAMILY = "apiserver_request_total"
MUTATING_VERBS = frozenset({"POST", "PUT", "PATCH", "APPLY"})
"""Writes of a status: a DELETE is not one."""


def write_codes(text: str, resource: str, subresource: str = "") -> dict[str, float]:
    """Writes to resource[/subresource] kube-apiserver answered so far (apiserver_request_total), by code."""
    out: dict[str, float] = {}
    # kube-apiserver's text runs to megabytes: parsing only the one family's lines takes a tenth of the time
    for family in parser.text_string_to_metric_families(samples.keep_lines(text, frozenset({FAMILY}))):
        for sample in family.samples:
            labels = sample.labels
            if (sample.name == FAMILY and labels.get("verb") in MUTATING_VERBS
                    and labels.get("resource") == resource and labels.get("subresource", "") == subresource):
                out[labels.get("code", "")] = out.get(labels.get("code", ""), 0.0) + sample.value
    return out


def grown(after: Mapping[str, float], before: Mapping[str, float]) -> dict[str, float]:
    """Per code, how much a counter reading grew (codes that did not grow are left out)."""
    return {k: after[k] - before.get(k, 0.0) for k in sorted(after) if after[k] - before.get(k, 0.0) > 0}


def refused(codes: Mapping[str, float]) -> float:
    """Writes answered with a server error (etcd refusing a too-large request surfaces as 500)."""
    return sum(count for code, count in codes.items() if code.startswith("5"))
