"""The writes a differential run makes: set-up objects, gates closed and opened, Workloads
created, finished, and (for Kueue) evicted quota released, for a batch of cases at once."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from harness.agreeing import decisions, rendering, timing
from harness.errors import KqbenchError
from harness.kube import rest
from harness.kube.kubeconfig import Credentials
from harness.workloads import bareworkloads
from scheduler.api import contenttypes
from scheduler.core import conversion

WRITERS = 16
FIELD_MANAGER = "kqbench-agreement"
"""Not a scheduler's manager: applying Finished must not take a scheduler's conditions away."""


def path_of(obj: dict) -> str:
    meta = obj["metadata"]
    if obj["kind"] == "Namespace":
        return f"/api/v1/namespaces/{meta['name']}"
    plural = obj["kind"].lower() + "s"
    base = f"/apis/{obj['apiVersion']}"
    if "namespace" in meta:
        return f"{base}/namespaces/{meta['namespace']}/{plural}/{meta['name']}"
    return f"{base}/{plural}/{meta['name']}"


SETUP_ORDER = ("Namespace", "ResourceFlavor", "AdmissionCheck", "Cohort", "ClusterQueue", "LocalQueue")
"""Kinds applied one after the other: a LocalQueue needs its Namespace to exist."""


def apply_all(creds: Credentials, objects: Iterable[dict]) -> None:
    """Server-side apply of every object, in parallel; the first failure raises."""
    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(lambda obj: rest.apply(creds, path_of(obj), obj, FIELD_MANAGER), objects))


def set_up(creds: Credentials, objects: list[dict]) -> None:
    """Every case's queue objects, kind after kind (in parallel within a kind)."""
    unknown = {obj["kind"] for obj in objects} - set(SETUP_ORDER)
    if unknown:
        raise KqbenchError(f"no set-up order for {sorted(unknown)}: add them to driving.SETUP_ORDER")
    for kind in SETUP_ORDER:
        apply_all(creds, [obj for obj in objects if obj["kind"] == kind])


def create_in_order(creds: Credentials, rows: list[list[dict]], say: Callable[[str], None] = lambda line: None,
                    clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep) -> None:
    """Create rows[i] (one Workload of each case) in a later second than every Workload of row i-1,
    so that creation timestamps (1 s resolution) order every case's Workloads and no two tie: each
    row starts on the first whole second after the previous row's last creation answered (the
    apiserver stamps a creation before it answers, on this machine's clock)."""
    for i, row in enumerate(rows):
        sleep(max(0.0, math.floor(clock()) + 1.0 - clock()) + 0.01)
        apply_all(creds, row)
        if i % 5 == 4:
            say(f"created {i + 1}/{len(rows)} rows")


def open_gates(creds: Credentials, prefixes: Iterable[str]) -> None:
    apply_all(creds, [rendering.gate(p) for p in prefixes])


def close_gates(creds: Credentials, prefixes: Iterable[str]) -> None:
    """Delete every gate flavor; Kueue's in-use finalizer would keep it, so it is taken off."""
    def close(prefix: str) -> None:
        path = f"/apis/{rendering.GROUP_VERSION}/resourceflavors/{rendering.named(prefix, rendering.GATE)}"
        status, body = rest.request(creds, "DELETE", path)
        if status not in (200, 202, 404):
            raise KqbenchError(f"DELETE {path} answered {status}: {body[:200]!r}")
        for _ in range(20):
            status, body = rest.get(creds, path)
            if status == 404:
                return
            rest.request(creds, "PATCH", path, {"metadata": {"finalizers": None}}, contenttypes.MERGE_PATCH)
            time.sleep(0.1)
        raise KqbenchError(f"{path} was not deleted within 2 s (finalizers: {json.loads(body)['metadata'].get('finalizers')})")

    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(close, prefixes))


def finish(creds: Credentials, targets: list[tuple[str, str]]) -> None:
    """Mark Finished=True (namespace, name) Workloads, as a job that completed would."""
    now = time.time()
    apply_all_status(creds, [bareworkloads.finished_apply(ns, name, now, "kqbench agree: finished in its epoch") for ns, name in targets])


def apply_all_status(creds: Credentials, bodies: list[dict]) -> None:
    def apply(body: dict) -> None:
        path = path_of(body) + f"/status?fieldManager={FIELD_MANAGER}&force=true"
        status, answer = rest.request(creds, "PATCH", path, body, contenttypes.APPLY_PATCH)
        if status >= 300:
            raise KqbenchError(f"PATCH {path} answered {status}: {answer[:200]!r}")

    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(apply, bodies))


REQUEUED_AFTER = frozenset({"Preempted", "NodeFailures"})
"""Eviction reasons after which Kueue's job reconciler writes Requeued=True; after any other it writes
Requeued=False with the eviction's reason, which holds the Workload (a backoff, a deactivation)."""


def release_body(obj: dict, now: float) -> dict:
    """The status merge patch that releases an evicted Workload's quota as Kueue's job reconciler does once
    its Job is stopped (jobframework/reconciler.go, "handle eviction"): QuotaReserved=False, no admission,
    Admitted=False with its seconds added to accumulatedPastExecutionTimeSeconds (SyncAdmittedCondition),
    and, unless the eviction was a preemption, Requeued=False with the eviction's reason and message. (After
    a preemption Kueue writes Requeued=True, which holds nothing; the tester leaves it out, as it always has.)"""
    body = bareworkloads.eviction_release(obj, now)
    evicted = next((c for c in (obj.get("status") or {}).get("conditions") or () if c.get("type") == "Evicted"), {})
    admitted = next((c for c in (obj.get("status") or {}).get("conditions") or ()
                     if c.get("type") == "Admitted" and c.get("status") == "True"), None)
    if admitted is not None and (since := timing.stamp_seconds(admitted.get("lastTransitionTime"))) is not None:
        past = int((obj.get("status") or {}).get("accumulatedPastExecutionTimeSeconds") or 0)
        body["status"]["accumulatedPastExecutionTimeSeconds"] = past + int(now - since)
    if evicted.get("reason") and evicted["reason"] not in REQUEUED_AFTER:
        stamp = conversion.format_timestamp(now)
        kept = [c for c in body["status"]["conditions"] if c.get("type") != "Requeued"]
        body["status"]["conditions"] = [*kept, {"type": "Requeued", "status": "False", "reason": evicted["reason"],
                                                "message": evicted.get("message", ""), "lastTransitionTime": stamp}]
    return body


def release_evicted(creds: Credentials, workloads: list[dict]) -> int:
    """Release the quota evicted Workloads still hold (what Kueue's job reconciler does for a Job);
    returns how many were released."""
    now = time.time()
    held = [w for w in workloads if decisions.holds_evicted_quota(w)]

    def release(obj: dict) -> None:
        path = path_of({**obj, "kind": "Workload", "apiVersion": rendering.GROUP_VERSION}) + "/status"
        status, body = rest.request(creds, "PATCH", path, release_body(obj, now), contenttypes.MERGE_PATCH)
        if status >= 300 and status != 409:  # 409: it changed meanwhile; the next round sees it again
            raise KqbenchError(f"PATCH {path} answered {status}: {body[:200]!r}")

    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(release, held))
    return len(held)
