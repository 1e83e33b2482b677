"""Reading what an implementation decided, from the apiserver: Workloads, ClusterQueues, the
visibility API, and every eviction as it happens (a Workload watch), for a batch of cases."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import tenacity

from harness.agreeing import cases, decisions, rendering
from harness.kube import rest, waiting
from harness.kube.kubeconfig import Credentials

BASE = f"/apis/{rendering.GROUP_VERSION}"
VISIBILITY = "/apis/visibility.kueue.x-k8s.io/v1beta2"
READERS = 8
"""Parallel visibility reads: a batch has hundreds of queues, each one GET."""


class _Later(RuntimeError):
    pass


@dataclass(frozen=True)
class State:
    """One look at the cluster: enough to tell whether decisions still change."""

    workloads: list[dict]
    cluster_queues: list[dict]

    def signature(self) -> tuple:
        admitted = sorted((w["metadata"]["namespace"], w["metadata"]["name"], repr(decisions.admission_of(w)),
                           decisions.holds_evicted_quota(w), decisions.deactivation_of(w),
                           decisions.requeue_count_of(w), repr(decisions.check_states_of(w, "")))
                          for w in self.workloads)
        usage = sorted((q["metadata"]["name"], json.dumps((q.get("status") or {}).get("flavorsUsage"), sort_keys=True))
                       for q in self.cluster_queues)
        return tuple(admitted), tuple(usage)


def look(creds: Credentials) -> State:
    return State(_listed(creds, f"{BASE}/workloads"), _listed(creds, f"{BASE}/clusterqueues"))


@tenacity.retry(stop=tenacity.stop_after_delay(60), wait=waiting.BACKOFF, reraise=True,
                retry=tenacity.retry_if_exception_type(_Later))
def _listed(creds: Credentials, path: str) -> list[dict]:
    """A LIST, asked again while the apiserver says "later" (429 while a re-applied CRD's storage
    re-initializes, 5xx), for at most a minute."""
    status, body = rest.get(creds, path, timeout=60)
    if status in waiting.RETRIED_STATUSES:
        raise _Later(f"GET {path} answered {status}")
    if status != 200:
        raise RuntimeError(f"GET {path} answered {status}: {body[:200]!r}")
    return json.loads(body)["items"]


def settled(creds: Credentials, alive, quiet: float, timeout: float, clock=time.monotonic,
            sleep=time.sleep, waits=dict) -> State:
    """The state once its signature held for ``quiet`` seconds of quiet credit; bounded by ``timeout``.
    ``alive()`` is asked each round, so that a crashed scheduler ends the wait at once; ``waits()``
    gives each deciding thread's run-queue wait so far (seconds, by thread), which no quiet is
    credited for."""
    deadline = clock() + timeout
    last, quiet_for, starved = None, 0.0, 0.0
    then, waits_then = clock(), waits()
    while True:
        if not alive():
            raise SchedulerDied("the scheduler exited while decisions were settling")
        state = look(creds)
        signature = state.signature()
        now, waits_now = clock(), waits()
        waited = longest_wait(waits_then, waits_now)
        starved += min(waited, now - then)
        if signature != last:
            last, quiet_for = signature, 0.0
        else:
            quiet_for += quiet_credit(now - then, waited)
        then, waits_then = now, waits_now
        if quiet_for >= quiet:
            return state
        if now >= deadline:
            raise NotSettled(f"decisions still changed after {timeout:.0f}s (the last {quiet_for:.0f}s quiet of "
                             f"{quiet:.0f}s needed; the most starved deciding thread waited {starved:.0f}s for a CPU)")
        sleep(1.0)


def longest_wait(before: dict, after: dict) -> float:
    """The most one thread waited for a CPU between two readings of ``waits()`` (a thread new since
    ``before`` counts all its wait). One thread, not the sum: a Go process has dozens of threads that
    each wait a little on a busy machine, while a starved decider has one waiting all the time."""
    return max((wait - before.get(thread, 0.0) for thread, wait in after.items()), default=0.0)


def quiet_credit(wall: float, waited: float) -> float:
    """How much of a round with no change counts as quiet: its wall time less the time the most
    starved deciding thread was runnable but kept off a CPU. A scheduler starved by other work on
    the machine decides nothing for a while without having finished, so a loaded machine makes
    settling slower rather than early."""
    return max(0.0, wall - max(0.0, waited))


class SchedulerDied(RuntimeError):
    pass


class NotSettled(RuntimeError):
    pass


def read_decisions(creds: Credentials, state: State, batch: dict[str, cases.Case],
                   evictions: dict[str, list[Eviction]]) -> dict[str, decisions.Decisions]:
    """Every case's decisions at a settled point (``evictions``: since the last one, per case)."""
    admitted = decisions.admitted_by_case(state.workloads, batch)
    reserved = decisions.reserved_by_case(state.workloads, batch)
    lifecycle = decisions.lifecycle_by_case(state.workloads, batch)
    queues = {q["metadata"]["name"]: q for q in state.cluster_queues}
    pages = _pages(creds, batch)
    out = {}
    for prefix, case in batch.items():
        pending = {cq.name: pages[("cq", rendering.named(prefix, cq.name))] for cq in case.clusterQueues}
        local = {f"{lq.namespace}/{lq.name}": pages[("lq", f"{rendering.named(prefix, lq.namespace)}/{lq.name}")]
                 for lq in case.localQueues}
        usage = {cq.name: decisions.usage_of(queues.get(rendering.named(prefix, cq.name), {}), prefix)
                 for cq in case.clusterQueues}
        evicted = evictions.get(prefix, [])
        held: dict[str, tuple[str, str]] = {}
        by: dict[str, str] = {}
        for eviction in evicted:
            if eviction.held is not None:
                held.setdefault(eviction.workload, eviction.held)
            if eviction.preemptor:
                by.setdefault(eviction.workload, eviction.preemptor)
        deactivated, requeues, checks = lifecycle[prefix]
        out[prefix] = decisions.Decisions(admitted[prefix], tuple(sorted((e.workload, e.reason) for e in evicted)),
                                          pending, local, usage, deactivated, requeues, checks, reserved[prefix], held,
                                          by)
    return out


def _pages(creds: Credentials, batch: dict[str, cases.Case]) -> dict[tuple[str, str], tuple[str, ...]]:
    paths = {}
    for prefix, case in batch.items():
        for cq in case.clusterQueues:
            name = rendering.named(prefix, cq.name)
            paths[("cq", name)] = f"{VISIBILITY}/clusterqueues/{name}/pendingworkloads?limit=1000"
        for lq in case.localQueues:
            ns = rendering.named(prefix, lq.namespace)
            paths[("lq", f"{ns}/{lq.name}")] = f"{VISIBILITY}/namespaces/{ns}/localqueues/{lq.name}/pendingworkloads?limit=1000"

    def read(path: str) -> tuple[str, ...]:
        status, body = rest.get(creds, path, timeout=30)
        if status in waiting.RETRIED_STATUSES:
            time.sleep(1.0)
            status, body = rest.get(creds, path, timeout=30)
        if status == 404:
            return ()
        if status != 200:
            raise RuntimeError(f"GET {path} answered {status}: {body[:200]!r}")
        return decisions.pending_names(json.loads(body))

    with ThreadPoolExecutor(READERS) as pool:
        return dict(zip(paths, pool.map(read, paths.values()), strict=True))


@dataclass(frozen=True)
class Eviction:
    workload: str
    reason: str
    held: tuple[str, str] | None
    """(ClusterQueue, QuotaReserved time) it held when evicted (``decisions.held_when_evicted``)."""
    preemptor: str | None = None
    """The Workload whose preemption evicted it, where the eviction names one."""


class EvictionLog:
    """Every Evicted=True transition of a Workload, from a watch (so an eviction followed by a
    re-admission between two looks is still seen). Runs in a thread; ``stop()`` ends it."""

    WATCH_SECONDS = 5
    """Each watch request ends after this long and the next resumes from the last resourceVersion,
    so that stopping never waits on an open stream for more than this."""

    def __init__(self, creds: Credentials) -> None:
        self.creds = creds
        self._seen: set[tuple[str, str, str]] = set()
        self._names_by_uid: dict[str, str] = {}  # Kueue's evictions name the preemptor by UID
        self._new: dict[str, list[Eviction]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.error: str | None = None
        listed = rest.get_json(creds, f"{BASE}/workloads?limit=1", timeout=30)
        self._version = listed["metadata"]["resourceVersion"]
        self._thread = threading.Thread(target=self._run, name="eviction-log", daemon=True)
        self._thread.start()

    def take(self) -> dict[str, list[Eviction]]:
        """Evictions since the last take, per case prefix."""
        with self._lock:
            taken, self._new = self._new, {}
        return taken

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self.WATCH_SECONDS + 10)

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set() and failures < 20:
            path = (f"{BASE}/workloads?watch=1&allowWatchBookmarks=true&timeoutSeconds={self.WATCH_SECONDS}"
                    f"&resourceVersion={self._version}")
            try:
                rest.watch(self.creds, path, self._event, timeout=self.WATCH_SECONDS + 30)
                failures = 0
            except (OSError, urllib.error.URLError, ValueError) as error:
                failures += 1
                self.error = str(error)
                self._stop.wait(0.5)

    def _event(self, event: dict) -> None:
        obj = event.get("object") or {}
        version = (obj.get("metadata") or {}).get("resourceVersion")
        if event.get("type") == "ERROR":
            raise ValueError(f"watch error: {obj.get('message')}")  # e.g. 410 Gone: counted as a failure
        if version:
            self._version = version
        if event.get("type") not in ("ADDED", "MODIFIED"):
            return
        meta = obj.get("metadata") or {}
        if meta.get("uid"):
            self._names_by_uid[meta["uid"]] = meta.get("name", "")
        eviction = decisions.eviction_of(obj)
        if eviction is None:
            return
        key = (meta["namespace"], meta["name"], eviction[0])
        with self._lock:
            if key in self._seen:
                return
            self._seen.add(key)
            prefix = meta["namespace"].split("-", 1)[0]
            held = decisions.held_when_evicted(obj, prefix)
            preemptor = decisions.preemptor_of(obj, self._names_by_uid)
            self._new.setdefault(prefix, []).append(Eviction(meta["name"], eviction[1], held, preemptor))
