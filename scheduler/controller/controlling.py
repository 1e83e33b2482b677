"""The reference scheduler's controller: feeds the core from informers, runs cycles, writes status.

Writes use server-side apply on the status subresource with one field manager, so conditions
merge by type with whatever else writes them (the load generator marks workloads Finished).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import orjson

from scheduler.api import contenttypes, groups
from scheduler.controller import (
    admissionchecking, deadlines, estimating, informing, metering, podsreadiness, statuses, topologyfeeding,
    workqueues,
)
from scheduler.core import (
    activation, admissionchecks, conversion, draining, executiontime, podsready, queuestatus, scheduling,
)
from scheduler.core.decisions import (
    CLUSTER_QUEUE_INACTIVE, FAILED_CHECKS, NAMESPACE_MISMATCH, Admit, Decision, Park, Preempt, describe,
)
from scheduler.core.kinds import ClusterQueue
from scheduler.core.queues import QueueManager
from scheduler.core.workloads import Workload
from scheduler.kube import client as kube

log = logging.getLogger(__name__)

GROUP_VERSION = groups.API_VERSION
BASE = groups.PATH
PATHS = {"namespaces": "/api/v1/namespaces"}
"""Resources outside Kueue's group; the others are under ``BASE``."""
FIELD_MANAGER = statuses.FIELD_MANAGER
EXECUTION_FIELD_MANAGER = "kqbench-scheduler-execution-time"
"""Writes DeactivationTarget=True for an exceeded maximum execution time (a merge patch, not an apply)."""
EXECUTION_RETRY_SECONDS = 1.0
"""How long after a failed DeactivationTarget write (or one waiting for another write) it is tried again."""
DEFAULT_MAX_UNWRITTEN = 256


@dataclass(frozen=True, slots=True)
class ControllerSettings:
    write_concurrency: int = 32
    """Status writes in flight at once (bounded so a burst of admissions cannot flood the apiserver)."""
    idle_wait_seconds: float = 1.0
    """How long the cycle loop sleeps when nothing changed."""
    status_interval_seconds: float = 2.0
    """How often ClusterQueue/LocalQueue status counts are refreshed (only changed ones are written)."""
    queue_status_workers: int = 10
    """Queue status writes in flight at once, apart from the decisions' writes: Kueue ships 5 workers for
    its ClusterQueue and 5 for its LocalQueue controller (groupKindConcurrency). Sharing the decisions'
    slots, 2,000 queues' statuses every round kept admissions waiting behind them."""
    slow_down_seconds: tuple[float, float] = (0.001, 0.010)
    """After a cycle that admitted nothing, wait this long before the next, doubling from the first to
    the second while no cycle admits (Kueue's scheduler loop: pkg/util/wait/backoff.go, 1 ms to 10 ms)."""
    max_unwritten: int = DEFAULT_MAX_UNWRITTEN
    min_cycle_seconds: float = 0.0
    """Each cycle takes at least this long, the loop waiting out the rest: the core at another scheduler's
    pace (e.g. Kueue's measured cycle time), to tell a difference of decisions from one of pace. 0: as
    fast as it can."""
    hold_evicted_quota: bool = False
    """An eviction marks the Workload Evicted and Preempted and leaves its admission and quota in place
    until someone else releases them (QuotaReserved=False, no admission: a job's controller), as Kueue
    leaves a bare Workload; the Workload counts as being evicted meanwhile. Off: the eviction write
    clears the reservation itself, as a job's controller would at once (the reference scheduler's design)."""
    log_cycles: bool = False
    """Log every decision of every cycle (INFO, one line each: scheduler.core.decisions.describe), for
    reading why it decided beside Kueue's own cycle log (its --zap-log-level 3 and up)."""
    write_pending_reasons: bool = False
    """Write QuotaReserved=False with the reason on every head a cycle turns away, when the reason
    changed, one write after another before the next cycle starts, as Kueue's scheduler does
    (pkg/scheduler/scheduler.go, requeueAndUpdate). Off: only for a namespace its ClusterQueue does not
    select and an inactive ClusterQueue, the writes in the background (the reference scheduler's design)."""
    """Admissions decided in memory but not yet written; from this many on, the cycle loop waits for the
    writes (a cycle started below it may still admit one head per ClusterQueue). Deciding far ahead of
    the API gains nothing: on a small machine it takes CPU the writes need."""
    # Expected admission times (scheduler.controller.estimating): off unless `estimator` names one.
    estimator: str = estimating.NONE
    estimate_refresh_seconds: float = estimating.DEFAULT_REFRESH_SECONDS
    estimate_max_cpu_seconds: float = estimating.DEFAULT_MAX_CPU_SECONDS
    estimate_max_cycles: int = estimating.DEFAULT_MAX_CYCLES


def _workload_path(namespace: str, name: str) -> str:
    return f"{BASE}/namespaces/{namespace}/workloads/{name}"


def next_slow_down(previous: float, bounds: tuple[float, float]) -> float:
    """The wait after another cycle that admitted nothing: the first bound, then doubling up to the second."""
    first, cap = bounds
    return first if previous <= 0 else min(previous * 2, cap)


def _key_of(obj: dict) -> tuple[str, str]:
    meta = obj["metadata"]
    return meta.get("namespace", "default"), meta["name"]


def _rv(obj: dict) -> int:
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


@dataclass
class Controller:
    client: kube.KubeClient
    manager: QueueManager
    metrics: metering.SchedulerMetrics
    settings: ControllerSettings = field(default_factory=ControllerSettings)
    clock: Callable[[], float] = time.time
    on_change: Callable[[], None] | None = None
    """Called after every change of queue state (position strategies hook in here)."""
    workload_observer: Callable[[str, dict, Workload | None], None] | None = None
    """Called with every Workload event the core took (type, object, decoded; None when deleted):
    the job integration reads Workloads through this controller's informer."""
    pods_ready: podsready.WaitForPodsReady = podsready.OFF
    """Kueue's waitForPodsReady (scheduler.controller.podsreadiness); its requeuing timestamp orders the
    Workloads a PodsReady timeout evicted even when it is off, as in Kueue."""

    def __post_init__(self) -> None:
        self.decoder = conversion.WorkloadDecoder(self.pods_ready.requeuing_timestamp)
        self.readiness = podsreadiness.PodsReadiness(self.pods_ready,
                                                     hold_evicted_quota=self.settings.hold_evicted_quota)
        self.checks = admissionchecking.AdmissionChecking(self._cluster_queue_of,
                                                         hold_evicted_quota=self.settings.hold_evicted_quota)
        self.changed = asyncio.Event()
        self._writes = asyncio.Semaphore(self.settings.write_concurrency)
        self._tasks: set[asyncio.Task] = set()
        # Every Workload the API holds as last listed or watched (key -> its identifying metadata), with the
        # newest resourceVersion taken in (from the watch or a write of ours): anything older is a stale echo.
        self._known_workloads: dict[tuple[str, str], dict] = {}
        # The QuotaReserved condition of each Workload last seen with it False: Kueue writes a pending
        # message only when it changes, and keeps the condition's lastTransitionTime.
        self._not_reserved: dict[tuple[str, str], dict] = {}
        self._evictions_in_flight: set[tuple[str, str]] = set()
        # Admission writes in flight: an eviction of the same Workload is written after it (below).
        self._admissions_in_flight: dict[tuple[str, str], asyncio.Task] = {}
        # The newest pending object of a Workload whose admission write is in flight, taken in when the
        # write ends (the version check then drops it when it predates the admission).
        self._held_while_admitting: dict[tuple[str, str], dict] = {}
        self.informers: list[informing.Informer] = []
        self._status_written: dict[str, queuestatus.QueueStatus] = {}
        # Queue statuses to write, the latest per queue: a queue waits in line once (client-go's work queue).
        self._queue_statuses = workqueues.WorkQueue()
        self._queue_status_next: dict[str, tuple[str, str, dict, queuestatus.QueueStatus]] = {}
        # Conditions of each ClusterQueue ("name") and LocalQueue ("ns/name") as last seen in the API.
        self._queue_conditions: dict[str, list[dict]] = {}
        # Workloads with a stop/resume/drain status write in flight: one at a time each.
        self._status_writes_in_flight: set[tuple[str, str]] = set()
        # Workloads whose event called for a write while another of theirs was in flight: that write's
        # response is judged again as an event would be (the event raced ahead of the response).
        self._changed_in_flight: set[tuple[str, str]] = set()
        # Workloads evicted by a HoldAndDrain stop, until their queue resumes and they are marked Requeued.
        self._held_by_stop: dict[tuple[str, str], Workload] = {}
        # Admitted, active Workloads with a maximum execution time, at their deadlines: (decoded, object).
        self._executing: deadlines.Deadlines[tuple[Workload, dict]] = deadlines.Deadlines()
        self._unwritten = 0
        # The heads the last cycle turned away, with why (written when write_pending_reasons is on).
        self._turned_away: list[tuple[Workload, str]] = []
        self.estimates = estimating.create(self.manager, self.settings.estimator, self.settings.estimate_refresh_seconds,
                                           self.settings.estimate_max_cpu_seconds, self.settings.estimate_max_cycles,
                                           self.metrics.registry, self.clock)
        """The expected admission times the visibility server adds to its entries; None without an estimator."""
        self.ready = False
        """True once every informer has listed: the core holds the cluster's state."""
        self.synced = asyncio.Event()
        """Set when ``ready`` turns True."""

    # -- feeding the core ---------------------------------------------------------------
    def informer_handlers(self) -> dict[str, tuple[Callable[[list[dict]], None], Callable[[str, dict], None]]]:
        """(on_list, on_event) per resource, as the informers call them: how each kind reaches the core."""
        m = self.manager

        def simple(add, delete, decode, key):
            known: set[tuple] = set()

            def on_list(items):
                # A relist replaces what is known: objects deleted while the watch was down are gone.
                listed = {key(item) for item in items}
                for gone in known - listed:
                    delete(*gone)
                known.clear()
                known.update(listed)
                for item in items:
                    add(decode(item))
                self._touch()

            def on_event(kind, obj):
                if kind == "DELETED":
                    known.discard(key(obj))
                    delete(*key(obj))
                else:
                    known.add(key(obj))
                    add(decode(obj))
                self._touch()
            return on_list, on_event

        name = lambda o: (o["metadata"]["name"],)  # noqa: E731
        ns_name = lambda o: (o["metadata"].get("namespace", "default"), o["metadata"]["name"])  # noqa: E731

        def seen(decode, key):
            """Decode, remembering the queue's conditions (their lastTransitionTime is kept on rewrite)."""
            def wrapped(obj):
                conditions = self._queue_conditions["/".join(key(obj))] = statuses.conditions_of(obj)
                if not any(c.get("type") == "Active" for c in conditions):
                    self._status_written.pop("/".join(key(obj)), None)  # new (or recreated): write it
                return decode(obj)
            return wrapped
        def cluster_queue_added(cq: ClusterQueue) -> None:
            m.add_cluster_queue(cq)
            self.checks.cluster_queue_changed(cq.name, self.clock())  # its checks may have changed

        return {
            "admissionchecks": simple(m.add_admission_check, m.delete_admission_check,
                                      conversion.admission_check_from_dict, name),
            "resourceflavors": simple(m.add_resource_flavor, m.delete_resource_flavor,
                                      conversion.resource_flavor_from_dict, name),
            "workloadpriorityclasses": simple(m.add_workload_priority_class, m.delete_workload_priority_class,
                                              conversion.workload_priority_class_from_dict, name),
            "cohorts": simple(m.add_cohort, m.delete_cohort, conversion.cohort_from_dict, name),
            "namespaces": simple(m.add_namespace, m.delete_namespace, conversion.namespace_from_dict, name),
            "clusterqueues": simple(cluster_queue_added, m.delete_cluster_queue,
                                    seen(conversion.cluster_queue_from_dict, name), name),
            "localqueues": simple(m.add_local_queue, m.delete_local_queue,
                                  seen(conversion.local_queue_from_dict, ns_name), ns_name),
            "workloads": (self._list_workloads, self._workload_event),
        }

    def _touch(self) -> None:
        self.changed.set()
        if self.on_change:
            self.on_change()

    def _apply_workload(self, obj: dict, from_write: bool = False) -> None:
        """Feed one Workload object to the core, unless it is older than one applied before.

        A write's response and the watch's events race: the watch may deliver the events that preceded
        our write after its response (replaying them would undo the write: re-admit an evicted workload),
        and a write's response may come after the watch delivered a later change by someone else
        (applying it would undo that change: a quota the generator released held again for good).
        """
        meta = obj["metadata"]
        key = (meta.get("namespace", "default"), meta["name"])
        version = _rv(obj)
        known = self._known_workloads.get(key)
        if known is not None and version < _rv(known):
            return
        workload = self.decoder.decode(obj)
        if key in self._admissions_in_flight and not from_write and workload.admission is None \
                and not workload.finished:
            # An event from before our admission write (a position or message written to the pending
            # Workload): applying it would release the quota the core assumed, and another head would be
            # admitted into it. Kueue's cache keeps an assumed Workload's quota whatever its queue hears.
            self.metrics.held_while_admitting.inc()
            held = self._held_while_admitting.get(key)
            if held is None or version >= _rv(held):
                self._held_while_admitting[key] = obj
            return
        # What a later relist needs to announce its deletion (the owner, for the Job integration).
        self._known_workloads[key] = {"metadata": {k: meta[k] for k in ("namespace", "name", "ownerReferences",
                                                                         "resourceVersion") if k in meta}}
        reserved = next((c for c in statuses.conditions_of(obj) if c.get("type") == "QuotaReserved"), None)
        if reserved is not None and reserved.get("status") == "False":
            self._not_reserved[key] = reserved
        else:
            self._not_reserved.pop(key, None)
        if self.workload_observer is not None:
            self.workload_observer("MODIFIED", obj, workload)
        if self.estimates is not None:
            self.estimates.observe_workload(obj, workload)
        if workload.finished:
            self.manager.mark_finished(workload.key)
        else:
            self.manager.add_workload(workload)
        if self.readiness.observe(workload, obj, self.clock()):
            self.changed.set()  # the cycle loop's wait may have to end sooner
        if self.checks.observe(workload, obj, self.clock()):
            self.changed.set()
        if draining.is_held_by_stop(workload):
            self._held_by_stop[workload.key] = workload
        else:
            self._held_by_stop.pop(workload.key, None)
        self._time_execution(workload, obj)
        change = activation.change_for(workload)
        # Never from a write's own response: what that write could not change, writing again won't.
        if change is activation.Change.DEACTIVATE and not from_write:
            body = statuses.deactivation_spec(meta.get("resourceVersion", ""))
            self._patch_once(workload, "", body, FIELD_MANAGER, contenttypes.MERGE_PATCH, None)
        elif change is not None and not from_write:
            body = statuses.activation_status(workload, change, statuses.conditions_of(obj), self.clock())
            requeue = change is activation.Change.REACTIVATE
            evicted_from = workload.admission.cluster_queue if workload.admission is not None else None
            self._write_status_once(workload, body, requeue, evicted_from)

    def take_write_response(self, obj: dict) -> None:
        """Feed back the Workload a status write of ours returned, as the write itself does when it ends."""
        self._apply_workload(obj, from_write=True)

    def _saw_version(self, key: tuple[str, str], version: int) -> None:
        """A write of ours reached this version: the watch's events before it are history."""
        known = self._known_workloads.get(key)
        if known is not None and version > _rv(known):
            known["metadata"]["resourceVersion"] = str(version)

    def _list_workloads(self, items: list[dict]) -> None:
        """A (re)list replaces what is known: a Workload deleted while the watch was down (an apiserver
        restart, etcd away) is forgotten here, or its quota would stay held for good."""
        listed = {_key_of(obj): obj for obj in items}
        for key in [k for k in self._known_workloads if k not in listed]:
            self._forget_workload(key, self._known_workloads[key])
        for obj in items:
            self._apply_workload(obj)
        self._touch()

    def _workload_event(self, kind: str, obj: dict) -> None:
        if kind == "DELETED":
            self._forget_workload(_key_of(obj), obj)
        else:
            self._apply_workload(obj)
        self._touch()

    def _forget_workload(self, key: tuple[str, str], obj: dict) -> None:
        self._known_workloads.pop(key, None)
        self._executing.disarm(key)
        self.readiness.forget(key)
        self.checks.forget(key)
        self._not_reserved.pop(key, None)
        self._held_by_stop.pop(key, None)
        self.manager.delete_workload(key)
        if self.estimates is not None:
            self.estimates.forget(key)
        if self.workload_observer is not None:
            self.workload_observer("DELETED", obj, None)

    # -- writing decisions ----------------------------------------------------------------
    def _spawn(self, coroutine) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    @property
    def writes_in_flight(self) -> int:
        """Writes started in the background (decisions, stop/resume/drain, pending reasons) not yet ended."""
        return len(self._tasks)

    async def settle(self, timeout: float = 5.0) -> None:
        """Wait up to ``timeout`` seconds for the writes in flight now to end."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)

    async def _write_admission(self, decision: Admit, now: float) -> None:
        try:
            await self._write_admission_once(decision, now)
            key = decision.workload.key
            if self._admissions_in_flight.get(key) is asyncio.current_task():
                del self._admissions_in_flight[key]
            held = self._held_while_admitting.pop(key, None)
            if held is not None:
                self._apply_workload(held)  # dropped when older than the admission written
        finally:
            self._unwritten -= 1
            self.metrics.unwritten.set(self._unwritten)
            if self._unwritten < self.settings.max_unwritten:
                self.changed.set()  # a cycle loop waiting for the writes may go on

    async def _write_admission_once(self, decision: Admit, now: float) -> None:
        workload = decision.workload
        path = _workload_path(workload.namespace, workload.name)
        async with self._writes:
            try:
                body = statuses.admission_status(workload, decision.admission, now,
                                                 self.manager.tas_hostname_prefix_encoding,
                                                 self._required_checks(decision))
                result = await self.client.request(
                    "PATCH", f"{path}/status?fieldManager={FIELD_MANAGER}&force=true", body, contenttypes.APPLY_PATCH)
            except kube.FAILURES as error:
                self.metrics.write_failures.labels("workloads/status", kube.failure_code(error)).inc()
                self.manager.cancel_admission(workload.key)
                self.readiness.assume(workload.key, False)
                self._touch()
                return
        self._saw_version(workload.key, _rv(result))
        cq = decision.cluster_queue
        self.metrics.admitted_total.labels(cq).inc()
        self.metrics.admission_latency.labels(cq).observe(max(0.0, self.clock() - workload.queue_timestamp))

    async def _write_eviction(self, target: Workload, preemptor: Workload, cluster_queue: str, now: float,
                              reason: str) -> None:
        path = _workload_path(target.namespace, target.name)
        hold = self.settings.hold_evicted_quota
        manager = statuses.EVICTION_FIELD_MANAGER if hold else FIELD_MANAGER
        admission = self._admissions_in_flight.get(target.key)
        if admission is not None:
            # A target admitted a cycle ago may still have its admission on the way: evict what the API
            # holds once it lands, as Kueue v0.19 does (the eviction keeps the quota held until released;
            # v0.17's later admission write undid the eviction, its issue #11480).
            await asyncio.wait({admission})
        try:
            async with self._writes:
                try:
                    result = await self.client.request(
                        "PATCH", f"{path}/status?fieldManager={manager}&force=true",
                        statuses.preemption_status(target, preemptor, now, reason, hold), contenttypes.APPLY_PATCH)
                except kube.FAILURES as error:
                    self.metrics.write_failures.labels("workloads/status", kube.failure_code(error)).inc()
                    return
        finally:
            self._evictions_in_flight.discard(target.key)
        # Until now the target held its quota (marked evicting); the response requeues it, or with
        # hold_evicted_quota keeps it evicting until its admission is released by someone else.
        self.metrics.evicted_total.labels(cluster_queue).inc()
        self._apply_workload(result, from_write=True)
        self._touch()

    def _write_status_once(self, workload: Workload, body: dict, requeue: bool, evicted_from: str | None) -> None:
        """Start a stop/resume/drain status write unless one for this workload is in flight."""
        manager = statuses.REQUEUE_FIELD_MANAGER if requeue else FIELD_MANAGER
        self._patch_once(workload, "/status", body, manager, contenttypes.APPLY_PATCH, evicted_from)

    def _patch_once(self, workload: Workload, subresource: str, body: dict, manager: str, content_type: str,
                    evicted_from: str | None) -> bool:
        """Start a write of the Workload (``subresource``: "/status" or "") unless one is in flight."""
        if workload.key in self._status_writes_in_flight:
            self._changed_in_flight.add(workload.key)
            return False
        self._status_writes_in_flight.add(workload.key)
        self._spawn(self._write_status(workload, body, manager, evicted_from, subresource, content_type))
        return True

    async def _write_status(self, workload: Workload, body: dict, manager: str, evicted_from: str | None,
                            subresource: str = "/status", content_type: str = contenttypes.APPLY_PATCH) -> bool:
        """Patch ``body`` (an apply configuration by default); the response is fed back like an eviction's.
        ``evicted_from``: the ClusterQueue an eviction takes the workload out of, for the metric. Whether
        it was written."""
        path = _workload_path(workload.namespace, workload.name)
        force = "&force=true" if content_type == contenttypes.APPLY_PATCH else ""
        try:
            async with self._writes:
                try:
                    result = await self.client.request(
                        "PATCH", f"{path}{subresource}?fieldManager={manager}{force}", body, content_type)
                except kube.FAILURES as error:
                    resource = "workloads/status" if subresource else "workloads"
                    self.metrics.write_failures.labels(resource, kube.failure_code(error)).inc()
                    return False
        finally:
            self._status_writes_in_flight.discard(workload.key)
        if evicted_from is not None:
            self.metrics.evicted_total.labels(evicted_from).inc()
        raced = workload.key in self._changed_in_flight
        self._changed_in_flight.discard(workload.key)
        self._apply_workload(result, from_write=not raced)
        self._touch()
        return True

    # -- maximum execution time -------------------------------------------------------------
    def _time_execution(self, workload: Workload, obj: dict) -> None:
        """Arm the deadline of an admitted, active Workload with an execution time limit; disarm any other."""
        due = executiontime.deadline(workload) if workload.active else None
        if due is None or workload.deactivation_target is not None:
            self._executing.disarm(workload.key)
        elif self._executing.arm(workload.key, due, (workload, obj)):
            self.changed.set()  # the cycle loop's wait may have to end sooner

    def next_execution_deadline(self) -> float | None:
        """The earliest armed execution deadline (POSIX seconds), None when none is."""
        return self._executing.next_due()

    def mark_exceeded(self, now: float) -> int:
        """Start the DeactivationTarget write of every Workload whose execution time ran out by ``now``
        (Kueue's reconcileMaxExecutionTime); returns how many were started."""
        started = 0
        for workload, obj in self._executing.pop_due(now):
            if not executiontime.exceeded(workload, now):
                continue
            if workload.key in self._status_writes_in_flight:
                self._executing.arm(workload.key, now + EXECUTION_RETRY_SECONDS, (workload, obj))
                continue
            self._status_writes_in_flight.add(workload.key)
            self._spawn(self._write_exceeded(workload, obj, now))
            started += 1
        return started

    async def _write_exceeded(self, workload: Workload, obj: dict, now: float) -> None:
        """The write; tried again a little later when it failed and no newer object came meanwhile (a
        conflict means one is on its way, and it arms the deadline again if it still has one)."""
        version = obj["metadata"].get("resourceVersion", "")
        body = statuses.exceeded_status(statuses.conditions_of(obj), version, now)
        written = await self._write_status(workload, body, EXECUTION_FIELD_MANAGER, None, "/status",
                                           contenttypes.MERGE_PATCH)
        known = self._known_workloads.get(workload.key)
        if not written and known is not None and known["metadata"].get("resourceVersion") == version:
            self._executing.arm(workload.key, self.clock() + EXECUTION_RETRY_SECONDS, (workload, obj))

    # -- waitForPodsReady ---------------------------------------------------------------------
    def next_readiness_deadline(self) -> float | None:
        """The earliest waitForPodsReady timer (a timeout or a backoff's end), None when none runs."""
        return self.readiness.next_due()

    def mark_not_ready(self, now: float) -> int:
        """Start the write of every Workload whose waitForPodsReady timer is due by ``now`` (the eviction, the
        deactivation or the backoff's end, scheduler.controller.podsreadiness); returns how many were started."""
        return self._mark_due(self.readiness, now)

    def _mark_due(self, timed: podsreadiness.PodsReadiness | admissionchecking.AdmissionChecking, now: float) -> int:
        """Start the writes ``timed``'s due timers call for; a Workload with a write in flight is timed again."""
        started = 0
        for workload, obj in timed.pop_due(now):
            if workload.key in self._status_writes_in_flight:
                timed.retry(workload, obj, now + timed.retry_seconds)
                continue
            write = timed.write_for(workload, obj, now)
            if write is None:
                continue
            self._status_writes_in_flight.add(workload.key)
            self._spawn(self._write_timed(timed, workload, obj, write))
            started += 1
        return started

    async def _write_timed(self, timed: podsreadiness.PodsReadiness | admissionchecking.AdmissionChecking,
                           workload: Workload, obj: dict, write: statuses.Write) -> None:
        """The write; tried again a little later when it failed and no newer object came meanwhile (a newer
        one times the Workload again itself)."""
        version = obj["metadata"].get("resourceVersion", "")
        written = await self._write_status(workload, write.body, timed.field_manager, write.evicted_from,
                                           "/status", contenttypes.MERGE_PATCH)
        known = self._known_workloads.get(workload.key)
        if not written and known is not None and known["metadata"].get("resourceVersion") == version:
            timed.retry(workload, obj, self.clock() + timed.retry_seconds)

    # -- admission checks ---------------------------------------------------------------------
    def _cluster_queue_of(self, workload: Workload) -> ClusterQueue | None:
        lq = self.manager.local_queues.get(workload.local_queue)
        return self.manager.cache.quotas.cluster_queues.get(lq.cluster_queue) if lq is not None else None

    def _required_checks(self, decision: Admit) -> frozenset[str]:
        """The admission checks an admission needs (its ClusterQueue's, on the flavors it assigned)."""
        cq = self.manager.cache.quotas.cluster_queues.get(decision.cluster_queue)
        if cq is None or not cq.admission_checks:
            return frozenset()
        return admissionchecks.checks_for_admission(admissionchecks.checks_by_flavor(cq), decision.admission)

    def mark_checks(self, now: float) -> int:
        """Start the write of every Workload whose admission checks call for one by ``now``
        (scheduler.controller.admissionchecking); returns how many were started."""
        return self._mark_due(self.checks, now)

    def _pending_body(self, workload: Workload, message: str, now: float) -> dict | None:
        """Why a workload was turned away, as a status write; None when its QuotaReserved condition says
        so already (or a write of it is in flight). Marks the write in flight."""
        previous = self._not_reserved.get(workload.key)
        if previous is not None and (previous.get("reason"), previous.get("message")) == ("Pending", message):
            return None
        known = self._known_workloads.get(workload.key)
        if known is None or workload.key in self._status_writes_in_flight:
            return None
        version = known["metadata"].get("resourceVersion", "")
        self._status_writes_in_flight.add(workload.key)
        return statuses.pending_status(workload, message, [previous] if previous else [], version, now)

    def _write_pending(self, workload: Workload, message: str, now: float) -> None:
        """Write why a workload was turned away in the background, unless it says so already."""
        body = self._pending_body(workload, message, now)
        if body is not None:
            self._spawn(self._write_status(workload, body, statuses.PENDING_FIELD_MANAGER, None))

    async def _write_turned_away(self, turned_away: list[tuple[Workload, str]], now: float) -> None:
        """Kueue's order: every head a cycle turned away, one write after another, before the next cycle."""
        for workload, message in turned_away:
            body = self._pending_body(workload, message, now)
            if body is not None:
                await self._write_status(workload, body, statuses.PENDING_FIELD_MANAGER, None)

    def _drain_and_restart(self) -> None:
        """Evict what a HoldAndDrain stop drains; mark Requeued those whose stopped queue resumed."""
        now = self.clock()
        for drain in draining.drain_targets(self.manager):
            workload = drain.workload
            body = statuses.eviction_status(workload, drain.reason, drain.message, [], now)
            self._write_status_once(workload, body, False, drain.cluster_queue)
        for workload in list(self._held_by_stop.values()):
            restart = draining.restart_for(workload, self.manager)
            if restart is not None:
                self._write_status_once(workload, statuses.requeued_status(workload, *restart, now), True, None)

    def run_cycle(self) -> list[Decision]:
        """One scheduling cycle in the core, its writes started in the background; returns its decisions."""
        started = time.perf_counter()
        now = self.clock()
        decisions = scheduling.run_cycle(self.manager, now)
        self.metrics.cycle_duration.observe(time.perf_counter() - started)
        if self.settings.log_cycles:
            for decision in decisions:
                log.info("cycle %d: %s", self.manager.cycle, describe(decision))
                if isinstance(decision, Preempt):
                    log.info("cycle %d: cohort after it: %s", self.manager.cycle,
                             orjson.dumps(self.cohort_state(decision.cluster_queue)).decode())
        self._turned_away = []
        every_head = self.settings.write_pending_reasons
        # blockAdmission: Kueue's scheduler admits no head while a Workload holding quota is not PodsReady, and
        # one it admits is not (pkg/scheduler/scheduler.go waitForPodsReadyIfNeeded).
        blocked = self.readiness.blocks_admission()
        for decision in decisions:
            kind = type(decision).__name__.lower()
            if isinstance(decision, Admit) and blocked:
                self.manager.cancel_admission(decision.workload.key)
                kind = "admit-blocked"
            elif isinstance(decision, Admit):
                blocked = self.readiness.blocking
                self.readiness.assume(decision.workload.key, True)
                self._unwritten += 1
                key = decision.workload.key
                task = self._spawn(self._write_admission(decision, now))
                self._admissions_in_flight[key] = task
                task.add_done_callback(lambda done, key=key: self._admissions_in_flight.pop(key, None)
                                       if self._admissions_in_flight.get(key) is done else None)
            elif isinstance(decision, Preempt):
                started = 0
                for target in decision.to_evict():
                    # A target chosen again while its eviction is being written is already on its way out.
                    if target.workload.key in self._evictions_in_flight:
                        continue
                    self._evictions_in_flight.add(target.workload.key)
                    started += 1
                    self._spawn(self._write_eviction(target.workload, decision.workload, decision.cluster_queue, now,
                                                     target.reason.value))
                kind = "preempt" if started else "preempt-in-flight"
                if every_head:
                    suffix = f". Pending the preemption of {started} workload(s)" if started else ""
                    self._turned_away.append((decision.workload, decision.message + suffix))
            elif every_head:
                self._turned_away.append((decision.workload, decision.message))
            elif isinstance(decision, Park) and decision.reason in (NAMESPACE_MISMATCH, CLUSTER_QUEUE_INACTIVE,
                                                                    FAILED_CHECKS):
                # Kueue writes this for every head it turns away; by default the reference scheduler only
                # for these (a head that does not fit stays unmarked, see docs/kueue.md).
                self._write_pending(decision.workload, decision.message, now)
            self.metrics.decisions.labels(kind).inc()
        self.metrics.unwritten.set(self._unwritten)
        if decisions and self.on_change:
            self.on_change()
        return decisions

    def cohort_state(self, cluster_queue: str) -> dict[str, list]:
        """What a preempting head's cohort holds after the cycle, per ClusterQueue: [name, priority, usage per
        flavor/resource in milli-units, evicting] of each admitted Workload; logged to rebuild the state as a
        differential-test case."""
        return {cq: [[r.workload.name, r.workload.priority, {f"{f}/{res}": v for (f, res), v in r.usage.items()},
                      r.evicting] for r in self.manager.cache.admitted_in((cq,))]
                for cq in sorted(self.manager.cache.quotas.neighbours(cluster_queue))}

    async def cycle(self) -> list[Decision]:
        """One cycle; with write_pending_reasons, returns once the heads it turned away are told why."""
        decisions = self.run_cycle()
        if self._turned_away:
            await self._write_turned_away(self._turned_away, self.clock())
        return decisions

    async def _cycle_loop(self, stop: asyncio.Event) -> None:
        slow_down = 0.0
        while not stop.is_set():
            self.changed.clear()
            now = self.clock()
            self.mark_exceeded(now)
            self.mark_not_ready(now)
            self.mark_checks(now)
            self.manager.retry_parked(now)  # parked workloads whose batched retry is due come back first
            caught_up = self._unwritten < self.settings.max_unwritten and not self.readiness.blocks_admission()
            started = time.perf_counter()
            decisions = await self.cycle() if caught_up and self.manager.has_work() else []
            if decisions:
                # A cycle that admitted goes on at once; one that did not slows the next down, as Kueue's.
                admitted = any(isinstance(d, Admit) for d in decisions)
                slow_down = 0.0 if admitted else next_slow_down(slow_down, self.settings.slow_down_seconds)
                rest = self.settings.min_cycle_seconds - (time.perf_counter() - started)
                await asyncio.sleep(max(rest, 0.0) + slow_down)  # also lets writes and events run between cycles
                continue
            self.manager.retry_parked(now)  # times the retries this cycle's changes asked for
            wait = self.settings.idle_wait_seconds
            for due in (self.manager.next_retry_at(), self.next_execution_deadline(), self.next_readiness_deadline(),
                        self.checks.next_due()):
                if due is not None:
                    wait = min(wait, max(0.0, due - now))
            try:
                await asyncio.wait_for(self.changed.wait(), timeout=wait)
            except asyncio.TimeoutError:
                pass

    async def _lag_loop(self, stop: asyncio.Event, period: float = 0.1) -> None:
        """Measure how late a timer fires: the time anything queued on this loop waits for its turn."""
        while not stop.is_set():
            due = time.perf_counter() + period
            await asyncio.sleep(period)
            self.metrics.loop_lag.observe(max(0.0, time.perf_counter() - due))

    # -- queue status: counts and the Active condition ------------------------------------
    async def _write_queue_status(self, key: str, path: str, kind: str, body: dict,
                                  status: queuestatus.QueueStatus) -> None:
        try:
            await self.client.request("PATCH", f"{path}/status?fieldManager={FIELD_MANAGER}&force=true", body,
                                      contenttypes.APPLY_PATCH)
        except kube.FAILURES as error:
            self.metrics.write_failures.labels(f"{kind.lower()}s/status", kube.failure_code(error)).inc()
            if self._status_written.get(key) is status:
                del self._status_written[key]  # not written after all: the next round writes it again

    async def queue_status_worker(self) -> None:
        """Write queue statuses as they are requested, one at a time, the latest per queue."""
        while True:
            key = await self._queue_statuses.get()
            try:
                item = self._queue_status_next.pop(key, None)
                if item is not None:
                    await self._write_queue_status(key, *item)
            finally:
                self._queue_statuses.done(key)

    @property
    def queue_statuses_waiting(self) -> int:
        """Queues whose status write is requested and not yet taken by a worker."""
        return len(self._queue_statuses)

    def request_queue_status(self, key: str, path: str, kind: str, name: str, namespace: str | None,
                             status: queuestatus.QueueStatus) -> None:
        """Ask the queue status workers to write ``status`` unless it is the one last written; a request
        still waiting is replaced by this one."""
        if self._status_written.get(key) == status:
            return
        self._status_written[key] = status
        body = statuses.queue_status(kind, name, namespace, status, self._queue_conditions.get(key), self.clock())
        self._queue_status_next[key] = (path, kind, body, status)
        self._queue_statuses.add(key)

    async def _status_loop(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            cluster_queues, local_queues = queuestatus.queue_statuses(self.manager)
            for cq, status in cluster_queues.items():
                self.metrics.pending.labels(cq).set(status.pending)
                self.metrics.admitted_active.labels(cq).set(status.admitted)
                self.request_queue_status(cq, f"{BASE}/clusterqueues/{cq}", "ClusterQueue", cq, None, status)
            for (ns, lq), status in local_queues.items():
                self.request_queue_status(f"{ns}/{lq}", f"{BASE}/namespaces/{ns}/localqueues/{lq}",
                                          "LocalQueue", lq, ns, status)
            self._drain_and_restart()
            try:
                await asyncio.wait_for(stop.wait(), timeout=self.settings.status_interval_seconds)
            except asyncio.TimeoutError:
                pass

    # -- running ---------------------------------------------------------------------------
    async def start_informers(self, stop: asyncio.Event) -> list[asyncio.Task]:
        """Start one informer per kind; returns once every one has listed (the core is rebuilt)."""
        tasks = []
        handlers = self.informer_handlers()
        # Configuration first so that workloads find their queues (and their namespaces' labels) when they arrive.
        for resource in ("admissionchecks", "resourceflavors", "workloadpriorityclasses", "cohorts", "clusterqueues",
                         "localqueues", "namespaces", "workloads"):
            on_list, on_event = handlers[resource]
            informer = informing.Informer(self.client, PATHS.get(resource, f"{BASE}/{resource}"), on_list, on_event)
            self.informers.append(informer)
            tasks.append(asyncio.create_task(informer.run(stop)))
            await informer.synced.wait()
        feed = topologyfeeding.TopologyFeed(self.manager, self.client, f"{BASE}/topologies", self._touch)
        informers, feeding = await feed.start(stop)
        self.informers += informers
        return tasks + feeding

    async def run(self, stop: asyncio.Event) -> None:
        """Run until stop is set; waits for in-flight writes before returning."""
        tasks = await self.start_informers(stop)
        self.ready = True
        self.synced.set()
        tasks.append(asyncio.create_task(self._cycle_loop(stop)))
        tasks.append(asyncio.create_task(self._status_loop(stop)))
        tasks += [asyncio.create_task(self.queue_status_worker()) for _ in range(self.settings.queue_status_workers)]
        tasks.append(asyncio.create_task(self._lag_loop(stop)))
        if self.estimates is not None:
            tasks.append(asyncio.create_task(self.estimates.run(stop)))
        await stop.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=10)
