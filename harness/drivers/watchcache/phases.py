"""The watch-cache driver's phases: populate ConfigMaps, then list them in one mode per phase."""

from __future__ import annotations

from typing import Literal

from pydantic import NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt

from harness.scenarios import base

LIST_MODES = ("rv0", "consistent", "paginated", "watchlist")


class PopulatePhase(base.Model):
    """Create `namespaces` x `per_namespace` ConfigMaps of `bytes` each (the watch-cache experiments' data)."""

    kind: Literal["populate"] = "populate"
    namespaces: NonNegativeInt = 10
    per_namespace: NonNegativeInt = 1000
    bytes: NonNegativeInt = 100_000
    """Size of each ConfigMap's one data value (100 KB as in Kubernetes' list benchmark job)."""
    concurrency: PositiveInt = 16
    """POSTs in flight; bounded so that set-up does not starve etcd of memory."""
    timeout_seconds: PositiveFloat = 1800


class ListPhase(base.Model):
    """`workers` clients listing back to back in one `mode` for `seconds`."""

    kind: Literal["list"] = "list"
    resource: Literal["configmaps", "nodes"] = "configmaps"
    mode: Literal["rv0", "consistent", "paginated", "watchlist"] = "rv0"
    """rv0: resourceVersion=0; consistent: resourceVersion=""; paginated: limit + continue;
    watchlist: watch with sendInitialEvents=true, closed at the initial-events-end bookmark."""
    scope: Literal["namespace", "cluster"] = "namespace"
    """namespace: worker k lists populated namespace k mod N; cluster: every worker lists all namespaces."""
    workers: PositiveInt = 20
    seconds: PositiveFloat = 30
    page_size: PositiveInt = 500
    per_second: NonNegativeFloat = 0
    """Per worker; 0 lists back to back (the next list starts when the previous one ended)."""
    gzip: bool = False
    """Off by default: the apiserver's compression CPU and the one-core load generator's inflate would
    dominate a 2-core machine; client-go asks for gzip, so turn it on to see that cost."""


PHASES = (PopulatePhase, ListPhase)
