"""The churn life cycle driven by an injected clock and a fake apiserver (a dict of phases)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest

from loadtests import churning
from loadtests.settings import ChurnSettings, WorkloadKind
from loadtests.workloads import Phase


def churn(**changes) -> ChurnSettings:
    base = dict(create_per_second=2.0, pending_target=5, refresh_seconds=1.0,
                mix=(WorkloadKind(runtime_seconds=3.0),), local_queues=("lq-a", "lq-b"))
    return ChurnSettings(**{**base, **changes})


@dataclass
class FakeServer:
    """Stands in for the apiserver plus a scheduler that admits `admit_per_refresh` Workloads per LIST."""

    admit_per_refresh: int = 0
    phases: dict[str, Phase] = field(default_factory=dict)
    log: list[tuple[float, str, str]] = field(default_factory=list)

    def admit(self) -> None:
        pending = [n for n, p in self.phases.items() if p is Phase.PENDING][: self.admit_per_refresh]
        for name in pending:
            self.phases[name] = Phase.ADMITTED


def simulate(ledger: churning.ChurnLedger, server: FakeServer, seconds: float, max_steps: int = 100_000) -> float:
    """Run the ledger against the fake server until `seconds` of fake time passed; returns the end time."""
    now = 0.0
    for _ in range(max_steps):
        if now >= seconds:
            return now
        action = ledger.next_action(now)
        server.log.append((now, type(action).__name__, getattr(action, "name", "")))
        if isinstance(action, churning.Wait):
            assert action.seconds >= 0
            now += max(action.seconds, 0.01)
        elif isinstance(action, churning.Create):
            server.phases[action.name] = Phase.PENDING
            ledger.created(action, now)
        elif isinstance(action, churning.Refresh):
            server.admit()
            ledger.observed(dict(server.phases), now)
        elif isinstance(action, churning.Finish):
            assert server.phases[action.name] is Phase.ADMITTED
            server.phases[action.name] = Phase.FINISHED
            ledger.finished(action.name, ok=True)
        elif isinstance(action, churning.Delete):
            assert server.phases.pop(action.name) is Phase.FINISHED
            ledger.deleted(action.name)
    raise AssertionError("simulation did not reach its end time")


def creations(server: FakeServer, until: float) -> int:
    return sum(1 for t, kind, _ in server.log if kind == "Create" and t < until)


@pytest.mark.parametrize("rate, target, seconds, expected_creates", [
    (2.0, 100, 10.0, 20),   # paced: 2/s for 10 s
    (2.0, 5, 10.0, 5),      # nothing admitted: creation stops at the pending target
    (10.0, 3, 1.0, 3),
    (0.5, 100, 10.0, 5),
])
def test_creation_is_paced_and_capped_without_admissions(rate, target, seconds, expected_creates):
    server = FakeServer()
    ledger = churning.ChurnLedger(churn(create_per_second=rate, pending_target=target), "u", random.Random(1))
    simulate(ledger, server, seconds)
    assert creations(server, seconds) == expected_creates
    assert ledger.pending == min(target, expected_creates)


def test_admitted_workloads_finish_after_their_runtime_and_are_deleted():
    server = FakeServer(admit_per_refresh=100)
    ledger = churning.ChurnLedger(churn(create_per_second=1.0, pending_target=2), "u", random.Random(1))
    simulate(ledger, server, 20.0)
    finished_at = {}
    for t, kind, name in server.log:
        if kind == "Finish":
            finished_at[name] = t
    assert finished_at, "nothing ever finished"
    # Every finished Workload was created at least runtime + one refresh earlier, and later deleted.
    created_at = {name: t for t, kind, name in server.log if kind == "Create"}
    deleted = {name for _t, kind, name in server.log if kind == "Delete"}
    for name, t in finished_at.items():
        assert t - created_at[name] >= 3.0
        assert name in deleted or server.phases.get(name) is Phase.FINISHED
    # With everything admitted quickly, creation keeps its pace: about one per second.
    assert 17 <= creations(server, 20.0) <= 20


def test_pending_depth_reaches_and_holds_the_target_while_admissions_drain_it():
    server = FakeServer(admit_per_refresh=1)
    ledger = churning.ChurnLedger(churn(create_per_second=5.0, pending_target=8, refresh_seconds=1.0), "u",
                                  random.Random(2))
    end = simulate(ledger, server, 30.0)
    assert end >= 30.0
    assert ledger.pending == 8
    assert ledger.count(Phase.ADMITTED) + ledger.count(Phase.FINISHED) <= 4  # runtime 3 s at 1 admission/s


def test_names_are_unique_and_owned_and_queues_come_from_the_settings():
    ledger = churning.ChurnLedger(churn(create_per_second=100.0, pending_target=50), "owner-x", random.Random(3))
    server = FakeServer()
    simulate(ledger, server, 1.0)
    names = [name for _t, kind, name in server.log if kind == "Create"]
    assert len(names) == len(set(names)) == 50
    assert all(n.startswith("owner-x-") for n in names)


def test_mix_weights_pick_kinds():
    small, big = WorkloadKind(weight=3, pods=1), WorkloadKind(weight=1, pods=8)
    ledger = churning.ChurnLedger(churn(mix=(small, big), create_per_second=1000.0, pending_target=4000), "u",
                                  random.Random(4))
    kinds = [ledger.next_action(i / 1000.0) for i in range(4000)]
    picked = [a.kind for a in kinds if isinstance(a, churning.Create)]
    assert 0.70 < picked.count(small) / len(picked) < 0.80


def started(ledger: churning.ChurnLedger) -> churning.ChurnLedger:
    """Past its first action, a LIST that found nothing left by an earlier phase."""
    assert ledger.next_action(0.0) == churning.Refresh()
    ledger.observed({}, 0.0)
    return ledger


def test_workloads_that_vanish_are_forgotten():
    ledger = started(churning.ChurnLedger(churn(), "u", random.Random(5)))
    action = ledger.next_action(0.0)
    ledger.created(action, 0.0)
    ledger.observed({}, 0.5)       # not yet listed: too early to conclude anything
    assert ledger.pending == 1
    ledger.observed({}, 2.0)       # still not there after a refresh period: someone deleted it
    assert ledger.pending == 0


def test_a_finish_is_not_handed_out_twice_while_in_flight():
    ledger = started(churning.ChurnLedger(churn(mix=(WorkloadKind(runtime_seconds=0.0),)), "u", random.Random(6)))
    create = ledger.next_action(0.0)
    ledger.created(create, 0.0)
    ledger.observed({create.name: Phase.ADMITTED}, 0.1)
    assert ledger.next_action(0.2) == churning.Finish(create.name)
    assert not isinstance(ledger.next_action(0.2), churning.Finish)
    ledger.finished(create.name, ok=False)          # failed: offered again
    assert ledger.next_action(0.3) == churning.Finish(create.name)


def test_back_off_after_refused_or_failing_requests_only():
    from loadtests.churning import back_off_seconds, should_back_off

    assert [should_back_off(s) for s in (0, 429, 500, 503)] == [True] * 4
    assert [should_back_off(s) for s in (200, 201, 404, 409, 422)] == [False] * 5
    pauses = [back_off_seconds(n) for n in range(1, 10)]
    assert pauses[:3] == [0.1, 0.2, 0.4] and pauses[-1] == 2.0 and pauses == sorted(pauses)


def test_a_new_user_takes_over_what_the_last_phase_left_under_its_owner():
    # The last phase's user left 2 admitted Workloads (one of a 1 s kind, one without annotation) and 3
    # pending ones; the target is 5 pending.
    left = {"old-1": Phase.ADMITTED, "old-2": Phase.ADMITTED, "old-3": Phase.PENDING, "old-4": Phase.PENDING,
            "old-5": Phase.PENDING, "old-6": Phase.FINISHED}
    ledger = churning.ChurnLedger(churn(create_per_second=10.0, mix=(WorkloadKind(runtime_seconds=3.0),
                                                                     WorkloadKind(runtime_seconds=7.0))),
                                  "slot-0", random.Random(7), prefix="slot-0-p2")
    assert ledger.next_action(0.0) == churning.Refresh()
    ledger.observed(left, 0.0, runtimes={"old-1": 1.0})
    assert ledger.pending == 3 and ledger.count(Phase.ADMITTED) == 2
    assert ledger.next_action(0.1) == churning.Delete("old-6")  # finished ones go first
    ledger.deleted("old-6")
    create = ledger.next_action(0.1)  # 2 short of the depth: creates, under its own names
    assert isinstance(create, churning.Create) and create.name == "slot-0-p2-1"
    ledger.created(create, 0.1)
    assert ledger.next_action(1.5) == churning.Finish("old-1")  # its annotated 1 s
    assert ledger.tracked["old-2"].runtime_seconds == 7.0  # no annotation: the mix's longest


def test_what_it_takes_over_finishes_when_its_runtime_since_admission_is_up_not_later():
    ledger = churning.ChurnLedger(churn(), "slot-0", random.Random(8))
    assert ledger.next_action(100.0) == churning.Refresh()
    # admitted 25 s ago by its condition, 30 s of runtime: due 5 s after the takeover
    ledger.observed({"old-1": Phase.ADMITTED}, 100.0, runtimes={"old-1": 30.0}, admitted_ago={"old-1": 25.0})
    assert not isinstance(ledger.next_action(104.0), churning.Finish)
    assert ledger.next_action(105.5) == churning.Finish("old-1")
