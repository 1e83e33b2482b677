"""PodsReady=True for the Workloads a case marks ready, as a job's controller writes it once its pods run.

A bare Workload has no pods, so under waitForPodsReady nothing would ever say it is ready and every one
would time out. The tester stands in for the job: a Workload annotated by ``rendering.PODS_READY_ANNOTATION``
gets ``PodsReady=True`` (Kueue's job reconciler's reason and message) as soon as it is Admitted, under a field
manager of its own so that no scheduler's conditions are touched. A watch loop (harness.kube.watchloop) follows
the Workloads of every namespace, WATCH_SECONDS per request; the same for both implementations.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from harness.agreeing import rendering
from harness.kube import rest, watchloop
from harness.kube.kubeconfig import Credentials
from scheduler.api import contenttypes
from scheduler.core import conditions, conversion, jobs

BASE = f"/apis/{rendering.GROUP_VERSION}"
FIELD_MANAGER = "kqbench-agreement-readying"
WATCH_SECONDS = 5


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
        self.written = 0
        self._loop = watchloop.WatchLoop(creds, f"{BASE}/workloads", self._observe, seconds=WATCH_SECONDS,
                                         name="agreement-readying", label="readying", say=say)
        self._loop.start()

    @property
    def error(self) -> str | None:
        """The last failure: of a watch round, or a PodsReady apply refused."""
        return self._loop.error

    def stop(self) -> None:
        self._loop.stop()

    def _observe(self, obj: dict) -> None:
        if not due_ready(obj):
            return
        meta = obj["metadata"]
        path = (f"{BASE}/namespaces/{meta['namespace']}/workloads/{meta['name']}/status"
                f"?fieldManager={FIELD_MANAGER}&force=true")
        status, body = rest.request(self.creds, "PATCH", path, pods_ready_apply(meta["namespace"], meta["name"],
                                                                                self.clock()),
                                    contenttypes.APPLY_PATCH)
        if status >= 300:
            self._loop.error = f"PATCH {path} answered {status}: {body[:200]!r}"
        else:
            self.written += 1
