"""spec.maximumExecutionTimeSeconds, the reference scheduler against real Kueue (every version of versions.toml):
a Workload admitted with a 5 s limit is deactivated once it has run 5 s, with the same conditions, reasons and
messages, and its quota goes to the Workload waiting behind it; both APIs refuse a limit below 1 and a change
of it while the Workload is admitted.

Times are read from the objects' condition transition times (whole seconds), not from when the test saw
them. Where the two differ on a bare Workload (no owner Job) the test says so: Kueue keeps its admission
and Admitted=True (releasing them is a Job reconciler's part), the reference scheduler releases them in its
eviction write and adds the seconds it was admitted to status.accumulatedPastExecutionTimeSeconds.
"""

from __future__ import annotations

import calendar
import json
import time

import pytest

from harness.kube import apiservice, kubeconfig, rest
from harness.progress import LineProgress
from harness.toolchain import building, versions

from . import kueue_objects as ko
from .conftest import kwok_cluster, running_scheduler

pytestmark = pytest.mark.integration

LIMIT_SECONDS = 5
LATE_BOUND_SECONDS = 3
"""How long after the limit the deactivation may come, for both: each rechecks at the exact remaining time, then
writes three times (the target, spec.active, the eviction); 3 s covers that on a busy machine, and the
condition times' whole seconds (both count from the Admitted time as the API keeps it, truncated)."""
CAUSE = "The workload is deactivated due to exceeding the maximum execution time"
_PINS = versions.load_pins()
# The default Kueue on every push; the other known versions in the nightly tier (make test-nightly).
IMPLEMENTATIONS = ["reference", *(f"kueue-{v}" if v == _PINS.kueue
                                  else pytest.param(f"kueue-{v}", marks=pytest.mark.nightly)
                                  for v in _PINS.kueue_known)]


@pytest.fixture(scope="module", params=IMPLEMENTATIONS)
def queue_of_two(request, binaries, state_dir, tmp_path_factory):
    """A 1-node cluster with one 2-CPU ClusterQueue and a scheduler: ours or Kueue; all stopped after the module."""
    implementation = request.param
    with kwok_cluster("maxexec") as info:
        creds = kubeconfig.load(info.kubeconfig)
        if implementation == "reference":
            apiservice.install_crds(creds)
            log_dir, fields = None, {"no_client_limit": True}
        else:
            version = implementation.removeprefix("kueue-")
            building.ensure_kueue(LineProgress(interval=10.0), version=version)
            log_dir = tmp_path_factory.mktemp("kueue")
            fields = {"implementation": "kueue", "kueue_version": version, "qps": 50, "burst": 100}
        with running_scheduler(info, log_dir, **fields):
            ko.create(creds, [ko.flavor(), ko.cluster_queue("cq", 2, cohort="solo"), ko.local_queue("lq", "cq")])
            yield implementation, creds


def _limited(name: str, seconds: int | None, cpu: int = 2) -> dict:
    obj = ko.workload(name, "lq", 0, cpu)
    if seconds is not None:
        obj["spec"]["maximumExecutionTimeSeconds"] = seconds
    return obj


def _workload(creds, name: str) -> dict:
    return rest.get_json(creds, f"{ko.BASE}/namespaces/default/workloads/{name}")


def _conditions(obj: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def _seconds(stamp: str) -> int:
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


def _admitted(obj: dict) -> bool:
    admitted = _conditions(obj).get("Admitted")
    return admitted is not None and admitted["status"] == "True"


def _deactivated(obj: dict) -> dict[str, tuple[str, str, str]] | None:
    """(status, reason, message) of its DeactivationTarget and Evicted conditions once both are True and
    spec.active is false (Kueue drops the target in its eviction and sets it again on its next pass)."""
    conditions = _conditions(obj)
    wanted = {kind: conditions.get(kind) for kind in ("DeactivationTarget", "Evicted")}
    if obj["spec"].get("active", True) or any(c is None or c["status"] != "True" for c in wanted.values()):
        return None
    return {kind: (c["status"], c["reason"], c["message"]) for kind, c in wanted.items()}


def test_a_limit_below_one_second_or_changed_while_admitted_is_refused(queue_of_two):
    implementation, creds = queue_of_two
    status, answer = rest.request(creds, "POST", f"{ko.BASE}/namespaces/default/workloads", _limited("zero", 0))
    assert status == 422, (implementation, answer[:300])
    assert "greater than or equal to 1" in json.loads(answer)["message"]
    # While admitted, the limit cannot be moved (Kueue's CRD rule, ours word for word).
    ko.create(creds, [_limited("steady", 600, cpu=1)])
    assert ko.wait_for(lambda: _admitted(_workload(creds, "steady")), timeout=60), _workload(creds, "steady")
    path = f"{ko.BASE}/namespaces/default/workloads/steady"
    status, answer = rest.request(creds, "PATCH", path, {"spec": {"maximumExecutionTimeSeconds": 1}},
                                  "application/merge-patch+json")
    assert status == 422, (implementation, answer[:300])
    assert "maximumExecutionTimeSeconds is immutable while workload quota reserved" in json.loads(answer)["message"]
    status, answer = rest.request(creds, "DELETE", path)  # its quota is the next test's
    assert status in (200, 202), answer[:300]
    assert ko.wait_for(lambda: rest.get(creds, path)[0] == 404, timeout=30)


def test_an_exceeded_limit_deactivates_the_workload_and_gives_its_quota_back(queue_of_two):
    implementation, creds = queue_of_two
    ko.create(creds, [_limited("limited", LIMIT_SECONDS)])
    admitted = ko.wait_for(lambda: (obj := _workload(creds, "limited")) and _admitted(obj) and obj, timeout=60)
    assert admitted, _workload(creds, "limited")
    admitted_at = _seconds(_conditions(admitted)["Admitted"]["lastTransitionTime"])
    ko.create(creds, [_limited("waiting", None)])  # no room until the limited one is gone

    final = ko.wait_for(lambda: _deactivated(_workload(creds, "limited")), timeout=LIMIT_SECONDS + 60)
    assert final == {
        "DeactivationTarget": ("True", "MaximumExecutionTimeExceeded", "exceeding the maximum execution time"),
        "Evicted": ("True", "DeactivatedDueToMaximumExecutionTimeExceeded", CAUSE),
    }, (implementation, _workload(creds, "limited"))
    limited = _workload(creds, "limited")
    evicted_at = _seconds(_conditions(limited)["Evicted"]["lastTransitionTime"])
    assert LIMIT_SECONDS <= evicted_at - admitted_at <= LIMIT_SECONDS + LATE_BOUND_SECONDS, (implementation, limited)

    # Its quota is back: the one waiting is admitted and the ClusterQueue counts only that one.
    assert ko.wait_for(lambda: _admitted(_workload(creds, "waiting")), timeout=30), _workload(creds, "waiting")

    def counted() -> bool:
        status = rest.get_json(creds, f"{ko.BASE}/clusterqueues/cq").get("status") or {}
        return status.get("admittedWorkloads") == 1 and status.get("pendingWorkloads") == 0
    assert ko.wait_for(counted, timeout=30), rest.get_json(creds, f"{ko.BASE}/clusterqueues/cq").get("status")
    assert "DeactivationTarget" not in _conditions(_workload(creds, "waiting")), "no limit, never a target"

    limited = _workload(creds, "limited")
    if implementation == "reference":
        # Released in the eviction write, as a Job's reconciler does for Kueue: the seconds admitted are counted.
        assert not limited["status"].get("admission")
        assert {k: (c["status"], c["reason"]) for k, c in _conditions(limited).items()
                if k in ("QuotaReserved", "Admitted", "Requeued")} == {
            "QuotaReserved": ("False", "Pending"), "Admitted": ("False", "NoReservation"),
            "Requeued": ("False", "DeactivatedDueToMaximumExecutionTimeExceeded")}
        assert LIMIT_SECONDS <= limited["status"]["accumulatedPastExecutionTimeSeconds"] \
            <= LIMIT_SECONDS + LATE_BOUND_SECONDS
    else:
        # Kueue keeps a bare Workload's admission (no Job reconciler to release it), its quota lent all the same.
        assert limited["status"].get("admission") and _admitted(limited)
        assert "accumulatedPastExecutionTimeSeconds" not in limited["status"]
