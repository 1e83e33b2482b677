"""Reading the queueing objects from the API and checking the invariants after a phase (the thin edge).

Each kind is one paginated LIST (a continued list is one resourceVersion, so one consistent snapshot).
The queue statuses are written by the scheduler every `refresh_seconds`: a status that disagrees
with the objects is read again, up to `status_reads` times one refresh apart (and while another read
fits in `recheck_seconds`), and only then a failed check. Instant checks and the admission history are
judged on the first read. Each check keeps what it cost (`Checker.last_cost`: reads and seconds): at 100k Workloads a read is seconds, and a phase
boundary's time is mostly these reads.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from harness.errors import KqbenchError
from harness.invariants import checking
from harness.kube import kubeconfig, rest
from scheduler.api import groups

TABLE = "invariants"
COST_TABLE = "invariant_reads"
COLUMNS = ("phase", "check", "status", "objects", "detail")
PASSED, FAILED, UNREAD, UNSETTLED = "passed", "failed", "unread", "unsettled"
_PAGE = 5000
"""Objects per LIST page: a few MB of JSON; at 100k Workloads 20 round trips per read instead of 200."""
_MAX_PAGES = 10_000
_KINDS = ("clusterqueues", "cohorts", "localqueues", "workloads")


@dataclass(frozen=True, slots=True)
class InvariantSettings:
    refresh_seconds: float = 2.0
    """How often the scheduler rewrites queue statuses (the reference scheduler's status period)."""
    status_reads: int = 5
    """Reads of a disagreeing status before it is a failed check (the first included)."""
    recheck_seconds: float = 30.0
    """No re-read that would end past this long after the check began: at 100k Workloads one read of
    every object takes ~20 s, the counts move on in that time under churn, and five reads spent 97 s of
    a phase boundary for a verdict of `unsettled` (nightly-100k). A status then read once and still
    disagreeing is `unsettled`, never failed: only objects that held still prove a status wrong."""


@dataclass(frozen=True, slots=True)
class ReadCost:
    """What one check after a phase took: its reads of every object and the wall time, waits included."""

    reads: int
    seconds: float
    workloads: int
    """Workloads in the last read."""


def frame(phase: str, violations: list[checking.Violation], checks: tuple[str, ...] = checking.CHECKS) -> pd.DataFrame:
    """One `passed` row per check without violations, one `failed` row per violation (pure)."""
    failed = {v.check for v in violations}
    rows = [(phase, check, PASSED, "", "") for check in checks if check not in failed]
    rows += [(phase, v.check, FAILED, ", ".join(v.objects), v.detail) for v in violations]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def tally(table: pd.DataFrame) -> str:
    """`3 failed, 0 unread, 36 unsettled`: the checks that did not pass, by why (pure)."""
    return ", ".join(f"{int((table['status'] == status).sum())} {status}" for status in (FAILED, UNREAD, UNSETTLED))


def cost_frame(phase: str, cost: ReadCost) -> pd.DataFrame:
    """The `invariant_reads` row of one check: phase, reads, seconds, workloads (pure)."""
    return pd.DataFrame([(phase, cost.reads, cost.seconds, cost.workloads)],
                        columns=["phase", "reads", "seconds", "workloads"])


def unread(phase: str, error: str) -> pd.DataFrame:
    return pd.DataFrame([(phase, check, UNREAD, "", error) for check in checking.CHECKS], columns=list(COLUMNS))


def list_all(creds: kubeconfig.Credentials, kind: str) -> list[dict]:
    """Every object of one Kueue kind (all namespaces); [] when the API does not serve the kind."""
    items: list[dict] = []
    token = ""
    for _ in range(_MAX_PAGES):
        query = urllib.parse.urlencode({"limit": _PAGE, **({"continue": token} if token else {})})
        status, body = rest.get(creds, f"{groups.PATH}/{kind}?{query}", timeout=60.0)
        if status == 404:
            return []
        if status != 200:
            raise KqbenchError(f"listing {kind} answered {status}: {body[:200]!r}")
        page = json.loads(body)
        items += page.get("items") or []
        token = (page.get("metadata") or {}).get("continue") or ""
        if not token:
            return items
    raise KqbenchError(f"listing {kind}: more than {_MAX_PAGES} pages")


def read(creds: kubeconfig.Credentials) -> checking.Snapshot:
    return checking.Snapshot(*(list_all(creds, kind) for kind in _KINDS))


class Checker:
    """The invariants of one case's cluster, checked after each phase; keeps the admission history."""

    def __init__(self, reader: Callable[[], checking.Snapshot], settings: InvariantSettings = InvariantSettings(),
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> None:
        self._reader = reader
        self._settings = settings
        self._sleep = sleep
        self._clock = clock
        self._history = checking.AdmissionHistory()
        self._reads, self._workloads = 0, 0
        self._started = 0.0
        self.last_cost: ReadCost | None = None

    def _read(self) -> checking.Snapshot:
        snapshot = self._reader()
        self._reads, self._workloads = self._reads + 1, len(snapshot.workloads)
        return snapshot

    def check(self, phase: str) -> pd.DataFrame:
        self._started, self._reads = self._clock(), 0
        try:
            return self._check(phase)
        finally:
            self.last_cost = ReadCost(self._reads, self._clock() - self._started, self._workloads)

    def _check(self, phase: str) -> pd.DataFrame:
        try:
            snapshot = self._read()
            violations = checking.check_instant(snapshot) + self._history.observe(snapshot.workloads)
            statuses = checking.check_statuses(snapshot)
            truth, held_still = checking.status_truth(snapshot), False
            began, last_read = self._started, self._clock() - self._started
            for _ in range(self._settings.status_reads - 1):
                wait = self._settings.refresh_seconds + 1.0
                if not statuses or self._clock() - began + wait + last_read > self._settings.recheck_seconds:
                    break
                self._sleep(wait)
                read_at = self._clock()
                snapshot = self._read()
                last_read = self._clock() - read_at
                statuses = checking.check_statuses(snapshot)
                now = checking.status_truth(snapshot)
                truth, held_still = now, now == truth
        except Exception as error:  # noqa: BLE001 - a check that cannot read must never fail the phase it follows
            return unread(phase, f"{type(error).__name__}: {error}"[:300])
        if statuses and not held_still:  # the objects kept changing: the statuses' lag, not a violation
            table = frame(phase, violations, checking.INSTANT_CHECKS)
            unsettled = pd.DataFrame([(phase, v.check, UNSETTLED, ", ".join(v.objects), v.detail) for v in statuses],
                                     columns=list(COLUMNS))
            settled = frame(phase, [], tuple(c for c in checking.STATUS_CHECKS if c not in {v.check for v in statuses}))
            return pd.concat([table, settled, unsettled], ignore_index=True)
        return frame(phase, violations + statuses)


def checker_for(cluster, settings: InvariantSettings = InvariantSettings()) -> Checker:
    """A Checker reading `cluster` (a ClusterInfo) through its kubeconfig."""
    creds = kubeconfig.load(cluster.kubeconfig)
    return Checker(lambda: read(creds), settings)
