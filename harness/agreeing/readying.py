"""PodsReady=True for the Workloads a case marks ready, as a job's controller writes it once its pods run.

A bare Workload has no pods, so under waitForPodsReady nothing would ever say it is ready and every one
would time out. The tester stands in for the job: a Workload annotated by ``rendering.PODS_READY_ANNOTATION``
gets ``PodsReady=True`` (Kueue's job reconciler's reason and message) as soon as it is Admitted, under a field
manager of its own so that no scheduler's conditions are touched. One thread watches the Workloads of every
namespace, WATCH_SECONDS per request, so that ``stop()`` never waits long; the same for both implementations.
"""

from __future__ import annotations

import threading
import time
import urllib.error
from collections.abc import Callable, Mapping

from harness.agreeing import rendering
from harness.kube import rest
from harness.kube.kubeconfig import Credentials
from scheduler.core import conditions, conversion, jobs

BASE = f"/apis/{rendering.GROUP_VERSION}"
FIELD_MANAGER = "kqbench-agreement-readying"
WATCH_SECONDS = 5
MAX_FAILED_ROUNDS = 30


def due_ready(obj: Mapping) -> bool:
    """Marked ready, Admitted, active, not evicted, and not PodsReady=True yet."""
    meta = obj.get("metadata") or {}
    if (meta.get("annotations") or {}).get(rendering.PODS_READY_ANNOTATION) != "true":
        return False
    if (obj.get("spec") or {}).get("active", True) is False:
        return False
    return (conditions.is_true(obj, "Admitted") and not conditions.is_true(obj, "Evicted")
            and not conditions.is_true(obj, "PodsReady") and not conditions.is_true(obj, "Finished"))


def pods_ready_apply(namespace: str, name: str, now: float) -> dict:
    """The apply configuration of PodsReady=True alone (Kueue's job reconciler: reason Started)."""
    return {"apiVersion": rendering.GROUP_VERSION, "kind": "Workload", "metadata": {"name": name, "namespace": namespace},
            "status": {"conditions": [{"type": "PodsReady", "status": "True", "reason": jobs.STARTED,
                                       "message": jobs.READY_MESSAGE,
                                       "lastTransitionTime": conversion.format_timestamp(now)}]}}


class Readying:
    """Started once the cluster's API is up, before any Workload is admitted; ``stop()`` at the end."""

    def __init__(self, creds: Credentials, say: Callable[[str], None] = print,
                 clock: Callable[[], float] = time.time) -> None:
        self.creds, self.say, self.clock = creds, say, clock
        self.error: str | None = None
        self.written = 0
        self._version = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="agreement-readying", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=WATCH_SECONDS + 40)

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                if not self._version:
                    listed = rest.get_json(self.creds, f"{BASE}/workloads", timeout=60)
                    for item in listed.get("items") or ():
                        self._observe(item)
                    self._version = listed["metadata"]["resourceVersion"]
                rest.watch_from(self.creds, f"{BASE}/workloads", self._version, WATCH_SECONDS, self._resume_at,
                                self._observe, lambda obj: None)
                failures = 0
            except rest.Gone:
                self._version = ""
            except (OSError, urllib.error.URLError, ValueError, KeyError) as error:
                failures += 1
                self.error = str(error)
                if failures >= MAX_FAILED_ROUNDS:
                    self.say(f"readying: gave up after {failures} failed rounds: {error}")
                    return
                self._stop.wait(0.5)

    def _resume_at(self, version: str) -> None:
        self._version = version

    def _observe(self, obj: dict) -> None:
        if not due_ready(obj):
            return
        meta = obj["metadata"]
        path = (f"{BASE}/namespaces/{meta['namespace']}/workloads/{meta['name']}/status"
                f"?fieldManager={FIELD_MANAGER}&force=true")
        status, body = rest.request(self.creds, "PATCH", path, pods_ready_apply(meta["namespace"], meta["name"],
                                                                                self.clock()),
                                    "application/apply-patch+yaml")
        if status >= 300:
            self.error = f"PATCH {path} answered {status}: {body[:200]!r}"
        else:
            self.written += 1
