"""Builders over the metric text recorded from a real kube-apiserver v1.35.4 and etcd v3.6.16
(tests/fixtures/metrics/README.md says what ran between the recordings)."""

from __future__ import annotations

from pathlib import Path

from harness.metrics import catalog, samples

FOLDER = Path(__file__).resolve().parents[2] / "fixtures" / "metrics"
APISERVER = "apiserver-v1.35.4"
ETCD = "etcd-v3.6.16"


def text(component: str, moment: str) -> str:
    """e.g. text(APISERVER, "before"): the recorded /metrics answer."""
    return (FOLDER / f"{component}-{moment}.txt").read_text()


def scrape(component: str, moment: str, t: float, buckets: bool = True) -> samples.Scrape:
    source = catalog.APISERVER if component == APISERVER else catalog.ETCD
    return samples.parse(text(component, moment), source, t, buckets=buckets)


def registry_sizes() -> list[tuple[str, int]]:
    rows = (FOLDER / f"{ETCD}-registry-sizes.tsv").read_text().splitlines()
    return [(key, int(size)) for key, size in (row.split("\t") for row in rows if not row.startswith("#"))]


def labels(**pairs: str) -> samples.Labels:
    return samples.labels_of(pairs)


def request(verb: str, code: str, scope: str, resource: str = "configmaps") -> samples.SeriesKey:
    """The apiserver_request_total series kube-apiserver v1.35.4 exposes for a core resource."""
    return ("apiserver_request_total", labels(code=code, component="apiserver", dry_run="", group="",
                                              resource=resource, scope=scope, subresource="", verb=verb, version="v1"))
