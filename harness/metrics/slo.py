"""Kubernetes' API call latency SLO, checked per phase: pass or fail per (verb, resource, scope) (pure).

Source: kubernetes/community sig-scalability/slos/api_call_latency.md. Upstream judges the p99 of
`apiserver_request_sli_duration_seconds` (which leaves out webhook and APF queue time) per cluster-day
in 5-minute windows; kqbench judges it per phase, from the histogram's bucket increases.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.metrics import catalog, prommath, samples

SLI_METRIC = "apiserver_request_sli_duration_seconds"
FALLBACK_METRIC = "apiserver_request_duration_seconds"
"""Used when the server exposes no SLI histogram (before 1.23); it also counts webhook time."""


@dataclass(frozen=True, slots=True)
class Threshold:
    kind: str
    verbs: tuple[str, ...]
    scopes: tuple[str, ...]
    p99_seconds: float
    provenance: str


THRESHOLDS: tuple[Threshold, ...] = (
    Threshold("mutating", ("POST", "PUT", "PATCH", "DELETE"), ("resource",), 1.0,
              "SLO 'mutating API calls for single objects': p99 <= 1s"),
    Threshold("read-single", ("GET",), ("resource",), 1.0,
              "SLO 'non-streaming read-only API calls', scope=resource: p99 <= 1s"),
    Threshold("read-list", ("GET", "LIST"), ("namespace", "cluster"), 30.0,
              "SLO 'non-streaming read-only API calls', scope=namespace|cluster: p99 <= 30s"),
)
MIN_COUNT = 100
"""Fewer requests than this in a phase and a check's p99 is its one or two slowest requests: such a
check is "insufficient samples", neither PASS nor FAIL (upstream judges per cluster-day windows,
where every checked verb has thousands)."""


def sufficient(count: float, min_count: int = MIN_COUNT) -> bool:
    """True when a check's p99 rests on enough requests to be judged."""
    return count >= min_count


# Not judged (upstream leaves them out too): WATCH and other long-running calls, CONNECT,
# collection deletes, non-resource URLs such as /healthz.


@dataclass(frozen=True, slots=True)
class Verdict:
    phase: str
    verb: str
    group: str
    resource: str
    subresource: str
    scope: str
    kind: str
    count: float
    p99_seconds: float
    threshold_seconds: float
    passed: bool
    metric: str



def evaluate(scrapes: Sequence[samples.Scrape], phase: str, thresholds: tuple[Threshold, ...] = THRESHOLDS) -> list[Verdict]:
    """One verdict per (verb, group, resource, subresource, scope) that served calls in the scrapes."""
    metric = SLI_METRIC if any(k[0] == SLI_METRIC + "_bucket" for s in scrapes for k in s.values) else FALLBACK_METRIC
    counts = prommath.summed_increases(scrapes, metric + "_count", catalog.REQUEST_KEY)
    buckets = prommath.bucket_increases(scrapes, metric, catalog.REQUEST_KEY)
    verdicts = []
    for labels, count in sorted(counts.items()):
        key = dict(labels)
        verb, scope, resource = key["verb"], key["scope"], key["resource"]
        threshold = next((t for t in thresholds if verb in t.verbs and scope in t.scopes), None) if resource else None
        if threshold is None or count <= 0:
            continue
        p99 = prommath.histogram_quantile(0.99, buckets.get(labels, []))
        verdicts.append(Verdict(phase, verb, key["group"], resource, key["subresource"], scope, threshold.kind,
                                count, p99, threshold.p99_seconds, bool(p99 <= threshold.p99_seconds), metric))
    return verdicts
