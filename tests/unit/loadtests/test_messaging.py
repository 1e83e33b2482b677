"""The master's half of kqbench's Locust messages: who joined, who is refused, who sent what."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from loadtests import messaging


@dataclass
class Message:
    """The two fields of Locust's rpc Message a listener reads."""

    node_id: str
    data: dict


def hello(node: str, version: str = "1.0", classes=("WorkloadChurn", "Bystander"), host: str = "h1") -> Message:
    return Message(node, {"host": host, "pid": 7, "version": version, "user_classes": list(classes)})


def master() -> messaging.MasterSide:
    return messaging.MasterSide(user_classes=("WorkloadChurn",), version="1.0")


def test_workers_join_when_their_hello_arrives():
    side = master()
    side.on_hello(None, hello("a"))
    side.on_hello(None, hello("b", host="h2"))
    assert side.joined() == 2 and side.problems == []
    assert {t.host for t in side.tallies.values()} == {"h1", "h2"}


@pytest.mark.parametrize("message, problem", [
    (hello("a", version="0.9"), "install the same kqbench"),
    (hello("a", classes=("Bystander",)), "lacks user classes WorkloadChurn"),
])
def test_a_worker_that_cannot_take_part_is_a_one_line_problem(message, problem):
    side = master()
    side.on_hello(None, message)
    assert side.joined() == 0
    assert len(side.problems) == 1 and problem in side.problems[0] and "\n" not in side.problems[0]


def test_each_workers_reports_add_up_to_its_requests_and_keep_its_latest_cpu():
    side = master()
    side.on_hello(None, hello("a"))
    for requests, failures, cpu in ((10, 1, 0.5), (7, 0, 1.25)):
        side.on_report("a", {"stats_total": {"num_requests": requests, "num_failures": failures},
                             messaging.CPU_KEY: cpu})
    side.on_report("b", {"stats_total": {"num_requests": 3, "num_failures": 0}})  # its hello is still on the way
    a, b = side.tallies["a"], side.tallies["b"]
    assert (a.requests, a.failures, a.cpu_seconds) == (17, 1, 1.25)
    assert (b.requests, b.joined) == (3, False)


def test_the_workers_table_has_one_row_per_worker_with_its_counts():
    from loadtests import frames

    side = master()
    side.on_hello(None, hello("a"))
    side.on_report("a", {"stats_total": {"num_requests": 5, "num_failures": 1}, messaging.CPU_KEY: 0.75})
    table = frames.workers(side.tallies.values())
    assert table.to_dict("records") == [{"worker": "a", "host": "h1", "pid": 7, "requests": 5, "failures": 1,
                                         "cpu_seconds": 0.75}]
    assert list(frames.workers([]).columns) == frames.WORKER_COLUMNS


@pytest.mark.parametrize("bind, address", [("0.0.0.0", "127.0.0.1"), ("*", "127.0.0.1"), ("::", "127.0.0.1"),
                                           ("127.0.0.2", "127.0.0.2"), ("10.0.0.5", "10.0.0.5")])
def test_local_workers_reach_the_master_where_it_listens(bind, address):
    from loadtests import localworkers

    assert localworkers.reachable_address(bind) == address


def test_a_worker_reaching_a_closing_master_is_sent_on_and_not_counted():
    """Seen in the rejoin integration test: a worker meant for the next phase reached this master on its
    way out; its CPU report made a second row in this master's workers table."""
    sent = []

    class Runner:
        def send_message(self, kind, data, client_id=None):
            sent.append((kind, data, client_id))

    environment = type("Environment", (), {"runner": Runner()})()
    side = master()
    side.on_hello(None, hello("a"))
    side.on_report("a", {"stats_total": {"num_requests": 5, "num_failures": 0}})
    side.close(environment.runner, rejoin=True)
    side.on_report("late", {"stats_total": {"num_requests": 0, "num_failures": 0}, messaging.CPU_KEY: 0.27})
    side.on_hello(environment, hello("late"))
    side.on_report("late", {"stats_total": {"num_requests": 0, "num_failures": 0}, messaging.CPU_KEY: 0.3})
    assert set(side.tallies) == {"a"} and side.tallies["a"].requests == 5
    assert (messaging.WELCOME, {"closing": True}, "late") in sent
