"""Installing the CRDs waits out kube-apiserver's create hold (2 s after a CRD turns Established),
so a run that starts right away does not measure it."""

from __future__ import annotations

import time

import pytest

from harness.kube import apiservice, kubeconfig, rest
from scheduler.api import crds
from scheduler.publishing import publishers

from .conftest import kwok_cluster

pytestmark = pytest.mark.integration


def test_install_returns_after_the_hold_and_a_create_then_is_not_held(binaries, state_dir):
    with kwok_cluster("hold") as info:
        creds = kubeconfig.load(info.kubeconfig)
        apiservice.install_crds(creds)
        returned = time.time()
        names = [crd["metadata"]["name"] for crd in crds.all_crds()]
        assert apiservice.hold_remaining([apiservice.established_at(creds, n) for n in names], returned) == 0.0
        body = {"apiVersion": publishers.POSITIONS_API, "kind": "QueuePositions", "metadata": {"name": "cq"},
                "clusterQueue": "cq", "pending": 0, "positions": []}
        # The hold is judged on the apiserver's own clock (same machine): a create now is not held.
        status, answer = rest.request(creds, "POST", publishers.POSITIONS_PATH, body)
        assert status == 201, answer[:300]
