"""harness.load.creating: the schedule kept on a fake clock, refusals counted, the end the member's."""

from __future__ import annotations

import asyncio

from harness.load import arrivals, creating
from scheduler.kube import client as kube
from tests.unit.harness.faketime import AsyncFakeTime

CLASS = arrivals.WorkloadClass("small", "1", 1000, 1.0, 0, None, 2, 0.5)
QUEUE = arrivals.Queue("ns", "lq", "cq")


class Refusing:
    """Answers every POST but those of the names it refuses (a 409)."""

    def __init__(self, refused: set[str]) -> None:
        self.refused, self.paths = refused, []

    async def request(self, method, path, body=None, content_type="application/json", timeout=60.0) -> dict:
        self.paths.append(path)
        if body["name"] in self.refused:
            raise kube.ApiError(409, b'{"message": "already exists"}', f"POST {path}")
        return {"stored": body["name"]}


class Member:
    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.finished: set[str] = set()

    def informers(self, client):
        return []

    def planned(self, creation, now):
        self.events.append(("planned", creation.name, now))

    def request(self, creation):
        return f"/ns/{creation.queue.namespace}/things", {"name": creation.name}

    def created(self, creation, stored, now):
        self.events.append(("created", stored["stored"]))

    def refused(self, creation):
        self.events.append(("refused", creation.name))

    def done(self):
        return {name for kind, name, *_ in self.events if kind == "created"} <= self.finished

    def progress(self):
        return ""


def _engine(refused: set[str]):
    clock, member = AsyncFakeTime(100.0), Member()
    creations = [arrivals.Creation(at, f"w-{i}", QUEUE, CLASS) for i, at in enumerate((0.5, 1.0, 1.0))]
    engine = creating.Engine(Refusing(refused), member, creations, creating.Settings(in_flight=2), "test",
                             clock=clock.clock, say=lambda text: None, sleep=clock.sleep)
    engine.result.start = clock.now
    return engine, member, clock


def _drive(engine) -> None:
    async def run():
        await engine.create_all()
        await asyncio.gather(*list(engine.tasks))
    asyncio.run(run())


def test_each_creation_is_sent_at_its_due_time_and_a_refusal_is_counted_and_forgotten():
    engine, member, clock = _engine(refused={"w-1"})
    _drive(engine)
    assert [e for e in member.events if e[0] == "planned"] == [("planned", "w-0", 100.5), ("planned", "w-1", 101.0),
                                                               ("planned", "w-2", 101.0)]
    assert ("refused", "w-1") in member.events and ("created", "w-0") in member.events
    assert engine.result.failures == 1 and "already exists" in engine.result.first_failure
    assert engine.result.lags == [0.0, 0.0, 0.0]
    assert not engine.slots.locked()  # the slots were given back


def test_the_run_is_done_only_when_everything_was_created_and_the_member_says_so():
    engine, member, clock = _engine(refused=set())
    _drive(engine)
    assert not engine.finished.is_set()
    member.finished = {"w-0", "w-1", "w-2"}
    engine.check_done()
    assert engine.finished.is_set()
