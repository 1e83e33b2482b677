"""The checker after a phase: statuses that lag are read again, errors are `unread` rows, never raised."""

from __future__ import annotations

import pandas as pd

from harness.errors import KqbenchError
from harness.invariants import checking, reading
from tests.unit.invariants.test_checking import cq, lq, wl


def _snapshots(*pending_in_status):
    return [checking.Snapshot([cq("a", status={"pendingWorkloads": n})], [], [lq("lq", "a")], [wl("p1"), wl("p2")])
            for n in pending_in_status]


def _checker(snapshots, reads=5):
    sleeps: list[float] = []
    queue = list(snapshots)
    checker = reading.Checker(lambda: queue.pop(0), reading.InvariantSettings(refresh_seconds=2.0, status_reads=reads),
                              sleep=sleeps.append)
    return checker, sleeps


def test_a_status_that_catches_up_within_the_reads_passes():
    checker, sleeps = _checker(_snapshots(0, 1, 2))
    table = checker.check("churn")
    assert set(table["status"]) == {reading.PASSED} and set(table["check"]) == set(checking.CHECKS)
    assert sleeps == [3.0, 3.0]


def test_a_status_that_stays_wrong_fails_after_the_last_read():
    checker, sleeps = _checker(_snapshots(0, 0, 0), reads=3)
    table = checker.check("churn")
    [failed] = table[table["status"] == reading.FAILED].to_dict("records")
    assert failed["check"] == checking.PENDING and failed["objects"] == "ClusterQueue/a" and len(sleeps) == 2
    assert (table["phase"] == "churn").all()


def test_an_unreadable_api_is_an_unread_row_per_check():
    def broken():
        raise KqbenchError("listing workloads answered 503")

    table = reading.Checker(broken, sleep=lambda s: None).check("fill")
    assert set(table["status"]) == {reading.UNREAD} and len(table) == len(checking.CHECKS)
    assert "503" in table["detail"].iloc[0]


def test_the_history_carries_from_one_phase_to_the_next():
    first = checking.Snapshot([], [], [], [wl("w", admitted_to="a", reserved_at="t0")])
    second = checking.Snapshot([], [], [], [wl("w", admitted_to="a", reserved_at="t1")])
    checker, _ = _checker([first, second])
    assert set(checker.check("fill")["status"]) == {reading.PASSED}
    table = checker.check("churn")
    assert list(table[table["status"] == reading.FAILED]["check"]) == [checking.ADMITTED_ONCE]


def test_the_report_names_the_objects_of_failed_checks_escaped():
    from harness.drivers import contract, invariants

    table = reading.frame("churn", [checking.Violation(checking.QUOTA, ("ClusterQueue/<a>",), "over")])
    table["case"] = "r0"
    section = invariants.DRIVER.report({reading.TABLE: table}, contract.ReportContext(out_dir="."))
    assert "4 checks passed, 1 failed, 0 unread, 0 unsettled" in section.html and "ClusterQueue/&lt;a&gt;" in section.html
    assert invariants.DRIVER.metrics({reading.TABLE: table}, "r0")[0] == contract.Metric("invariants.failed", 1.0, "checks", "lower")


def test_a_status_behind_objects_that_keep_changing_is_unsettled_not_failed():
    busy = [checking.Snapshot([cq("a", status={"pendingWorkloads": 0})], [], [lq("lq", "a")],
                              [wl(f"p{i}") for i in range(n)]) for n in (1, 2, 3)]  # churn: one more each read
    checker, _ = _checker(busy, reads=3)
    table = checker.check("churn/after-kill-etcd")
    assert reading.FAILED not in set(table["status"])
    [row] = table[table["status"] == reading.UNSETTLED].to_dict("records")
    assert row["check"] == checking.PENDING and row["objects"] == "ClusterQueue/a"
    assert set(table["check"]) == set(checking.CHECKS)


def test_a_check_keeps_its_reads_and_time_also_when_the_api_fails():
    now = [0.0]
    queue = _snapshots(0, 1, 2)

    def read():
        now[0] += 0.5
        return queue.pop(0)

    checker = reading.Checker(read, reading.InvariantSettings(refresh_seconds=2.0, status_reads=5),
                              sleep=lambda s: now.__setitem__(0, now[0] + s), clock=lambda: now[0])
    checker.check("churn")
    assert checker.last_cost == reading.ReadCost(reads=3, seconds=7.5, workloads=2)  # 3 reads, 2 waits of 3 s
    row = reading.cost_frame("churn", checker.last_cost).to_dict("records")
    assert row == [{"phase": "churn", "reads": 3, "seconds": 7.5, "workloads": 2}]

    def broken():
        now[0] += 1.0
        raise KqbenchError("listing workloads answered 503")

    failing = reading.Checker(broken, sleep=lambda s: None, clock=lambda: now[0])
    failing.check("drain")
    assert failing.last_cost.reads == 0 and failing.last_cost.seconds == 1.0


def test_reads_that_take_long_stop_rechecking_within_the_budget_and_leave_the_status_unsettled():
    now = [0.0]
    queue = _snapshots(0, 0, 0, 0, 0)

    def slow_read():
        now[0] += 20.0  # one read of 100k Workloads
        return queue.pop(0)

    checker = reading.Checker(slow_read, reading.InvariantSettings(refresh_seconds=2.0, status_reads=5),
                              sleep=lambda s: now.__setitem__(0, now[0] + s), clock=lambda: now[0])
    table = checker.check("fill")
    assert checker.last_cost.reads == 1 and checker.last_cost.seconds == 20.0  # a second read would end at 43 s
    assert reading.FAILED not in set(table["status"])
    assert list(table[table["status"] == reading.UNSETTLED]["check"]) == [checking.PENDING]


def test_the_report_says_after_which_phases_the_invariants_were_checked():
    from harness.drivers import invariants

    checker, _ = _checker(_snapshots(2, 2))
    fill, drain = checker.check("fill"), checker.check("drain")
    table = pd.concat([fill, drain]).assign(case="c")
    section = invariants.report_section({reading.TABLE: table}, None)
    assert "(checked after: fill, drain)" in section.html
