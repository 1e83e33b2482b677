"""What etcd holds, per resource: object count and value sizes, the largest keys, and objects
close to or past etcd's request size limit (pure: works on (key, size) pairs)."""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

REGISTRY_PREFIX = "/registry/"
ETCD_MAX_REQUEST_BYTES = int(1.5 * 1024 * 1024)
"""etcd's default --max-request-bytes: a write of an object this large fails
('etcdserver: request is too large'; the apiserver answers 500)."""
DEFAULT_THRESHOLD_BYTES = 1024 * 1024
"""Objects this large are flagged: they are one growth step from etcd's limit (and ConfigMaps,
Secrets can't be larger)."""

# Key folders that do not name their resource (kept from Kubernetes' early days).
_LEGACY = {"minions": "nodes", "services/specs": "services", "services/endpoints": "endpoints",
           "serviceips": "serviceipallocations", "servicenodeports": "servicenodeportallocations"}


def resource_of(key: str, prefix: str = REGISTRY_PREFIX) -> str:
    """The resource a Kubernetes etcd key stores: `configmaps`, or `group/resource` for other API groups.

    Core and built-in groups store under /registry/<resource>/...; CRDs and aggregated groups
    under /registry/<group>/<resource>/... (a group always has a dot).
    """
    rest = key[len(prefix):] if key.startswith(prefix) else key.lstrip("/")
    parts = rest.split("/")
    if len(parts) >= 2 and "." in parts[0]:
        return f"{parts[0]}/{parts[1]}"
    if parts[0] in ("services", "ranges") and len(parts) >= 2:
        return _LEGACY.get(f"{parts[0]}/{parts[1]}", _LEGACY.get(parts[1], f"{parts[0]}/{parts[1]}"))
    return _LEGACY.get(parts[0], parts[0])


@dataclass(frozen=True, slots=True)
class ResourceSizes:
    """Value sizes (bytes, as stored: protobuf for built-in types, JSON for CRDs) of one resource."""

    resource: str
    count: int
    total_bytes: int
    max_bytes: int
    p50_bytes: int
    p99_bytes: int
    largest_key: str


@dataclass(frozen=True, slots=True)
class Census:
    resources: list[ResourceSizes]
    """Largest total first."""
    largest: list[tuple[str, int]]
    """The `top` largest (key, bytes), largest first."""
    flagged: list[tuple[str, int]] = field(default_factory=list)
    """(key, bytes) of objects at or over `threshold_bytes`, largest first."""
    threshold_bytes: int = DEFAULT_THRESHOLD_BYTES
    limit_bytes: int = ETCD_MAX_REQUEST_BYTES
    revision: int | None = None

    @property
    def objects(self) -> int:
        return sum(r.count for r in self.resources)

    @property
    def total_bytes(self) -> int:
        return sum(r.total_bytes for r in self.resources)

    @property
    def over_limit(self) -> list[tuple[str, int]]:
        """Objects a write could not store again at etcd's default limit (possible only if it was raised)."""
        return [(k, b) for k, b in self.flagged if b >= self.limit_bytes]

    def resource(self, name: str) -> ResourceSizes | None:
        return next((r for r in self.resources if r.resource == name), None)


def nearest_rank(sorted_sizes: list[int], q: float) -> int:
    """The q-quantile as an observed size (nearest rank): exact, no interpolation between objects."""
    if not sorted_sizes:
        return 0
    return sorted_sizes[max(0, math.ceil(q * len(sorted_sizes)) - 1)]


def summarise(items: Iterable[tuple[str, int]], threshold_bytes: int = DEFAULT_THRESHOLD_BYTES, top: int = 10,
              limit_bytes: int = ETCD_MAX_REQUEST_BYTES, prefix: str = REGISTRY_PREFIX,
              revision: int | None = None) -> Census:
    """Census of (key, value bytes) pairs, e.g. from `etcdreading.read_sizes`."""
    sizes: dict[str, list[int]] = {}
    biggest: dict[str, tuple[int, str]] = {}
    largest: list[tuple[int, str]] = []  # a min-heap of the top N
    flagged = []
    for key, size in items:
        resource = resource_of(key, prefix)
        sizes.setdefault(resource, []).append(size)
        if size > biggest.get(resource, (-1, ""))[0]:
            biggest[resource] = (size, key)
        if top > 0:
            (heapq.heappush if len(largest) < top else heapq.heappushpop)(largest, (size, key))
        if size >= threshold_bytes:
            flagged.append((key, size))
    resources = []
    for resource, values in sizes.items():
        values.sort()
        resources.append(ResourceSizes(resource, len(values), sum(values), values[-1],
                                       nearest_rank(values, 0.5), nearest_rank(values, 0.99), biggest[resource][1]))
    resources.sort(key=lambda r: (-r.total_bytes, r.resource))
    return Census(resources=resources, largest=[(k, s) for s, k in sorted(largest, reverse=True)],
                  flagged=sorted(flagged, key=lambda kb: -kb[1]), threshold_bytes=threshold_bytes,
                  limit_bytes=limit_bytes, revision=revision)
