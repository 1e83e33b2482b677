"""The etcd census over the keys and value sizes recorded from a real cluster."""

from __future__ import annotations

import base64

import pytest

from harness.metrics import census, etcdreading
from tests.unit.metrics import recorded


@pytest.mark.parametrize("key, resource", [
    ("/registry/configmaps/rec/cm-1", "configmaps"),
    ("/registry/minions/kwok-000000", "nodes"),
    ("/registry/services/specs/default/kubernetes", "services"),
    ("/registry/services/endpoints/default/kubernetes", "endpoints"),
    ("/registry/ranges/servicenodeports", "servicenodeportallocations"),
    ("/registry/clusterroles/admin", "clusterroles"),
    ("/registry/apiregistration.k8s.io/apiservices/v1.", "apiregistration.k8s.io/apiservices"),
    ("/registry/kueue.x-k8s.io/workloads/team-a/job-1", "kueue.x-k8s.io/workloads"),
])
def test_resource_of_key(key, resource):
    assert census.resource_of(key) == resource


def test_recorded_registry():
    result = census.summarise(recorded.registry_sizes(), top=3)
    configmaps = result.resource("configmaps")
    assert (configmaps.count, configmaps.total_bytes, configmaps.max_bytes) == (17, 21649, 1633)
    assert result.objects == 214
    assert result.resources[0].resource == "probe.kqbench.io/blobs"  # the 1.1 MB object leads by total
    assert [size for _, size in result.largest] == [1100391, 3811, 3739]
    assert result.flagged == [("/registry/probe.kqbench.io/blobs/rec/near", 1100391)]
    assert result.over_limit == []


@pytest.mark.parametrize("threshold, flagged, over_limit", [
    (1024 * 1024, 1, 0),
    (4000, 1, 0),
    (3000, 3, 0),
    (census.ETCD_MAX_REQUEST_BYTES + 1, 0, 0),
])
def test_threshold(threshold, flagged, over_limit):
    result = census.summarise(recorded.registry_sizes(), threshold_bytes=threshold)
    assert (len(result.flagged), len(result.over_limit)) == (flagged, over_limit)


def test_over_limit_needs_the_limit_reached():
    result = census.summarise([("/registry/a/x", census.ETCD_MAX_REQUEST_BYTES), ("/registry/a/y", 10)])
    assert result.over_limit == [("/registry/a/x", census.ETCD_MAX_REQUEST_BYTES)]


@pytest.mark.parametrize("sizes, q, expected", [
    ([], 0.5, 0),
    ([7], 0.99, 7),
    ([1, 2, 3, 4], 0.5, 2),
    (list(range(1, 101)), 0.99, 99),
    (list(range(1, 101)), 1.0, 100),
])
def test_nearest_rank(sizes, q, expected):
    assert census.nearest_rank(sizes, q) == expected


@pytest.mark.parametrize("raw", [b"", b"a", b"ab", b"abc", b"abcd", bytes(range(256)) * 41])
def test_decoded_length_from_base64(raw):
    assert etcdreading.decoded_length(base64.b64encode(raw).decode()) == len(raw)


@pytest.mark.parametrize("prefix, end", [(b"/registry/", b"/registry0"), (b"a\xff", b"b"), (b"\xff", b"\0")])
def test_prefix_end(prefix, end):
    assert etcdreading.prefix_end(prefix) == end
