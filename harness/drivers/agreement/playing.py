"""A batch of cases side by side on one implementation's fresh cluster, epoch after epoch (the phase's work).

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

A scheduler that exits fails the whole batch; the decisions of the epochs before stay. Fair sharing
and waitForPodsReady are settings of the scheduler, not of a queue: cases that differ in them run on
clusters of their own (``settings``). kqbench's check controller (for cases with AdmissionChecks) and the tester's
PodsReady writer (``readying``, for cases with waitForPodsReady) run beside either scheduler alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from harness.agreeing import cases, decisions, driving, observing, readying, rendering, timing
from harness.clusters import state
from harness.implementations import contract
from harness.kube import kubeconfig
from harness.metrics import sampling
from harness.workloads import checkcontrolling

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
def play(cluster: state.ClusterInfo, scheduler: contract.SchedulerHandle, batch: dict[str, cases.Case],
         say: Callable[[str], None] = print,
         on_epoch: Callable[[int, dict[str, decisions.Decisions]], None] = lambda epoch, found: None) -> None:
    """Every case of ``batch`` (prefix -> case, one scheduler setting: the phase model checks it) through every epoch on
    ``cluster``, whose ``scheduler`` runs and whose queueing API is installed; ``on_epoch`` gets each epoch's
    decisions as they settle. Raises what stopped it (SchedulerDied, NotSettled, a refused write)."""
    creds = kubeconfig.load(cluster.kubeconfig)
    driving.set_up(creds, [obj for prefix, case in batch.items() for obj in rendering.setup_objects(case, prefix)])
    observing.look(creds)  # Kueue re-applies its CRDs on start: their storage answers 429 for a moment
    log = observing.EvictionLog(creds)
    helpers: list = []  # the check controller and the PodsReady writer, when a case needs them
    try:
        checks = None
        if any(case.admissionChecks for case in batch.values()):
            checks = checkcontrolling.CheckController(creds, say=say)
            checks.pause()  # verdicts only while the gates are closed (step 5)
            helpers.append(checks)
        if any(case.waitForPodsReady is not None for case in batch.values()):
            helpers.append(readying.Readying(creds, say=say))
        epochs = max(len(case.epochs) for case in batch.values())
        for epoch in range(epochs):
            say(f"epoch {epoch + 1}/{epochs}")
            on_epoch(epoch, _epoch(cluster, creds, batch, epoch, scheduler, log, say, checks))
    finally:
        for helper in helpers:
            helper.stop()
        log.stop()


def _epoch(info, creds, batch: dict[str, cases.Case], epoch: int, scheduler: contract.SchedulerHandle,
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


def _wait_out_steps(creds, scheduler: contract.SchedulerHandle, waits, settings, checks: checkcontrolling.CheckController | None,
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


def _deciders_waits(info, scheduler: contract.SchedulerHandle) -> Callable[[], dict]:
    """Run-queue wait so far of each thread a decision goes through: the scheduler's, kube-apiserver's, etcd's."""
    pids = [pid for pid in (scheduler.pid(), info.pids.get("kube-apiserver"), info.pids.get("etcd")) if pid]
    return lambda: sampling.thread_waits(pids)


def _rows(active: dict[str, cases.Case], epoch: int) -> list[list[dict]]:
    """Row i: the i-th new Workload of every case that has one."""
    arriving = {p: c.epochs[epoch].arrive for p, c in active.items()}
    depth = max((len(a) for a in arriving.values()), default=0)
    return [[rendering.workload(a[i], p) for p, a in arriving.items() if i < len(a)] for i in range(depth)]
