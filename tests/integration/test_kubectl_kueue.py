"""Kueue's own kubectl plugin (`kubectl kueue`, built from Kueue's module) against the reference scheduler,
with the same assertions run against real Kueue wherever the two agree.

The plugin is run as kubectl runs it (found on PATH as `kubectl-kueue`), and what it prints is read
back: positions from the visibility API, queue counts and the Active condition from the queue
statuses, and `stop`/`resume` taking effect on the scheduler's decisions. Where Kueue differs on bare
Workloads (it marks an admitted one Evicted but keeps its admission: clearing it is left to the
owner job's reconciler, and a bare Workload has none) the test asserts what Kueue does instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from harness.kube import apiservice, kubeconfig
from harness.toolchain import layout, versions

from . import kueue_objects as ko
from .conftest import kwok_cluster, running_scheduler

pytestmark = pytest.mark.integration

# Six workloads of 1 CPU on a 2-CPU queue, distinct priorities so the order is known:
# w0 (60) and w1 (50) are admitted; w2..w5 wait. lq-a gets the even ones, lq-b the odd ones.
PRIORITIES = {f"w{i}": 60 - 10 * i for i in range(6)}


def _queue_of(name: str) -> str:
    return "lq-a" if int(name[1:]) % 2 == 0 else "lq-b"


def _plugin() -> Path:
    plugin = layout.KueueBuild.in_cache(versions.load_pins().kueue).kubectl_plugin
    if not plugin.is_file():
        pytest.skip(f"kubectl-kueue is not built ({plugin}): run `kqbench toolchain build`")
    return plugin


@pytest.fixture(scope="module", params=["reference", "kueue"])
def kueue_cluster(request, binaries, state_dir, tmp_path_factory):
    """A 1-node cluster, one queue with six workloads, and a scheduler serving visibility: ours or Kueue."""
    plugin = _plugin()
    implementation = request.param
    # Kueue's start installs its CRDs, so it starts before the objects; the reference scheduler after them.
    with kwok_cluster("kctl") as info, contextlib.ExitStack() as stack:
        creds = kubeconfig.load(info.kubeconfig)
        if implementation == "kueue":
            stack.enter_context(running_scheduler(info, tmp_path_factory.mktemp("kueue"), implementation="kueue",
                                                  qps=50, burst=100))
        else:
            apiservice.install_crds(creds)
        ko.create(creds, [ko.flavor(), ko.cluster_queue("cq", 2, cohort="solo"),
                          ko.local_queue("lq-a", "cq"), ko.local_queue("lq-b", "cq")])
        ko.create(creds, [ko.workload(n, _queue_of(n), p, 1) for n, p in PRIORITIES.items()])
        if implementation == "reference":
            stack.enter_context(running_scheduler(info, no_client_limit=True))
            apiservice.wait_available(creds)
        env = {**os.environ, "KUBECONFIG": info.kubeconfig,
               "PATH": f"{plugin.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        yield KubectlKueue(str(binaries.kubectl), env, implementation), creds


class KubectlKueue:
    def __init__(self, kubectl: str, env: dict, implementation: str) -> None:
        self.kubectl, self.env, self.implementation = kubectl, env, implementation

    @property
    def reference(self) -> bool:
        return self.implementation == "reference"

    def run(self, *args: str) -> str:
        out = subprocess.run([self.kubectl, "kueue", *args], capture_output=True, text=True, timeout=60, env=self.env)
        assert out.returncode == 0, f"kubectl kueue {' '.join(args)}: {out.stderr}"
        return out.stdout

    def table(self, *args: str) -> dict[str, dict[str, str]]:
        """A printed table as {NAME: {COLUMN: cell}}; cells are cut at the header's column starts."""
        lines = [line for line in self.run(*args).splitlines() if line.strip()]
        if not lines:
            return {}
        header = lines[0]
        columns = _header_columns(header)
        rows = {}
        for line in lines[1:]:
            cells = {}
            for i, (title, start) in enumerate(columns):
                end = columns[i + 1][1] if i + 1 < len(columns) else None
                cells[title] = line[start:end].strip()
            rows[cells["NAME"]] = cells
        return rows


def _header_columns(header: str) -> list[tuple[str, int]]:
    """(title, start) of each header column; titles may contain single spaces ("POSITION IN QUEUE")."""
    columns, i = [], 0
    while i < len(header):
        if header[i] != " ":
            start = i
            while i < len(header) and not (header[i] == " " and header[i + 1:i + 2] in (" ", "")):
                i += 1
            columns.append((header[start:i], start))
        i += 1
    return columns


def _positions(kk: KubectlKueue) -> dict[str, str]:
    return {n: row["POSITION IN QUEUE"] for n, row in kk.table("list", "workload").items()}


def _statuses(kk: KubectlKueue) -> dict[str, str]:
    return {n: row["STATUS"] for n, row in kk.table("list", "workload").items()}


def _workload(creds, name: str) -> dict:
    return next(w for w in ko.listed(creds, "workloads") if w["metadata"]["name"] == name)


def _conditions(workload: dict) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c.get("reason", "")) for c in (workload.get("status") or {}).get("conditions") or []}


def test_list_workload_shows_positions_in_each_local_queue(kueue_cluster):
    kk, _ = kueue_cluster
    # Positions in the LocalQueue, as Kueue's plugin prints them: lq-a waits w2, w4; lq-b w3, w5.
    expected = {"w0": "", "w1": "", "w2": "0", "w3": "0", "w4": "1", "w5": "1"}
    assert ko.wait_for(lambda: _positions(kk) == expected, timeout=60), _positions(kk)
    rows = kk.table("list", "workload")
    assert {n: r["STATUS"] for n, r in rows.items()} == {
        "w0": "ADMITTED", "w1": "ADMITTED", "w2": "PENDING", "w3": "PENDING", "w4": "PENDING", "w5": "PENDING"}
    assert {r["CLUSTERQUEUE"] for r in rows.values()} == {"cq"}
    assert {n: r["LOCALQUEUE"] for n, r in rows.items()} == {n: _queue_of(n) for n in PRIORITIES}


def test_list_queues_show_counts_and_active(kueue_cluster):
    kk, _ = kueue_cluster

    def cq_row():
        row = kk.table("list", "clusterqueue").get("cq")
        return row if row and row["PENDING WORKLOADS"] == "4" and row["ADMITTED WORKLOADS"] == "2" else None
    row = ko.wait_for(cq_row, timeout=30)
    assert row, kk.run("list", "clusterqueue")
    assert (row["COHORT"], row["ACTIVE"]) == ("solo", "true")
    assert set(kk.table("list", "clusterqueue", "--active=false")) == set()
    lqs = kk.table("list", "localqueue")
    assert {n: (r["CLUSTERQUEUE"], r["PENDING WORKLOADS"], r["ADMITTED WORKLOADS"]) for n, r in lqs.items()} == {
        "lq-a": ("cq", "2", "1"), "lq-b": ("cq", "2", "1")}
    listed = json.loads(kk.run("list", "localqueue", "-o", "json"))["items"]
    active = {lq["metadata"]["name"]: _active(lq) for lq in listed}
    assert active == {"lq-a": ("True", "Ready"), "lq-b": ("True", "Ready")}


def _active(obj: dict) -> tuple[str, str]:
    return next((c["status"], c["reason"]) for c in obj["status"]["conditions"] if c["type"] == "Active")


def test_stop_and_resume_workload_take_effect(kueue_cluster):
    kk, creds = kueue_cluster
    assert ko.wait_for(lambda: _statuses(kk).get("w1") == "ADMITTED", timeout=60)

    # Stopping an admitted workload evicts it with Kueue's reason, and its quota goes to the next in line.
    assert "stopped" in kk.run("stop", "workload", "w0")
    assert ko.wait_for(lambda: _statuses(kk).get("w2") == "ADMITTED", timeout=30), kk.run("list", "workload")
    w0 = _workload(creds, "w0")
    assert _conditions(w0)["Evicted"] == ("True", "Deactivated")
    assert ko.wait_for(lambda: _positions(kk) == {"w0": "", "w1": "", "w2": "", "w3": "0", "w4": "0", "w5": "1"},
                       timeout=30), _positions(kk)
    if kk.reference:
        # Ours also clears the admission, as the owner job's reconciler would for Kueue.
        assert not (w0.get("status") or {}).get("admission")
        assert _conditions(w0)["QuotaReserved"][0] == "False" and _conditions(w0)["Requeued"] == ("False", "Deactivated")
        assert _statuses(kk)["w0"] == "PENDING"
    else:
        # Kueue keeps a bare Workload's admission: it still lists as ADMITTED beside the two holding the quota.
        assert (w0.get("status") or {}).get("admission") and _statuses(kk)["w0"] == "ADMITTED"

    # Stopping a pending one takes it out of the queue: w5 moves up in lq-b; resumed, w3 is back in front.
    kk.run("stop", "workload", "w3")
    assert ko.wait_for(lambda: _positions(kk)["w5"] == "0", timeout=30), _positions(kk)
    assert _positions(kk)["w3"] == ""
    assert _conditions(_workload(creds, "w3"))["Evicted"] == ("True", "Deactivated")
    assert "resumed" in kk.run("resume", "workload", "w3")
    assert ko.wait_for(lambda: (_positions(kk)["w3"], _positions(kk)["w5"]) == ("0", "1"), timeout=30), _positions(kk)


def test_resumed_admitted_workload_queues_again(kueue_cluster):
    kk, creds = kueue_cluster
    if not kk.reference:
        # Kueue kept the stopped bare Workload's admission: resumed, it is admitted as it was, with nothing to requeue.
        assert (_workload(creds, "w0").get("status") or {}).get("admission")
        kk.run("resume", "workload", "w0")
        assert ko.wait_for(lambda: _workload(creds, "w0")["spec"].get("active", True), timeout=30)
        assert (_workload(creds, "w0").get("status") or {}).get("admission") and _statuses(kk)["w0"] == "ADMITTED"
        assert _positions(kk)["w0"] == ""
        return
    # Resumed, w0 queues again by priority; the queue is full (w1, w2), so it waits at the front.
    kk.run("resume", "workload", "w0")
    expected = {"w0": "0", "w1": "", "w2": "", "w3": "0", "w4": "1", "w5": "1"}
    assert ko.wait_for(lambda: _positions(kk) == expected, timeout=30), _positions(kk)
    assert ko.wait_for(lambda: _conditions(_workload(creds, "w0")).get("Requeued") == ("True", "Reactivated"),
                       timeout=30)
    # Freeing quota admits the resumed w0 first (it has the highest priority); as in Kueue,
    # the admission leaves its Requeued=True (Reactivated) in place.
    kk.run("stop", "workload", "w1")
    assert ko.wait_for(lambda: _statuses(kk).get("w0") == "ADMITTED", timeout=30), kk.run("list", "workload")
    assert _conditions(_workload(creds, "w0"))["Requeued"] == ("True", "Reactivated")


def test_stop_and_resume_clusterqueue_flip_active(kueue_cluster):
    kk, creds = kueue_cluster
    kk.run("stop", "clusterqueue", "cq", "--keep-already-running")
    assert ko.wait_for(lambda: "cq" in kk.table("list", "clusterqueue", "--active=false"), timeout=30)
    lq = next(q for q in ko.listed(creds, "localqueues") if q["metadata"]["name"] == "lq-a")
    assert ko.wait_for(lambda: _active(next(q for q in ko.listed(creds, "localqueues")
                                            if q["metadata"]["name"] == "lq-a"))
                       == ("False", "ClusterQueueIsInactive"), timeout=30), lq
    kk.run("resume", "clusterqueue", "cq")
    assert ko.wait_for(lambda: kk.table("list", "clusterqueue")["cq"]["ACTIVE"] == "true", timeout=30)


def _admitted(creds) -> set[str]:
    return {w["metadata"]["name"] for w in ko.listed(creds, "workloads") if (w.get("status") or {}).get("admission")}


def _drained_keep_their_admission(kk, creds, stop: tuple[str, ...], reason: str, resume: tuple[str, ...],
                                  admitted: set[str]) -> None:
    """Kueue on bare Workloads: a drain marks the admitted ones Evicted but keeps their admission (clearing it
    is the owner job's reconciler's, and a bare Workload has none), where ours releases it."""
    assert admitted, "the queue holds admitted Workloads to drain"
    # One evicted before (w0, stopped while admitted) keeps that Evicted condition: Kueue does not set it anew.
    evicted_before = {n: _conditions(_workload(creds, n))["Evicted"] for n in admitted
                      if _conditions(_workload(creds, n)).get("Evicted", ("",))[0] == "True"}
    kk.run(*stop)
    for name in admitted:
        assert ko.wait_for(lambda name=name: _conditions(_workload(creds, name)).get("Evicted", ("",))[0] == "True",
                           timeout=30), _workload(creds, name)
        assert _conditions(_workload(creds, name))["Evicted"] == evicted_before.get(name, ("True", reason))
        assert (_workload(creds, name).get("status") or {}).get("admission"), f"{name}'s admission is kept"
    kk.run(*resume)


def test_stop_clusterqueue_drains_and_resume_requeues(kueue_cluster):
    kk, creds = kueue_cluster
    if not kk.reference:
        _drained_keep_their_admission(kk, creds, ("stop", "clusterqueue", "cq"), "ClusterQueueStopped",
                                      ("resume", "clusterqueue", "cq"), _admitted(creds))
        return
    # Now: w1 stopped; w0 and w2 admitted; w3, w4, w5 pending.
    assert ko.wait_for(lambda: _admitted(creds) == {"w0", "w2"}, timeout=30), _admitted(creds)
    kk.run("stop", "clusterqueue", "cq")  # HoldAndDrain: the admitted ones are evicted too

    def cq_row(pending, admitted, active):
        row = kk.table("list", "clusterqueue")["cq"]
        return (row["PENDING WORKLOADS"], row["ADMITTED WORKLOADS"], row["ACTIVE"]) == (pending, admitted, active)
    assert ko.wait_for(lambda: cq_row("5", "0", "false"), timeout=30), kk.run("list", "clusterqueue")
    for name in ("w0", "w2"):
        conditions = _conditions(_workload(creds, name))
        assert conditions["Evicted"] == ("True", "ClusterQueueStopped")
        assert conditions["Requeued"] == ("False", "ClusterQueueStopped")
    # Resumed, the drained ones are held until marked Requeued=True (as Kueue gates on Requeued=False);
    # whichever are admissible meanwhile take the quota.
    kk.run("resume", "clusterqueue", "cq")
    for name in ("w0", "w2"):
        assert ko.wait_for(lambda name=name: _conditions(_workload(creds, name)).get("Requeued")
                           == ("True", "ClusterQueueRestarted"), timeout=30), _workload(creds, name)
    assert ko.wait_for(lambda: cq_row("3", "2", "true"), timeout=30), kk.run("list", "clusterqueue")


def test_stop_localqueue_drains_only_its_workloads(kueue_cluster):
    kk, creds = kueue_cluster
    if not kk.reference:
        _drained_keep_their_admission(kk, creds, ("stop", "localqueue", "lq-a"), "LocalQueueStopped",
                                      ("resume", "localqueue", "lq-a"),
                                      {n for n in _admitted(creds) if _queue_of(n) == "lq-a"})
        return
    from_lq_a = {n for n in _admitted(creds) if _queue_of(n) == "lq-a"}
    kk.run("stop", "localqueue", "lq-a")  # lq-a's admitted ones go; lq-b's w3 and w5 take the quota
    assert ko.wait_for(lambda: _admitted(creds) == {"w3", "w5"}, timeout=30), _admitted(creds)
    for name in from_lq_a:
        assert _conditions(_workload(creds, name))["Evicted"] == ("True", "LocalQueueStopped")
    assert ko.wait_for(lambda: kk.table("list", "localqueue")["lq-a"]["PENDING WORKLOADS"] == "0", timeout=30)
    assert not {n for n, p in _positions(kk).items() if p and _queue_of(n) == "lq-a"}, "lq-a's workloads left the queue"
    kk.run("resume", "localqueue", "lq-a")
    for name in from_lq_a:
        assert ko.wait_for(lambda name=name: _conditions(_workload(creds, name)).get("Requeued")
                           == ("True", "LocalQueueRestarted"), timeout=30)
    assert ko.wait_for(lambda: _positions(kk).get("w0") == "0", timeout=30), _positions(kk)
