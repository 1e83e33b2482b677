"""The reference scheduler on a real cluster: admits exactly what the core says, serves positions
through kube-apiserver's aggregation layer, refuses forged identities, survives a restart."""

from __future__ import annotations

import json
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

import pytest

from harness.clusters import state
from harness.implementations.reference import process as schedulerproc
from harness.kube import apiservice, kubeconfig, rest
from harness.scenarios import schedulers
from scheduler.core import conversion, scheduling
from scheduler.core.decisions import Admit
from scheduler.core.queues import QueueManager

from .conftest import kwok_cluster, running_scheduler
from .kueue_objects import (VISIBILITY, cluster_queue, create, flavor, listed, local_queue, metric_sum,
                            queue_order, wait_for, workload)

pytestmark = pytest.mark.integration


def queue_objects():
    return [flavor("default"), cluster_queue("cq-a", 100, borrowing_limit=20), cluster_queue("cq-b", 60),
            local_queue("lq-a1", "cq-a"), local_queue("lq-a2", "cq-a"), local_queue("lq-b", "cq-b")]


def workloads(count=500):
    queues = ["lq-a1", "lq-a2", "lq-b"]
    # Mixed priorities and sizes: 1, 2 or 3 CPUs, priorities 0..4.
    return [workload(f"wl-{i:03d}", queues[i % 3], (i * 7) % 5, 1 + i % 3) for i in range(count)]


def core_admissions(creds) -> list[tuple[str, str]]:
    """What the core admits, in order, from the objects as the API holds them now (admitted ones
    included): what a scheduler that starts now, and so rebuilds from the API, must reach."""
    manager = QueueManager()
    for item in listed(creds, "resourceflavors"):
        manager.add_resource_flavor(conversion.resource_flavor_from_dict(item))
    for item in listed(creds, "clusterqueues"):
        manager.add_cluster_queue(conversion.cluster_queue_from_dict(item))
    for item in listed(creds, "localqueues"):
        manager.add_local_queue(conversion.local_queue_from_dict(item))
    decoder = conversion.WorkloadDecoder()
    order = []
    for item in listed(creds, "workloads"):
        workload = decoder.decode(item)
        manager.add_workload(workload)
        if workload.admission is not None:
            order.append(workload.key)
    for _ in range(10_000):
        decisions = scheduling.run_cycle(manager, time.time())
        if not decisions:
            break
        order += [d.workload.key for d in decisions if isinstance(d, Admit)]
    return order


def admitted_in_api(creds) -> dict[tuple[str, str], dict]:
    result = {}
    for item in listed(creds, "workloads"):
        status = item.get("status") or {}
        if status.get("admission"):
            result[(item["metadata"]["namespace"], item["metadata"]["name"])] = item
    return result


@pytest.fixture(scope="module")
def cluster(binaries, state_dir):
    with kwok_cluster("sched") as info:
        creds = kubeconfig.load(info.kubeconfig)
        apiservice.install_crds(creds)
        create(creds, queue_objects() + workloads())
        yield info, creds


SLOW_RUN: dict[str, list[float]] = {"unwritten": []}
"""What the first (slow-writing) scheduler of `admitted_run` showed while it ran."""


@dataclass(frozen=True)
class AdmittedRun:
    info: state.ClusterInfo
    creds: kubeconfig.Credentials
    from_start: list[tuple[str, str]]
    """The core's admissions, in order, from the 500 pending workloads: what the first scheduler follows."""
    before_restart: dict[tuple[str, str], dict]
    """Admitted in the API once the killed scheduler's last write has landed."""
    expected: set[tuple[str, str]]
    """The core's admissions from the API as the restarted scheduler finds it."""
    second: schedulerproc.SchedulerProcess


def settled_admissions(creds, tries: int = 20) -> dict[tuple[str, str], dict]:
    """The admitted workloads once two lists 1 s apart agree: a write the killed scheduler had sent
    may still be committed after its death."""
    admitted = admitted_in_api(creds)
    for _ in range(tries):
        time.sleep(1)
        again = admitted_in_api(creds)
        if again.keys() == admitted.keys():
            return again
        admitted = again
    raise AssertionError(f"the admitted workloads kept changing after the scheduler was killed: {len(admitted)}")


@pytest.fixture(scope="module")
def admitted_run(cluster):
    """The scheduler started on 500 existing workloads, killed mid-run and restarted.

    Where the kill lands decides the end state: a BestEffortFIFO cohort's outcome depends on how far
    each ClusterQueue's heads have got, and writes in flight complete out of order, so the restart
    may find a later admission written and an earlier one not. Like Kueue, the restarted scheduler
    decides from what the API holds, so that is what its outcome is checked against."""
    info, creds = cluster
    from_start = core_admissions(creds)
    # Slow writes (10/s, no burst) so that the kill lands in the middle of the admissions; the cycle
    # loop may decide at most 5 admissions ahead of those writes.
    with running_scheduler(info, qps=10, burst=1, max_unwritten=5) as scheduler:
        first = scheduler.process
        second = None
        try:
            apiservice.wait_available(creds)

            def admitted_enough() -> bool:
                SLOW_RUN["unwritten"].append(metric_sum(first.metrics_text(), "kqbench_scheduler_unwritten_admissions"))
                return len(admitted_in_api(creds)) >= 15
            assert wait_for(admitted_enough, timeout=60)
            first.kill()
            before_restart = settled_admissions(creds)
            expected = set(core_admissions(creds))
            second = schedulers.restart(info, no_client_limit=True).process
            assert wait_for(lambda: len(admitted_in_api(creds)) >= len(expected), timeout=120)
            time.sleep(2)  # anything extra would show up now
            yield AdmittedRun(info, creds, from_start, before_restart, expected, second)
        finally:
            if second:
                second.stop()


def test_admits_exactly_what_the_core_expects(admitted_run):
    run = admitted_run
    # The first scheduler followed the core's order: what it wrote is among the core's first
    # decisions (at most 5 + 1 decided ahead of the writes).
    written_first = set(run.before_restart)
    assert written_first <= set(run.from_start[:len(written_first) + 6])
    admitted = admitted_in_api(run.creds)
    assert 40 < len(run.expected) < 500, "the scenario must leave workloads pending"
    assert set(admitted) == run.expected
    usage = {"cq-a": 0, "cq-b": 0}
    for item in admitted.values():
        assignment = item["status"]["admission"]["podSetAssignments"][0]
        usage[item["status"]["admission"]["clusterQueue"]] += int(assignment["resourceUsage"]["cpu"])
        conditions = {c["type"]: c["status"] for c in item["status"]["conditions"]}
        assert conditions["QuotaReserved"] == "True" and conditions["Admitted"] == "True"
    assert usage["cq-a"] <= 100 + 20 and usage["cq-a"] + usage["cq-b"] <= 160


def test_restart_admits_nothing_twice(admitted_run):
    run = admitted_run
    creds, expected, before_restart, second = run.creds, run.expected, run.before_restart, run.second
    assert 0 < len(before_restart) < len(expected), "the kill must land mid-run"
    after = admitted_in_api(creds)
    for key, item in before_restart.items():
        reserved = {c["type"]: c for c in after[key]["status"]["conditions"]}["QuotaReserved"]
        old = {c["type"]: c for c in item["status"]["conditions"]}["QuotaReserved"]
        assert reserved["lastTransitionTime"] == old["lastTransitionTime"], f"{key} was admitted again"
    metrics = second.metrics_text()
    written = sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
                  if line.startswith("kqbench_scheduler_admitted_total{"))
    assert written == len(expected) - len(before_restart)


def test_deciding_waits_for_the_writes(admitted_run):
    samples = SLOW_RUN["unwritten"]
    # a cycle started below the bound decides one head per ClusterQueue (2 here): 5 + 1 at most
    assert samples and max(samples) <= 6, samples
    assert max(samples) >= 1, "the slow writer never had an admission in flight"


def test_queue_status_counts(admitted_run):
    creds, expected = admitted_run.creds, admitted_run.expected
    def counts():
        cqs = {c["metadata"]["name"]: c.get("status", {}) for c in listed(creds, "clusterqueues")}
        total = sum(s.get("admittedWorkloads", 0) for s in cqs.values())
        return cqs if total == len(expected) else None
    cqs = wait_for(counts, timeout=20)
    assert cqs, "ClusterQueue status counts never matched the admissions"
    assert sum(s["pendingWorkloads"] for s in cqs.values()) == 500 - len(expected)


def test_invariants_hold_across_the_kill_and_restart(admitted_run):
    from harness.invariants import checking, reading

    history = checking.AdmissionHistory()
    assert history.observe(admitted_run.before_restart.values()) == []
    snapshot = reading.read(admitted_run.creds)
    assert history.observe(snapshot.workloads) == [], "a workload admitted before the kill was admitted again"
    table = reading.checker_for(admitted_run.info).check("after-restart")
    assert set(table["status"]) == {reading.PASSED}, table[table["status"] != reading.PASSED].to_dict("records")
    assert len(table) == len(checking.CHECKS)


def _raw(kubectl, kubeconfig_path, path, *extra):
    out = subprocess.run([kubectl, "--kubeconfig", kubeconfig_path, "get", "--raw", path, *extra],
                         capture_output=True, text=True, timeout=30)
    return out.returncode, out.stdout, out.stderr


def test_visibility_through_kube_apiserver(admitted_run, binaries):
    info, creds = admitted_run.info, admitted_run.creds
    pending = [w for w in listed(creds, "workloads") if not (w.get("status") or {}).get("admission")]

    in_cq_a = sorted((w for w in pending if w["spec"]["queueName"] in ("lq-a1", "lq-a2")), key=queue_order)
    code, out, err = _raw(str(binaries.kubectl), info.kubeconfig,
                          f"{VISIBILITY}/clusterqueues/cq-a/pendingworkloads?limit=5")
    assert code == 0, err
    items = json.loads(out)["items"]
    assert [i["metadata"]["name"] for i in items] == [w["metadata"]["name"] for w in in_cq_a[:5]]
    assert [i["positionInClusterQueue"] for i in items] == [0, 1, 2, 3, 4]
    in_lq_a2 = [w for w in in_cq_a if w["spec"]["queueName"] == "lq-a2"]
    code, out, err = _raw(str(binaries.kubectl), info.kubeconfig,
                          f"{VISIBILITY}/namespaces/default/localqueues/lq-a2/pendingworkloads?offset=1&limit=3")
    assert code == 0, err
    items = json.loads(out)["items"]
    assert [i["metadata"]["name"] for i in items] == [w["metadata"]["name"] for w in in_lq_a2[1:4]]
    assert [i["positionInLocalQueue"] for i in items] == [1, 2, 3]
    assert items[0]["positionInClusterQueue"] == in_cq_a.index(in_lq_a2[1])
    assert items[0]["localQueueName"] == "lq-a2"


def test_bad_requests_and_unknown_queues_are_status_objects(admitted_run, binaries):
    info = admitted_run.info
    code, _, err = _raw(str(binaries.kubectl), info.kubeconfig, f"{VISIBILITY}/clusterqueues/cq-a/pendingworkloads?limit=-1")
    assert code != 0 and "BadRequest" in err and "limit must be a non-negative integer" in err
    code, _, err = _raw(str(binaries.kubectl), info.kubeconfig, f"{VISIBILITY}/clusterqueues/nope/pendingworkloads")
    assert code != 0 and "NotFound" in err


def test_api_resources_lists_visibility_and_stays_healthy(admitted_run, binaries):
    info = admitted_run.info
    for _ in range(3):
        out = subprocess.run([str(binaries.kubectl), "--kubeconfig", info.kubeconfig, "api-resources",
                              "--api-group=visibility.kueue.x-k8s.io", "-o", "name"],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        assert set(out.stdout.split()) == {"clusterqueues.visibility.kueue.x-k8s.io",
                                           "localqueues.visibility.kueue.x-k8s.io"}


def test_user_without_rbac_is_refused(admitted_run, binaries):
    info = admitted_run.info
    code, _, err = _raw(str(binaries.kubectl), info.kubeconfig, f"{VISIBILITY}/clusterqueues/cq-a/pendingworkloads",
                        "--as", "nobody")
    assert code != 0 and "Forbidden" in err


def test_forged_identity_without_client_cert_is_refused(admitted_run):
    second = admitted_run.second
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    request = urllib.request.Request(
        f"https://127.0.0.1:{second.visibility_port}{VISIBILITY}/clusterqueues/cq-a/pendingworkloads",
        headers={"X-Remote-User": "admin", "X-Remote-Group": "system:masters"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, context=context, timeout=10)
    assert refused.value.code == 401
    assert json.loads(refused.value.read())["reason"] == "Unauthorized"


def test_front_proxy_cert_with_a_user_lacking_rbac_is_forbidden(admitted_run, state_dir):
    info, second = admitted_run.info, admitted_run.second
    from harness.clusters import kwok
    folder = kwok.pki_dir(info.name)
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.load_cert_chain(folder / "front-proxy-client.crt", folder / "front-proxy-client.key")
    url = f"https://127.0.0.1:{second.visibility_port}{VISIBILITY}/clusterqueues/cq-a/pendingworkloads?limit=1"
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(urllib.request.Request(url, headers={"X-Remote-User": "nobody"}), context=context, timeout=10)
    assert refused.value.code == 403
    ok = urllib.request.urlopen(urllib.request.Request(
        url, headers={"X-Remote-User": "admin", "X-Remote-Group": "system:masters"}), context=context, timeout=10)
    assert len(json.loads(ok.read())["items"]) == 1


def test_a_cached_page_is_never_served_after_its_queue_changed(admitted_run):
    """Last in this module: it adds a workload to cq-a (lowest priority, too big to fit: no admission)."""
    creds, second = admitted_run.creds, admitted_run.second

    in_cq_a = [w for w in listed(creds, "workloads") if not (w.get("status") or {}).get("admission")
               and w["spec"]["queueName"] in ("lq-a1", "lq-a2")]
    path = f"{VISIBILITY}/clusterqueues/cq-a/pendingworkloads?offset={len(in_cq_a) - 2}&limit=5"

    def page() -> list[str]:
        return [i["metadata"]["name"] for i in rest.get_json(creds, path)["items"]]

    def hits():
        return metric_sum(second.metrics_text(), "kqbench_visibility_pages_total", cache="hit")

    before = page()
    hits_before = hits()
    assert page() == before and len(before) == 2
    assert hits() > hits_before, "the same page of a quiet queue is answered from the cache"
    create(creds, [workload("wl-latecomer", "lq-a1", -1, 1000)])
    assert wait_for(lambda: page() == [*before, "wl-latecomer"], timeout=30), page()
