"""Request names group by verb, resource and mode, and line up with apiserver metric labels."""

from __future__ import annotations

import pytest

from loadtests import naming


@pytest.mark.parametrize("path, resource", [
    ("/api/v1/pods", "pods"),
    ("/api/v1/pods?resourceVersion=0", "pods"),
    ("/api/v1/nodes/n1", "nodes"),
    ("/api/v1/namespaces", "namespaces"),
    ("/api/v1/namespaces/ns", "namespaces"),
    ("/api/v1/namespaces/ns/configmaps", "configmaps"),
    ("/api/v1/namespaces/ns/configmaps/cm-1", "configmaps"),
    ("/apis/kueue.x-k8s.io/v1beta2/namespaces/ns/workloads/w/status", "workloads/status"),
    ("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq-0", "clusterqueues"),
    ("/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/cq-0/pendingworkloads?offset=0&limit=5",
     "clusterqueues/pendingworkloads"),
    ("/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/ns/localqueues/lq/pendingworkloads",
     "localqueues/pendingworkloads"),
])
def test_resource_of_path(path, resource):
    assert naming.resource_of(path) == resource


@pytest.mark.parametrize("name, text, is_request", [
    (naming.RequestName("LIST", "pods", "rv0"), "LIST pods rv0", True),
    (naming.RequestName("PATCH", "workloads/status", "churn-finish"), "PATCH workloads/status churn-finish", True),
    (naming.RequestName("GET", "configmaps"), "GET configmaps", True),
    (naming.RequestName("LIST-ALL-PAGES", "pods", "paginated"), "LIST-ALL-PAGES pods paginated", False),
])
def test_names_round_trip(name, text, is_request):
    assert str(name) == text
    assert naming.parse(text) == name
    assert name.is_request is is_request
