"""A small phase engine: named steps in order, teardowns that always run, a record of each (pure).

Steps and teardowns are callables; the engine only sequences them, times them on an injected clock
and records what happened, so its behaviour is unit-tested without a cluster.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(slots=True)
class StepRecord:
    name: str
    kind: str
    status: str = "pending"
    """pending | ok | failed | interrupted | skipped."""
    started: float | None = None
    ended: float | None = None
    error: str = ""

    @property
    def seconds(self) -> float | None:
        return None if self.started is None or self.ended is None else self.ended - self.started


@dataclass(slots=True)
class Step:
    name: str
    kind: str
    action: Callable[[], None]


@dataclass(slots=True)
class Outcome:
    steps: list[StepRecord] = field(default_factory=list)
    teardowns: list[StepRecord] = field(default_factory=list)
    error: BaseException | None = None

    @property
    def status(self) -> str:
        if isinstance(self.error, KeyboardInterrupt):
            return "interrupted"
        if self.error is not None or any(t.status == "failed" for t in self.teardowns):
            return "failed"
        return "ok"


class Engine:
    """Runs steps until one fails (the rest are skipped), then every registered teardown, newest first."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 on_event: Callable[[str, StepRecord], None] | None = None) -> None:
        self._clock = clock
        self._on_event = on_event or (lambda event, record: None)
        self._teardowns: list[Step] = []

    def on_teardown(self, name: str, action: Callable[[], None]) -> None:
        """Register cleanup for something a step just started (run even after Ctrl-C)."""
        self._teardowns.append(Step(name, "teardown", action))

    def run(self, steps: list[Step]) -> Outcome:
        outcome = Outcome(steps=[StepRecord(s.name, s.kind) for s in steps])
        try:
            self._run_steps(steps, outcome)
        except BaseException as error:  # an interrupt between steps (while one is announced): teardown still runs
            outcome.error = outcome.error or error
            self._mark_unfinished(outcome, error)
        outcome.teardowns = self._teardown()
        if outcome.error is None and any(t.status == "interrupted" for t in outcome.teardowns):
            outcome.error = KeyboardInterrupt("interrupted during teardown")  # the run stops after this case
        return outcome

    def _run_steps(self, steps: list[Step], outcome: Outcome) -> None:
        for step, record in zip(steps, outcome.steps):
            if outcome.error is not None:
                record.status = "skipped"
                continue
            record.started = self._clock()
            self._on_event("start", record)
            try:
                step.action()
                record.status = "ok"
            except BaseException as error:  # also KeyboardInterrupt: teardown must still run
                record.status = "interrupted" if isinstance(error, KeyboardInterrupt) else "failed"
                record.error = _one_line(error)
                outcome.error = error
            record.ended = self._clock()
            self._on_event("end", record)

    def _mark_unfinished(self, outcome: Outcome, error: BaseException) -> None:
        """After an interrupt outside a step: the first step not done is where it stopped, the rest skipped."""
        unfinished = [r for r in outcome.steps if r.status == "pending"]
        for index, record in enumerate(unfinished):
            record.status = "skipped" if index else ("interrupted" if isinstance(error, KeyboardInterrupt) else "failed")
        if unfinished:
            unfinished[0].error = _one_line(error)
            try:
                self._on_event("end", unfinished[0])
            except BaseException:  # noqa: BLE001 - a second interrupt must not skip the teardowns
                pass

    def _teardown(self) -> list[StepRecord]:
        records = []
        while self._teardowns:
            step = self._teardowns.pop()
            record = StepRecord(step.name, step.kind, started=self._clock())
            try:
                step.action()
                record.status = "ok"
            except BaseException as error:  # a second Ctrl-C must not skip the other teardowns
                record.status = "interrupted" if isinstance(error, KeyboardInterrupt) else "failed"
                record.error = _one_line(error)
            record.ended = self._clock()
            self._on_event("end", record)
            records.append(record)
        return records


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")
