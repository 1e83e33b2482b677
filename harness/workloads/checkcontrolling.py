"""kqbench's admission check controller: drives checks whose ``spec.controllerName`` is
``kqbench.io/admission-check`` alike for real Kueue and the reference scheduler (Kueue's own ProvisioningRequest
controller needs a cluster autoscaler; this one follows a rule per Workload, harness.workloads.checkrules).

It marks each of its AdmissionChecks ``Active=True`` (only a check's controller does: Kueue leaves a ClusterQueue
naming an inactive one inactive), and sets the state of each of its checks in ``status.admissionChecks`` of
every Workload as that Workload's rule says, while it holds quota and is neither evicted nor finished (as Kueue's
own check controllers: provisioning/controller.go's Reconcile in v0.17.0 and v0.19.2; an evicted Workload's
states are reset to Pending before its quota is released, and a verdict then would be written for a Workload on
its way out). ``pause()`` holds every verdict (the differential tester's decisions must not see a check change
while its gates are open) until ``resume()``. A watch loop (harness.kube.watchloop) runs it: each round lists
the AdmissionChecks, then watches the Workloads of every namespace for WATCH_SECONDS from the last resourceVersion
(so a rule's later step is at most that late), then acts on what came due. A state is written as a JSON merge
patch of the whole list onto the resourceVersion it was decided from (a 409 waits for the next event).
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections.abc import Callable

from harness.kube import rest, watchloop
from harness.kube.kubeconfig import Credentials
from harness.workloads import checkrules
from scheduler.api import contenttypes, groups

WATCH_SECONDS = 1
WORKLOADS = f"{groups.PATH}/workloads"
FIELD_MANAGER = "kqbench-admission-check"
ACTIVE_REASON = "Active"
ACTIVE_MESSAGE = "The admission check is active"


def _time(text: str | None) -> float:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() if text else 0.0


def _stamp(seconds: float) -> str:
    return dt.datetime.fromtimestamp(int(seconds), dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _condition(obj: dict, kind: str) -> dict | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or () if c.get("type") == kind), None)


def _is_true(condition: dict | None) -> bool:
    return condition is not None and condition.get("status") == "True"


def pending_checks(obj: dict, ours: set[str] | frozenset[str]) -> list[dict]:
    """The Workload's Pending states of the checks named in `ours` that are due a verdict: none unless it holds
    quota and is neither evicted, finished nor deactivated."""
    if not _is_true(_condition(obj, "QuotaReserved")) or _is_true(_condition(obj, "Evicted")) or \
            _is_true(_condition(obj, "Finished")) or (obj.get("spec") or {}).get("active", True) is False:
        return []
    return [s for s in (obj.get("status") or {}).get("admissionChecks") or []
            if s.get("name") in ours and s.get("state") == "Pending"]


def rule_text(obj: dict) -> str | None:
    """The Workload's rule annotation, else its first pod set template's: a Job's annotations do not reach its
    Workload (Kueue copies only ProvisioningRequest ones), its pod template's do, in both implementations."""
    text = ((obj.get("metadata") or {}).get("annotations") or {}).get(checkrules.RULE_ANNOTATION)
    if text is not None:
        return text
    for pod_set in (obj.get("spec") or {}).get("podSets") or ():
        annotations = ((pod_set.get("template") or {}).get("metadata") or {}).get("annotations") or {}
        if checkrules.RULE_ANNOTATION in annotations:
            return annotations[checkrules.RULE_ANNOTATION]
    return None


class CheckController:
    """Started once the cluster's API is up; `stop()` at the end (also on failure)."""

    def __init__(self, creds: Credentials, say: Callable[[str], None] = print,
                 clock: Callable[[], float] = time.time) -> None:
        self.creds, self.say, self.clock = creds, say, clock
        self.rule_errors: dict[str, str] = {}
        """Workload ("namespace/name") -> the one-line error of its rule annotation."""
        self.written = 0
        self._ours: set[str] = set()
        self._seen: dict[str, dict] = {}
        self._due: dict[str, float] = {}
        self._acting = threading.Event()
        self._acting.set()
        self._lock = threading.RLock()
        """Held while a Workload is acted on, so that ``pause()`` returns with no verdict in flight."""
        self._loop = watchloop.WatchLoop(creds, WORKLOADS, self._observe, self._forget, seconds=WATCH_SECONDS,
                                         name="kqbench-check-controller", label="check controller", say=say,
                                         relist=self._relist, before_round=self._mark_active,
                                         after_round=self._act_on_due)
        self._loop.start()

    @property
    def error(self) -> str | None:
        """The last failure: of a watch round, or a state's PATCH refused."""
        return self._loop.error

    def stop(self) -> None:
        self._loop.stop()

    def pause(self) -> None:
        """Write no verdict until ``resume()``; returns once none is in flight. Workloads seen meanwhile are
        acted on at the resume."""
        self._acting.clear()
        with self._lock:
            pass

    def resume(self) -> None:
        self._acting.set()

    def __enter__(self) -> CheckController:
        return self

    def __exit__(self, *_) -> None:
        self.stop()

    # -- each round ---------------------------------------------------------------------------
    def _mark_active(self) -> None:
        """Active=True on every AdmissionCheck of ours that lacks it."""
        listed = rest.get_json(self.creds, f"{groups.PATH}/admissionchecks", timeout=30)
        ours = set()
        for check in listed.get("items") or ():
            if (check.get("spec") or {}).get("controllerName") != checkrules.CONTROLLER_NAME:
                continue
            name = check["metadata"]["name"]
            ours.add(name)
            active = _condition(check, "Active")
            if active is not None and active.get("status") == "True":
                continue
            others = [c for c in (check.get("status") or {}).get("conditions") or () if c.get("type") != "Active"]
            condition = {"type": "Active", "status": "True", "reason": ACTIVE_REASON, "message": ACTIVE_MESSAGE,
                         "lastTransitionTime": _stamp(self.clock())}
            body = {"metadata": {"resourceVersion": check["metadata"]["resourceVersion"]},
                    "status": {"conditions": [*others, condition]}}
            rest.request(self.creds, "PATCH", f"{groups.PATH}/admissionchecks/{name}/status", body,
                         contenttypes.MERGE_PATCH)
        if ours - self._ours:
            self._ours = ours
            for obj in list(self._seen.values()):
                self._observe(obj)  # a check that became ours: its Workloads seen before it are acted on now
        self._ours = ours

    def _relist(self) -> str:
        self._seen.clear()
        return watchloop.list_all(self.creds, WORKLOADS, self._observe)

    def _forget(self, obj: dict) -> None:
        key = f"{obj['metadata'].get('namespace')}/{obj['metadata']['name']}"
        self._seen.pop(key, None)
        self._due.pop(key, None)

    def _act_on_due(self) -> None:
        if not self._acting.is_set():
            return
        now = self.clock()
        for key in [k for k, due in self._due.items() if due <= now]:
            del self._due[key]
            if (obj := self._seen.get(key)) is not None:
                self._observe(obj)

    # -- one Workload ---------------------------------------------------------------------------
    def _observe(self, obj: dict) -> None:
        with self._lock:
            self._observe_locked(obj)

    def _observe_locked(self, obj: dict) -> None:
        meta = obj["metadata"]
        key = f"{meta.get('namespace')}/{meta['name']}"
        self._seen[key] = obj
        self._due.pop(key, None)
        if not self._acting.is_set():
            self._due[key] = 0.0  # looked at again at the resume
            return
        states = (obj.get("status") or {}).get("admissionChecks") or []
        mine = pending_checks(obj, self._ours)
        if not mine:
            return
        reserved = _condition(obj, "QuotaReserved")
        text = rule_text(obj)
        try:
            rule = checkrules.parse(text)
        except checkrules.BadRule as error:
            self.rule_errors[key] = str(error)
            self._write(obj, states, {s["name"]: {**s, "message": str(error)} for s in mine
                                      if s.get("message") != str(error)})
            return
        now = self.clock()
        changed, later = {}, []
        for state in mine:
            verdict = checkrules.decide(rule, int(state.get("retryCount") or 0), _time(reserved.get("lastTransitionTime")),
                                        now)
            if verdict.state is None:
                if verdict.look_again_at is not None:
                    later.append(verdict.look_again_at)
                continue
            entry = {**state, "state": verdict.state, "message": verdict.message, "lastTransitionTime": _stamp(now)}
            if verdict.requeue_after_seconds is not None:
                entry["requeueAfterSeconds"] = verdict.requeue_after_seconds
            changed[state["name"]] = entry
        if later:
            self._due[key] = min(later)
        self._write(obj, states, changed)

    def _write(self, obj: dict, states: list[dict], changed: dict[str, dict]) -> None:
        if not changed:
            return
        meta = obj["metadata"]
        body = {"metadata": {"resourceVersion": meta["resourceVersion"]},
                "status": {"admissionChecks": [changed.get(s["name"], s) for s in states]}}
        path = f"{groups.PATH}/namespaces/{meta['namespace']}/workloads/{meta['name']}/status"
        status, answer = rest.request(self.creds, "PATCH", path, body, contenttypes.MERGE_PATCH)
        if status < 300:
            self.written += 1
            self._seen[f"{meta['namespace']}/{meta['name']}"] = json.loads(answer)
        elif status not in (404, 409):  # a newer object is on its way, or it is gone
            self._loop.error = f"PATCH {path}: {status} {answer[:200]!r}"
