"""Our CRDs refuse what Kueue v0.17.0's validating webhook refuses (a negative quota, a negative weight or
one in (0, 1n]), with its messages, on a real kube-apiserver; weight 0 is Kueue's "never wins" and stays."""

from __future__ import annotations

import json

import pytest

from harness.kube import apiservice, kubeconfig, rest
from scheduler.api import groups

from .conftest import kwok_cluster

pytestmark = pytest.mark.integration

COHORTS = f"/apis/{groups.GROUP}/{groups.VERSION}/cohorts"
CLUSTER_QUEUES = f"/apis/{groups.GROUP}/{groups.VERSION}/clusterqueues"


def _quota(nominal, **limits):
    resource = {"name": "cpu", "nominalQuota": nominal, **limits}
    return [{"coveredResources": ["cpu"], "flavors": [{"name": "default", "resources": [resource]}]}]


def _object(kind, name, spec):
    return {"apiVersion": f"{groups.GROUP}/{groups.VERSION}", "kind": kind, "metadata": {"name": name}, "spec": spec}


def test_negative_quotas_and_weights_are_refused_with_kueues_messages(binaries, state_dir):
    with kwok_cluster("crdval") as info:
        creds = kubeconfig.load(info.kubeconfig)
        apiservice.install_crds(creds)
        refused = {
            "negative-nominal": (COHORTS, _object("Cohort", "c1", {"resourceGroups": _quota("-1")}),
                                 "must be greater than or equal to 0"),
            "negative-lending": (COHORTS, _object("Cohort", "c2", {"parentName": "r",
                                                                    "resourceGroups": _quota("1", lendingLimit=-2)}),
                                 "must be greater than or equal to 0"),
            "negative-weight": (COHORTS, _object("Cohort", "c3", {"fairSharing": {"weight": "-1"}}),
                                "when not 0, weight must be > 10e-9"),
            "collapsing-weight": (COHORTS, _object("Cohort", "c4", {"fairSharing": {"weight": "1n"}}),
                                  "when not 0, weight must be > 10e-9"),
            "cq-negative-borrowing": (CLUSTER_QUEUES, _object("ClusterQueue", "q1", {
                "cohortName": "r", "resourceGroups": _quota("1", borrowingLimit="-500m")}),
                "must be greater than or equal to 0"),
        }
        for case, (path, body, message) in refused.items():
            status, answer = rest.request(creds, "POST", path, body)
            assert status == 422, f"{case}: {status} {answer[:300]!r}"
            assert message in json.loads(answer)["message"], case
        accepted = {
            "zero-weight": (COHORTS, _object("Cohort", "ok1", {"fairSharing": {"weight": 0}})),
            "fractional-weight": (COHORTS, _object("Cohort", "ok2", {"fairSharing": {"weight": "0.5"},
                                                                     "resourceGroups": _quota(4)})),
            "cq": (CLUSTER_QUEUES, _object("ClusterQueue", "ok3", {"resourceGroups": _quota("0")})),
        }
        for case, (path, body) in accepted.items():
            status, answer = rest.request(creds, "POST", path, body)
            assert status == 201, f"{case}: {status} {answer[:300]!r}"
