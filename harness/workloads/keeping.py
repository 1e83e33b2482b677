"""The backlog keeper: finishes and deletes bulk-loaded Workloads once admitted and their runtime has
passed, so that a backlog never holds quota for ever (harness.workloads.backlog says why it exists).
With `refill`, each one it sees admitted is replaced at once by a new pending Workload of the same
shape and queue (POSTed), so the pending backlog stays the size it was loaded at, as a churn fill's
pending does: a capacity step's pending must not drain by the admissions of its own hold.

A watch loop (harness.kube.watchloop) follows the bulk-loaded Workloads (label selector, from a
resourceVersion taken before the load, so no admission is missed and no initial list is needed; after
a 410 Gone, a paginated list of the admitted ones) and finishes what came due after each round, so
finishing is at most WATCH_SECONDS late.
"""

from __future__ import annotations

import datetime as dt
import secrets
import time
import urllib.parse
from collections.abc import Callable

from harness.kube import rest, watchloop
from harness.kube.kubeconfig import Credentials
from harness.workloads import backlog
from loadtests import workloads
from scheduler.api import contenttypes

WATCH_SECONDS = 2
RETRY_SECONDS = 5.0
"""A finish or delete that failed (the apiserver busy) is tried again this much later."""
PAGE = 500


class Keeper:
    """Started before a backlog is loaded; `stop()` at the end of the case (also on failure)."""

    def __init__(self, creds: Credentials, namespace: str, say: Callable[[str], None] = print,
                 clock: Callable[[], float] = time.monotonic, refill: bool = False) -> None:
        self.creds, self.namespace, self.say, self.clock, self.refill = creds, namespace, say, clock, refill
        self.refilled = 0
        """Replacements POSTed so far (with `refill`)."""
        self._replaced: set[str] = set()
        self._token = secrets.token_hex(3)  # a later keeper's replacements never take an earlier one's names
        self.ledger = backlog.Ledger()
        self._seen: dict[str, dict] = {}
        """Last object of each admitted backlog Workload: the Finished merge patch carries its conditions."""
        listed = rest.get_json(creds, self._path(limit=1), timeout=30)
        self._loop = watchloop.WatchLoop(creds, self._path(), self._observe,
                                         lambda obj: self._forget(obj["metadata"]["name"]), seconds=WATCH_SECONDS,
                                         name="kqbench-backlog-keeper", label="backlog keeper", say=say,
                                         relist=self._relist, after_round=self._finish_due,
                                         version=listed["metadata"]["resourceVersion"], rounds_called="watches")
        self._loop.start()

    @property
    def error(self) -> str | None:
        """The last failure: of a watch round, or a refill refused."""
        return self._loop.error

    def stop(self) -> int:
        """Stop watching; returns how many backlog Workloads it finished."""
        self._loop.stop()
        return self.ledger.finished

    def stop_and_say(self) -> None:
        """Stop, and say how many it finished (and its last watch error, if any)."""
        finished = self.stop()
        self.say(f"backlog keeper: finished {finished} admitted backlog Workloads"
                 + (f", replaced {self.refilled} of them with new pending ones" if self.refill else "")
                 + (f" (last watch error: {self.error})" if self.error else ""))

    def _path(self, **params) -> str:
        query = urllib.parse.urlencode({"labelSelector": backlog.SELECTOR, **params})
        return f"{workloads.collection_path(self.namespace)}?{query}"

    def _observe(self, obj: dict) -> None:
        name = obj["metadata"]["name"]
        phase = workloads.phase(obj)
        if phase is workloads.Phase.PENDING:
            self._forget(name)  # evicted: pending again, its runtime starts anew on its next admission
            return
        if self.refill and phase is workloads.Phase.ADMITTED and name not in self._replaced:
            self._replaced.add(name)  # once: evicted and admitted again, it was pending meanwhile
            self._replace(obj)  # it left the pending set now: its replacement takes its place at once
        self._seen[name] = obj
        runtime = workloads.runtime_seconds(obj) or 0.0
        ago = workloads.admitted_seconds_ago(obj, dt.datetime.now(dt.timezone.utc))
        self.ledger.observed(name, phase, runtime, ago, self.clock())

    def _forget(self, name: str) -> None:
        self._seen.pop(name, None)
        self.ledger.gone(name)

    def _relist(self) -> str:
        """After 410 Gone: the admitted ones from a paginated LIST; returns its resourceVersion to watch on from
        (none when stopped meanwhile)."""
        token = ""
        while not self._loop.stopping:
            listed = rest.get_json(self.creds, self._path(limit=str(PAGE), **({"continue": token} if token else {})),
                                   timeout=60)
            for item in listed.get("items") or ():
                if workloads.phase(item) is not workloads.Phase.PENDING:
                    self._observe(item)
            token = listed["metadata"].get("continue") or ""
            if not token:
                return listed["metadata"]["resourceVersion"]
        return ""

    def _finish_due(self) -> None:
        for name in self.ledger.due(self.clock()):
            if self._loop.stopping:
                return
            path = workloads.object_path(self.namespace, name)
            obj = self._seen.get(name, {})
            if workloads.phase(obj) is not workloads.Phase.FINISHED:
                status, _ = rest.request(self.creds, "PATCH", path + "/status",
                                         workloads.finished_patch(obj, dt.datetime.now(dt.timezone.utc)),
                                         contenttypes.MERGE_PATCH)
                if status >= 300 and status != 404:
                    self.ledger.retry(name, self.clock() + RETRY_SECONDS)
                    continue
            status, _ = rest.request(self.creds, "DELETE", path)
            if status < 300 or status == 404:
                self._seen.pop(name, None)
                self.ledger.done(name)
            else:
                self.ledger.retry(name, self.clock() + RETRY_SECONDS)

    def _replace(self, admitted: dict) -> None:
        """A new pending Workload in place of `admitted` (its queue, shape and backlog label); a refused
        POST is not retried (`error` says why; the step's fill share shows the shortfall)."""
        self.refilled += 1
        body = backlog.replacement(admitted, f"{backlog.REFILL_PREFIX}-{self._token}-{self.refilled:08d}")
        status, answer = rest.request(self.creds, "POST", workloads.collection_path(self.namespace), body)
        if status >= 300:
            self.refilled -= 1
            self._loop.error = f"refill refused: HTTP {status} {answer[:200]!r}"
