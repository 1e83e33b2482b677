"""One implementation, one fresh cluster, a batch of cases side by side, epoch after epoch.

The protocol that makes the outcome independent of timing, for each epoch:

1. every case's gate is closed (its queues inactive: nothing is admitted or preempted);
2. the epoch's finished Workloads are marked Finished, then its new Workloads are created, one
   creation second per Workload of a case;
3. the gates open: each case's queues become active in one event and decide on everything at once;
4. once decisions settle, if an evicted Workload still holds its quota (Kueue leaves that to a job
   reconciler, and these Workloads have no Job; the reference scheduler runs with `--hold-evicted-quota`
   to do the same, so that neither decides on quota an eviction freed before the release), a timed
   lifecycle step (an execution limit, a PodsReady timeout, a backoff, a check rule) is due, or a check
   awaits its verdict, the gates close;
5. with them closed, every evicted Workload's quota is released and every timed step waited out, round
   after round until none is left (``timing``; kqbench's check controller gives verdicts only then): a
   deactivation frees its quota the moment it is seen and many come due in the same second, so the quota
   they free is decided on in one event when the gates open again, as an epoch's arrivals are; then back to
   3. A timer started by an admission therefore runs out in the closed phase that follows it, as long as it
   outlasts one settling (the generated times do; the runner says when one did not);
6. the decisions are read: admissions, evictions (from a watch), pending lists, usage, deactivations,
   requeue counts and check states.

A scheduler that exits fails the whole batch with its log's tail; the caller goes on. Fair sharing
and waitForPodsReady are settings of the scheduler, not of a queue: cases that differ in them run on
clusters of their own. kqbench's check controller (for cases with AdmissionChecks) and the tester's
PodsReady writer (``readying``, for cases with waitForPodsReady) run beside either scheduler alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.agreeing import cases, decisions, driving, lifecycles, observing, readying, rendering, timing
from harness.clusters import bringup, spec as specs
from harness.implementations import contract, names
from harness.implementations.kueue import starting
from harness.kube import apiservice, kubeconfig
from harness.metrics import sampling
from harness.nodes import pools
from harness.progress import LineProgress
from harness.toolchain import building
from harness.workloads import checkcontrolling

IMPLEMENTATIONS = (names.REFERENCE, names.KUEUE)
SETTLE_QUIET_SECONDS = 5.0
"""No decision changed for this long = settled. Kueue requeues inadmissible Workloads in batches of 1 s
and backs its scheduling loop off by up to ~1 s; 5 s is several of both. Time the scheduler,
kube-apiserver or etcd spent waiting for a CPU does not count (observing.quiet_credit)."""
SETTLE_TIMEOUT_SECONDS = 420.0
"""A bound, not a wait: 180 s failed a batch of 52 lifecycle cases while three differential runs shared this
2-core machine (its most starved deciding thread had waited 158 s for a CPU)."""
GATE_SECONDS = 2.0
"""After closing or before opening the gates: time for both schedulers to see every change."""
TIMED_ROUNDS = 40
"""Rounds of gates opened, then closed for releases and timed steps, per epoch, and waits within one closed
phase, at most: each step can start the next (a timeout frees quota for a Workload that times out in turn), so
a case of 16 Workloads needs a few dozen at worst."""
TIMED_MARGIN_SECONDS = 1.5
"""After a timed step's due time, before settling: the schedulers act on their own timers, which the API's
whole-second times put up to a second later."""
TIMED_HORIZON_SECONDS = 120.0
"""Steps due further ahead than this are not waited for (none of a generated case is)."""
CYCLE_LOG_LEVEL = 3
"""Kueue's --zap-log-level from which its scheduler logs every cycle; the reference scheduler then logs its own."""
CLIENT_QPS, CLIENT_BURST = 300.0, 500
"""Both schedulers' client limits (Kueue v0.19's defaults): the tester measures decisions, not
throttling, and a backlog of status writes only slows settling."""


@dataclass(frozen=True)
class KueueOptions:
    """Which Kueue runs (a version of versions.toml; None: the default) and how much it logs (its
    --zap-log-level; 3 and up log every scheduling cycle, for reading why it decided)."""

    version: str | None = None
    log_level: int | None = None


@dataclass
class Outcome:
    """One case's settled decisions per epoch, up to where its run stopped."""

    decisions: list[decisions.Decisions] = field(default_factory=list)
    failure: str | None = None


StartScheduler = Callable[..., contract.SchedulerHandle]
"""(cluster, log_dir, **scheduler section fields) -> a running scheduler: harness.scenarios.schedulers.start."""


@dataclass
class Scheduler:
    stop: Callable[[], object]
    alive: Callable[[], bool]
    log_tail: Callable[[], str]
    pid: Callable[[], int | None]


def fair_sharing_of(case: cases.Case) -> tuple[str, ...] | None:
    """The scheduler's fair-sharing strategies a case runs with (None: fair sharing off)."""
    return None if case.fairSharing is None else tuple(case.fairSharing.preemptionStrategies)


SchedulerSetting = tuple[tuple[str, ...] | None, "tuple[int, int, int, int | None] | None"]


def setting_of(case: cases.Case) -> SchedulerSetting:
    """What a case needs of the scheduler's configuration: (fair_sharing_of, its waitForPodsReady's key);
    cases that differ in it never share a scheduler."""
    return fair_sharing_of(case), (None if case.waitForPodsReady is None else case.waitForPodsReady.key())


def run_batch(start: StartScheduler, implementation: str, batch: dict[str, cases.Case], log_dir: Path, name: str,
              say: Callable[[str], None] = print, kueue: KueueOptions = KueueOptions()) -> dict[str, Outcome]:
    """Every case of ``batch`` (prefix -> case) through every epoch on a new cluster ``name`` (one per
    scheduler setting among the cases, one after the other); ``start`` starts the scheduler from
    section fields (harness.scenarios.schedulers.start, handed down by the caller)."""
    settings: dict[SchedulerSetting, dict[str, cases.Case]] = {}
    for prefix, case in batch.items():
        settings.setdefault(setting_of(case), {})[prefix] = case
    outcomes: dict[str, Outcome] = {}
    for n, part in enumerate(settings.values()):
        outcomes |= _run_part(start, implementation, part, log_dir, name if n == 0 else f"{name}-{n}", say, kueue)
    return outcomes


def _run_part(start: StartScheduler, implementation: str, batch: dict[str, cases.Case], log_dir: Path, name: str,
              say: Callable[[str], None], kueue: KueueOptions) -> dict[str, Outcome]:
    """Cases of one scheduler setting (``setting_of``) on one cluster."""
    outcomes = {prefix: Outcome() for prefix in batch}
    scheduler: Scheduler | None = None
    log: observing.EvictionLog | None = None
    helpers: list = []  # the check controller and the PodsReady writer, when a case needs them
    first = next(iter(batch.values()))
    try:
        info, _ = bringup.up(specs.ClusterSpec(name=name), [pools.NodePool(count=2)], LineProgress(interval=30.0))
        creds = kubeconfig.load(info.kubeconfig)
        if implementation == names.KUEUE:
            starting.install_api(info, kueue=building.locate_kueue(version=kueue.version))
        else:
            apiservice.install_crds(creds)
        driving.set_up(creds, [obj for prefix, case in batch.items() for obj in rendering.setup_objects(case, prefix)])
        scheduler = _start(start, info, log_dir, implementation, fair_sharing_of(first), first.waitForPodsReady, kueue)
        observing.look(creds)  # Kueue re-applies its CRDs on start: their storage answers 429 for a moment
        log = observing.EvictionLog(creds)
        checks = None
        if any(case.admissionChecks for case in batch.values()):
            checks = checkcontrolling.CheckController(creds, say=say)
            checks.pause()  # verdicts only while the gates are closed (step 5)
            helpers.append(checks)
        if first.waitForPodsReady is not None:
            helpers.append(readying.Readying(creds, say=say))
        epochs = max(len(case.epochs) for case in batch.values())
        for epoch in range(epochs):
            say(f"{implementation} {name}: epoch {epoch + 1}/{epochs}")
            results = _epoch(info, creds, batch, epoch, scheduler, log, say, checks)
            for prefix, result in results.items():
                outcomes[prefix].decisions.append(result)
    except Exception as error:  # SchedulerDied, NotSettled, a refused write: the batch's cases fail, the run goes on
        tail = scheduler.log_tail() if scheduler is not None else ""
        message = f"{type(error).__name__}: {error}"
        if tail:
            message += f"\n--- last lines of the {implementation} log ---\n{tail}"
        for outcome in outcomes.values():
            outcome.failure = outcome.failure or message
        say(f"{implementation} {name}: failed: {message.splitlines()[0]}")
    finally:
        for helper in helpers:
            helper.stop()
        if log is not None:
            log.stop()
        if scheduler is not None:
            scheduler.stop()
        bringup.down(name)
    return outcomes


def _epoch(info, creds, batch: dict[str, cases.Case], epoch: int, scheduler: Scheduler,
           log: observing.EvictionLog, say, checks: checkcontrolling.CheckController | None) -> dict[str, decisions.Decisions]:
    active = {p: c for p, c in batch.items() if epoch < len(c.epochs)}
    if epoch > 0:
        driving.close_gates(creds, active)
        time.sleep(GATE_SECONDS)
    state = observing.look(creds)
    admitted = decisions.admitted_by_case(state.workloads, active)
    finished = [(rendering.named(p, c.namespace_of(name)), name) for p, c in active.items()
                for name in c.epochs[epoch].finish if name in admitted[p]]
    driving.finish(creds, finished)
    rows = _rows(active, epoch)
    driving.create_in_order(creds, rows, say=say)
    time.sleep(GATE_SECONDS)
    settings = {p: c.waitForPodsReady for p, c in active.items()}
    waits = _deciders_waits(info, scheduler)
    for _ in range(TIMED_ROUNDS):
        opened = time.time()
        driving.open_gates(creds, active)
        state = observing.settled(creds, scheduler.alive, SETTLE_QUIET_SECONDS, SETTLE_TIMEOUT_SECONDS, waits=waits)
        say(f"  gates opened: settled in {time.time() - opened:.0f} s")
        if early := timing.lifecycle_evictions_since(state.workloads, opened):
            say(f"  {timing.describe_early(early)} lifecycle evictions came while the gates were open, before the "
                "decisions settled: their quota was decided on with them (longer times in the cases take that out)")
        if not _anything_left(state, settings):
            break
        driving.close_gates(creds, active)
        time.sleep(GATE_SECONDS)
        state = _wait_out_steps(creds, scheduler, waits, settings, checks, say)
    else:
        say(f"  still something to release or wait for after {TIMED_ROUNDS} rounds: decisions read as they stand")
    say(f"  settled: {sum(1 for w in state.workloads if decisions.admission_of(w))} Workloads hold quota")
    return observing.read_decisions(creds, state, active, log.take())


def _anything_left(state: observing.State, settings) -> bool:
    """An evicted Workload still holds quota, some timed step is due, or a check awaits its verdict."""
    return (any(decisions.holds_evicted_quota(w) for w in state.workloads)
            or timing.next_due(state.workloads, settings, time.time(), TIMED_HORIZON_SECONDS) is not None
            or any(timing.awaits_check(w) for w in state.workloads))


def _wait_out_steps(creds, scheduler: Scheduler, waits, settings, checks: checkcontrolling.CheckController | None,
                    say) -> observing.State:
    """With the gates closed: every check verdict given, every timed step due waited out, every evicted
    Workload's quota released, until nothing is left to happen before the gates open."""
    if checks is not None:
        checks.resume()
    try:
        for _ in range(TIMED_ROUNDS):
            state = observing.settled(creds, scheduler.alive, SETTLE_QUIET_SECONDS, SETTLE_TIMEOUT_SECONDS,
                                      waits=waits)
            if any(decisions.holds_evicted_quota(w) for w in state.workloads):
                driving.release_evicted(creds, state.workloads)
                continue
            due = timing.next_due(state.workloads, settings, time.time(), TIMED_HORIZON_SECONDS)
            if due is None:
                return state
            time.sleep(max(0.0, due - time.time()) + TIMED_MARGIN_SECONDS)
        say(f"  timed steps still due after {TIMED_ROUNDS} waits with the gates closed: the gates open on them")
        return state
    finally:
        if checks is not None:
            checks.pause()


def _deciders_waits(info, scheduler: Scheduler) -> Callable[[], dict]:
    """Run-queue wait so far of each thread a decision goes through: the scheduler's, kube-apiserver's, etcd's."""
    pids = [pid for pid in (scheduler.pid(), info.pids.get("kube-apiserver"), info.pids.get("etcd")) if pid]
    return lambda: sampling.thread_waits(pids)


def _rows(active: dict[str, cases.Case], epoch: int) -> list[list[dict]]:
    """Row i: the i-th new Workload of every case that has one."""
    arriving = {p: c.epochs[epoch].arrive for p, c in active.items()}
    depth = max((len(a) for a in arriving.values()), default=0)
    return [[rendering.workload(a[i], p) for p, a in arriving.items() if i < len(a)] for i in range(depth)]


def _start(start: StartScheduler, info, log_dir: Path, implementation: str, fair_sharing: tuple[str, ...] | None,
           pods_ready: lifecycles.WaitForPodsReady | None, kueue: KueueOptions) -> Scheduler:
    """One section for both implementations (each reads its own fields): the reference scheduler decides as
    the run's Kueue version does (the Kueue defaults that version ships) and holds an evicted Workload's
    quota as Kueue holds a bare Workload's; at Kueue's cycle log level it logs its own cycles too."""
    fields = dict(implementation=implementation, qps=CLIENT_QPS, burst=CLIENT_BURST, kueue_version=kueue.version,
                  kueue_log_level=kueue.log_level, hold_evicted_quota=True,
                  log_cycles=kueue.log_level is not None and kueue.log_level >= CYCLE_LOG_LEVEL)
    if fair_sharing is not None:
        fields |= dict(fair_sharing=True, fair_sharing_strategies=",".join(fair_sharing))
    if pods_ready is not None:
        fields |= dict(wait_for_pods_ready=True, wait_for_pods_ready_timeout_seconds=pods_ready.timeoutSeconds,
                       wait_for_pods_ready_block_admission=False,
                       wait_for_pods_ready_backoff_base_seconds=pods_ready.backoffBaseSeconds,
                       wait_for_pods_ready_backoff_max_seconds=pods_ready.backoffMaxSeconds,
                       wait_for_pods_ready_backoff_limit_count=pods_ready.backoffLimitCount)
    handle = start(info, log_dir, **fields)
    return Scheduler(handle.stop, handle.alive, handle.log_tail, handle.pid)
