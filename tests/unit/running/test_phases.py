"""The phase engine: order, skip after failure, teardowns always (also on Ctrl-C), newest first."""

from __future__ import annotations

import itertools

import pytest

from harness.running import phases


def _engine(log):
    ticks = itertools.count()
    return phases.Engine(clock=lambda: float(next(ticks)))


def _step(log, name, fail=None, engine=None, teardown=False):
    def action():
        log.append(name)
        if teardown:
            engine.on_teardown(f"undo {name}", lambda: log.append(f"undo {name}"))
        if fail:
            raise fail
    return phases.Step(name, "test", action)


@pytest.mark.parametrize("fail_at, error, status, ran, skipped", [
    (None, None, "ok", ["a", "b", "c"], []),
    ("b", RuntimeError("boom"), "failed", ["a", "b"], ["c"]),
    ("a", KeyboardInterrupt(), "interrupted", ["a"], ["b", "c"]),
])
def test_steps_and_teardowns(fail_at, error, status, ran, skipped):
    log: list[str] = []
    engine = _engine(log)
    steps = [_step(log, n, error if n == fail_at else None, engine, teardown=True) for n in ("a", "b", "c")]
    outcome = engine.run(steps)
    assert outcome.status == status
    assert [r.name for r in outcome.steps if r.status == "skipped"] == skipped
    assert log == ran + [f"undo {n}" for n in reversed(ran)]
    assert all(t.status == "ok" for t in outcome.teardowns)


@pytest.mark.parametrize("error, teardown_status, status", [(RuntimeError("boom"), "failed", "failed"),
                                                          (KeyboardInterrupt(), "interrupted", "interrupted")])
def test_a_failing_or_interrupted_teardown_does_not_stop_the_others(error, teardown_status, status):
    """A Ctrl-C during teardown still lets the other teardowns run, and stops the run after this case."""
    log: list[str] = []
    engine = _engine(log)

    def start():
        engine.on_teardown("first", lambda: log.append("first"))
        engine.on_teardown("broken", lambda: (_ for _ in ()).throw(error))

    outcome = engine.run([phases.Step("s", "test", start)])
    assert log == ["first"]
    assert [t.status for t in outcome.teardowns] == [teardown_status, "ok"]
    assert outcome.status == status


def test_records_carry_times_from_the_injected_clock_and_one_line_errors():
    engine = _engine([])
    outcome = engine.run([phases.Step("x", "test", lambda: (_ for _ in ()).throw(ValueError("bad\nsecond line")))])
    [record] = outcome.steps
    assert record.seconds == 1.0
    assert record.error == "ValueError: bad"


def test_an_interrupt_between_steps_still_runs_every_teardown():
    """Ctrl-C while a finished step is announced (outside any step's action) used to leave the
    teardowns unrun: the cluster and the scheduler of the case outlived the run."""
    log: list[str] = []
    ticks = itertools.count()

    def on_event(event, record):
        if event == "end" and record.name == "a":
            raise KeyboardInterrupt

    engine = phases.Engine(clock=lambda: float(next(ticks)), on_event=on_event)
    steps = [_step(log, n, None, engine, teardown=True) for n in ("a", "b", "c")]
    outcome = engine.run(steps)
    assert outcome.status == "interrupted"
    assert [(r.name, r.status) for r in outcome.steps] == [("a", "ok"), ("b", "interrupted"), ("c", "skipped")]
    assert log == ["a", "undo a"]
    assert [t.status for t in outcome.teardowns] == ["ok"]
