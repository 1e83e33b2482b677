"""The reference scheduler's Workload status writes as a real kube-apiserver takes them (server-side apply).

Every status apply under one field manager owns what it lists and removes what that manager wrote before
and leaves out. A Workload preempted (Evicted and Preempted True, under the eviction manager), admitted
again (both turned False under the main manager), then evicted by a PodsReady timeout and admitted once
more: if that last admission leaves out the Preempted=False condition the main manager wrote, apply strips
its status and the API refuses the write (422 ``status.conditions[..].status: Required value``), in every
cycle. Kueue applies the whole status; the reference carries the False conditions as they are.
"""

from __future__ import annotations

import json

import pytest

from harness.kube import apiservice, kubeconfig, rest
from scheduler.api import contenttypes
from scheduler.controller import podsreadiness, statuses
from scheduler.core import podsready
from scheduler.core.conversion import WorkloadDecoder
from scheduler.core.workloads import Admission, PodSetAssignment, Workload

from . import kueue_objects as ko
from .conftest import kwok_cluster

pytestmark = pytest.mark.integration

ADMISSION = Admission("cq", (PodSetAssignment("main", {"cpu": "default"}, {"cpu": 1000}, 1),))


def _write(creds, path: str, body: dict, manager: str, content_type: str = contenttypes.APPLY_PATCH) -> dict:
    force = "&force=true" if content_type == contenttypes.APPLY_PATCH else ""
    status, answer = rest.request(creds, "PATCH", f"{path}/status?fieldManager={manager}{force}", body,
                                  content_type)
    assert status == 200, f"{status}: {answer[:300]!r}"
    return json.loads(answer)


def _conditions(obj: dict) -> dict[str, dict]:
    return {c["type"]: c for c in statuses.conditions_of(obj)}


def _decoded(obj: dict) -> Workload:
    return WorkloadDecoder().decode(obj)


def test_an_admission_after_a_preemption_and_a_pods_ready_timeout_is_taken(binaries, state_dir):
    with kwok_cluster("statuswrites") as info:
        creds = kubeconfig.load(info.kubeconfig)
        apiservice.install_crds(creds)
        obj = ko.workload("w", "lq-absent", 0, 1)  # a queue nobody serves: only this test writes its status
        ko.create(creds, [obj])
        path = ko.path_of(obj)
        now = 1_800_000_000.0
        preemptor = Workload("default", "p", "u-p", "lq-absent", 9, 0.0, ())

        preempted = _write(creds, path, statuses.preemption_status(_decoded(rest.get_json(creds, path)), preemptor,
                                                                   now, hold=True),
                           statuses.EVICTION_FIELD_MANAGER)
        admitted = _write(creds, path, statuses.admission_status(_decoded(preempted), ADMISSION, now + 1),
                          statuses.FIELD_MANAGER)
        turned = _conditions(admitted)["Preempted"]
        assert (turned["status"], turned["reason"]) == ("False", "QuotaReserved")

        timeout = podsready.Decision(podsready.Action.EVICT, reason="PodsReadyTimeout", message="not ready")
        requeue = podsready.RequeueState(count=1, requeue_at=now + 20)
        evicted = _write(creds, path, podsreadiness.eviction_patch(_decoded(admitted), admitted, timeout, requeue,
                                                                   now + 10, release=True),
                         podsreadiness.FIELD_MANAGER, contenttypes.MERGE_PATCH)
        assert "admission" not in evicted["status"]

        again = _write(creds, path, statuses.admission_status(_decoded(evicted), ADMISSION, now + 30),
                       statuses.FIELD_MANAGER)
        conditions = _conditions(again)
        assert conditions["QuotaReserved"]["status"] == "True" and again["status"]["admission"]
        assert conditions["Evicted"]["status"] == "False"
        assert conditions["Preempted"] == turned, "the False Preempted condition stays as it was written"
