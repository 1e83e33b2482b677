"""Running Kueue's baseline against the scheduler under test: create on schedule, watch, finish.

One asyncio loop in the harness process, as Kueue's runner is one process next to minimalkueue. The
engine (harness.load.creating) POSTs each Workload at its due time; this module is what is particular
to bare Workloads:
- an informer on Workloads records, by this process's clock, when each one is first seen admitted
  and when it loses its quota (eviction) — sub-second, unlike the API's 1 s timestamps;
- an informer on ClusterQueues records each status change (the CPU in status.flavorsUsage), which
  is where Kueue's recorder reads usage from;
- an evicted Workload that still holds its quota gets it released (QuotaReserved=False, no admission),
  as Kueue's runner does in the job controller's place: real Kueue leaves that to a job controller,
  and bare Workloads have none (the reference scheduler releases itself, so this never fires for it);
- a timer per admission applies Finished=True (server-side apply, our own field manager, so the
  scheduler's QuotaReserved/Admitted conditions stay) `runtime` after the admission was seen: the class's
  runtime, or the Workload's own draw (kueuebaseline.declaring), which also says what it declares;
- with `estimates_every_seconds`, a reader (kueuebaseline.reading) reads the pending Workloads' expected
  admission times meanwhile, a task of the same loop stopped with the run.
The run ends when every Workload finished, or at the phase's `seconds` (then figures say incomplete).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from harness.drivers.kueuebaseline import declaring, figures as figs, plans, reading
from harness.kube import waiting
from harness.load import arrivals, creating
from harness.workloads import bareworkloads
from loadtests import settings as load_settings, workloads as wl
from scheduler.api import contenttypes
from scheduler.controller import estimating, informing
from scheduler.core import conditions, quantities
from scheduler.kube import client as kube

NAME = "kueue-baseline"
FIELD_MANAGER = "kqbench-kueue-baseline"
"""Not the scheduler's manager: applying Finished must not take its conditions away."""
BASE = f"/apis/{wl.API_VERSION}"
SETTINGS = creating.Settings(in_flight=64, sync_timeout_seconds=60.0)
"""Creates and finishes in flight at once (Kueue's runner keeps up with 64); `max_seconds` is the phase's."""


@dataclass(slots=True)
class Outcome:
    records: dict[str, figs.WorkloadRecord]
    creating: creating.Result
    evictions_released: int = 0
    """Evicted Workloads whose quota the generator released (Kueue: it leaves that to a job controller)."""
    finish_failures: int = 0
    queue_events: list[figs.QueueEvent] = field(default_factory=list)
    """Every ClusterQueue state the informer saw, by this process's clock."""
    api_times: dict[str, list[str]] = field(default_factory=dict)
    """name -> [creationTimestamp, first QuotaReserved=True lastTransitionTime, Finished lastTransitionTime] (1 s resolution)."""
    reservations: dict[str, list[str]] = field(default_factory=dict)
    """name -> every QuotaReserved=True lastTransitionTime seen, in order (an evicted Workload reserves again)."""
    evictions: list[figs.Eviction] = field(default_factory=list)
    """Every eviction the informer saw, with its reason and preemptor."""
    runtimes: dict[str, declaring.Runtime] = field(default_factory=dict)
    """name -> what it ran and declared, for the Workloads whose runtime is their own (else the class's)."""
    reader: reading.Reader | None = None
    """The estimates read while the run went on (None: not asked for)."""
    reader_error: str = ""
    """Why the reader stopped early, when it failed outright (its failed reads are counted in it)."""


def _first_quantity(entries: list, *path: str) -> int:
    """The milli-value at entries[0].<path...>[0].<last> (Kueue's recorder reads the first flavor's
    first resource), 0 when absent."""
    node = entries
    for key in path[:-1]:
        if not node:
            return 0
        node = (node[0] or {}).get(key) or []
    return quantities.parse_quantity(node[0].get(path[-1], 0)) if node else 0


def queue_event(obj: dict, now: float) -> figs.QueueEvent:
    """A ClusterQueue object as Kueue's recorder reads it (RecordCQState)."""
    status, spec = obj.get("status") or {}, obj.get("spec") or {}
    groups = spec.get("resourceGroups") or []
    quota = _first_quantity(groups, "flavors", "resources", "nominalQuota")
    used = _first_quantity(status.get("flavorsUsage") or [], "resources", "total")
    return figs.QueueEvent(now, (obj.get("metadata") or {}).get("name", ""), used, quota)


def workload_body(creation: arrivals.Creation, runtime: declaring.Runtime | None = None) -> dict:
    """The Workload of one creation; `runtime` its own (what it runs and declares), else its class's, declared."""
    cls = creation.workload_class
    runtime = runtime or declaring.Runtime(cls.runtime_seconds, cls.runtime_seconds)
    kind = load_settings.WorkloadKind(priority=cls.priority, cpu=cls.cpu, memory="0", pods=cls.pods,
                                      runtime_seconds=cls.runtime_seconds)
    body = wl.build(creation.name, creation.queue.namespace, creation.queue.local_queue, kind, owner="kueue-baseline",
                    priority_class=cls.priority_class)
    for pod_set in body["spec"]["podSets"]:  # CPU only, as Kueue's generator requests (the queues cover cpu alone)
        for container in pod_set["template"]["spec"]["containers"]:
            container["resources"]["requests"] = {"cpu": cls.cpu}
        if cls.topology_request:  # Kueue's TAS configuration
            pod_set["topologyRequest"] = dict(cls.topology_request)
    body["metadata"]["labels"].update({plans.CLASS_LABEL: cls.name,
                                       plans.RUNTIME_LABEL: str(int(round(runtime.real_seconds * 1000)))})
    annotations = body["metadata"].setdefault("annotations", {})
    if runtime.declared_seconds is None:
        annotations.pop(estimating.RUNTIME_ANNOTATION, None)
    else:
        annotations[estimating.RUNTIME_ANNOTATION] = declaring.declared_text(runtime.declared_seconds)
    return body


class Generator:
    """The engine's member: what a bare Workload is, what is watched, and the writes a job would do."""

    def __init__(self, client: kube.KubeClient, plan: arrivals.Plan, settings: creating.Settings,
                 clock: Callable[[], float] = time.time, say: Callable[[str], None] = print,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 runtimes: dict[str, declaring.Runtime] | None = None,
                 estimates_every_seconds: float | None = None) -> None:
        self.client = client
        self.sleep = sleep
        self.plan = plan
        self.clock = clock
        self._creations = {c.name: c for c in arrivals.schedule(plan)}
        self.engine = creating.Engine(client, self, list(self._creations.values()), settings, NAME, clock, say, sleep)
        self.outcome = Outcome(records={}, creating=self.engine.result, runtimes=dict(runtimes or {}))
        if estimates_every_seconds:
            self.outcome.reader = reading.Reader(client, (q.cluster_queue for q in plan.queues),
                                                 estimates_every_seconds, clock, sleep)
        self._timers: dict[str, int] = {}
        """name -> admission epoch a finish timer is armed for (a stale timer after eviction does nothing)."""
        self._releasing: set[str] = set()
        """Evictions being finished (one release in flight per Workload)."""
        self._names_by_uid: dict[str, str] = {}
        self._evictions_seen: dict[str, tuple[str, str]] = {}
        """name -> (lastTransitionTime, message) of the last Evicted=True recorded."""

    # -- the engine's questions ---------------------------------------------------------------
    def informers(self, client: kube.KubeClient) -> list[informing.Informer]:
        return [informing.Informer(client, f"{BASE}/workloads", self._on_list, self._on_event),
                informing.Informer(client, f"{BASE}/clusterqueues", self._on_queue_list, self._on_queue_event)]

    def planned(self, creation: arrivals.Creation, now: float) -> None:
        cls = creation.workload_class
        self.outcome.records[creation.name] = figs.WorkloadRecord(
            creation.name, creation.queue.cluster_queue, cls.name, cls.cpu_milli, created=now)

    def request(self, creation: arrivals.Creation) -> tuple[str, dict]:
        return (f"{BASE}/namespaces/{creation.queue.namespace}/workloads",
                workload_body(creation, self.outcome.runtimes.get(creation.name)))

    def runtime_seconds(self, name: str) -> float:
        """What the Workload runs after its admission: its own draw, else its class's runtime."""
        own = self.outcome.runtimes.get(name)
        return own.real_seconds if own is not None else self._creations[name].workload_class.runtime_seconds

    def created(self, creation: arrivals.Creation, stored: dict, now: float) -> None:
        record = self.outcome.records.get(creation.name)
        if record is not None:
            # The POST's return is the recorder's "first event"; an admission seen earlier wins.
            record.created = min(now, record.admitted) if record.admitted is not None else now

    def refused(self, creation: arrivals.Creation) -> None:
        self.outcome.records.pop(creation.name, None)

    def done(self) -> bool:
        return all(r.finished is not None for r in self.outcome.records.values())

    def progress(self) -> str:
        records = self.outcome.records.values()
        return (f"created {len(records)}/{self.plan.total}, admitted {sum(r.admitted is not None for r in records)}, "
                f"finished {sum(r.finished is not None for r in records)}")

    # -- watch side ---------------------------------------------------------------------------
    def _on_list(self, items: list[dict]) -> None:
        for obj in items:
            self._on_event("ADDED", obj)

    def _on_event(self, kind: str, obj: dict) -> None:
        meta = obj.get("metadata") or {}
        record = self.outcome.records.get(meta.get("name", ""))
        if record is None or kind == "DELETED" or plans.CLASS_LABEL not in (meta.get("labels") or {}):
            return
        now = self.clock()
        self._names_by_uid[meta.get("uid", "")] = record.name
        self._note_eviction(record.name, obj, now)
        reserved, finished = conditions.condition(obj, "QuotaReserved"), conditions.condition(obj, "Finished")
        is_reserved, is_finished = conditions.is_true(obj, "QuotaReserved"), conditions.is_true(obj, "Finished")
        api = self.outcome.api_times.setdefault(record.name, ["", "", ""])
        api[0] = meta.get("creationTimestamp", "") or api[0]
        if is_reserved and not api[1]:
            api[1] = reserved.get("lastTransitionTime", "")
        if is_reserved and (stamp := reserved.get("lastTransitionTime", "")):
            times = self.outcome.reservations.setdefault(record.name, [])
            if not times or times[-1] != stamp:
                times.append(stamp)
        if is_finished:
            api[2] = finished.get("lastTransitionTime", "")
        if conditions.is_true(obj, "Evicted") and is_reserved and not is_finished \
                and record.name not in self._releasing:
            self._releasing.add(record.name)
            self.engine.spawn(self._release(meta.get("namespace", ""), obj))
        if is_finished:
            self._finished(record, now)
        elif conditions.is_true(obj, "Admitted") and (obj.get("status") or {}).get("admission"):
            if record.admitted_since is None:
                record.on_admitted(now)
                epoch = self._timers.get(record.name, 0) + 1
                self._timers[record.name] = epoch
                self.engine.spawn(self._finish_later(record, epoch, now + self.runtime_seconds(record.name)))
        elif record.admitted_since is not None:
            record.on_released(now, finished=False)  # evicted: queues again, its timer is stale
            self._timers[record.name] = self._timers.get(record.name, 0) + 1

    def _note_eviction(self, name: str, obj: dict, now: float) -> None:
        if not conditions.is_true(obj, "Evicted"):
            return
        evicted = conditions.condition(obj, "Evicted")
        key = (evicted.get("lastTransitionTime", ""), evicted.get("message", ""))
        if self._evictions_seen.get(name) == key:
            return
        self._evictions_seen[name] = key
        preempted = conditions.condition(obj, "Preempted") if conditions.is_true(obj, "Preempted") else {}
        reason = preempted.get("reason") or evicted.get("reason", "")
        message = preempted.get("message") or evicted.get("message", "")
        self.outcome.evictions.append(figs.Eviction(now, name, reason, figs.preemptor_of(message, self._names_by_uid)))

    def _finished(self, record: figs.WorkloadRecord, now: float) -> None:
        if record.finished is None:
            record.on_released(now, finished=True)
            self.engine.check_done()

    def _on_queue_list(self, items: list[dict]) -> None:
        for obj in items:
            self._on_queue_event("ADDED", obj)

    def _on_queue_event(self, kind: str, obj: dict) -> None:
        if kind != "DELETED":
            self.outcome.queue_events.append(queue_event(obj, self.clock()))

    # -- write side ---------------------------------------------------------------------------
    async def _finish_later(self, record: figs.WorkloadRecord, epoch: int, due: float) -> None:
        await self.sleep(max(0.0, due - self.clock()))
        if self._timers.get(record.name) != epoch or record.finished is not None:
            return
        creation = self._creations[record.name]
        path = f"{BASE}/namespaces/{creation.queue.namespace}/workloads/{record.name}/status"
        async with self.engine.slots:
            try:
                await self.client.request("PATCH", f"{path}?fieldManager={FIELD_MANAGER}&force=true",
                                          bareworkloads.finished_apply(creation.queue.namespace, record.name, self.clock(),
                                                                       "kqbench kueue-baseline: runtime elapsed after admission"),
                                          contenttypes.APPLY_PATCH)
            except creating.WRITE_ERRORS:
                self.outcome.finish_failures += 1
                if self._timers.get(record.name) == epoch:  # try again shortly, still bounded by the run's deadline
                    self.engine.spawn(self._finish_later(record, epoch, self.clock() + 1.0))
                return
        if self._timers.get(record.name) == epoch:
            self._finished(record, self.clock())

    async def _release(self, namespace: str, obj: dict) -> None:
        """Finish an eviction; a refused write (conflict: the object moved on) waits for the next event."""
        name = obj["metadata"]["name"]
        path = f"{BASE}/namespaces/{namespace}/workloads/{name}/status"
        try:
            async with self.engine.slots:
                await self.client.request("PATCH", path, bareworkloads.eviction_release(obj, self.clock()),
                                          contenttypes.MERGE_PATCH)
            self.outcome.evictions_released += 1
        except creating.WRITE_ERRORS:
            pass
        finally:
            self._releasing.discard(name)

    async def run(self) -> Outcome:
        reader = self.outcome.reader
        # bounded by the run's own bound (listing included); cancelled when the run ends, also on failure
        task = None if reader is None else asyncio.get_running_loop().create_task(
            reader.run(self.engine.settings.max_seconds + self.engine.settings.sync_timeout_seconds))
        try:
            await self.engine.run()
        finally:
            if task is not None and task.done() and not task.cancelled() and task.exception() is not None:
                self.outcome.reader_error = str(task.exception())[:300]
            await waiting.cancel(task)
        return self.outcome


def generate(creds, plan: arrivals.Plan, settings: creating.Settings, say: Callable[[str], None] = print,
             runtimes: dict[str, declaring.Runtime] | None = None,
             estimates_every_seconds: float | None = None) -> Outcome:
    """Run the whole generation in a fresh event loop; returns when done or at the deadline."""
    return creating.generate(creds, settings, NAME, lambda client: Generator(
        client, plan, settings, say=say, runtimes=runtimes, estimates_every_seconds=estimates_every_seconds))
