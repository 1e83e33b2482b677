"""Run one agreement phase: play its batch, emitting every epoch's decisions as they settle.

Each settled epoch is one row per case in `agreement_decisions` (the decisions as JSON), so a failed
or interrupted batch keeps the epochs before; a failure is a row of `agreement_failures` with the
scheduler's log tail (the case record keeps one line only).
"""

from __future__ import annotations

import dataclasses
import json

import pandas as pd

from harness.drivers import contract
from harness.drivers.agreement import playing
from harness.errors import KqbenchError

DECISIONS = "agreement_decisions"
FAILURES = "agreement_failures"
TABLES = (DECISIONS, FAILURES)


def run(context: contract.PhaseContext) -> None:
    if context.scheduler is None:
        raise KqbenchError("the agreement phase compares schedulers' decisions: the scenario runs none "
                           "(set scheduler.enabled: true)")
    scheduler = context.scheduler

    def on_epoch(epoch: int, found) -> None:
        context.emit(DECISIONS, pd.DataFrame([{"prefix": prefix, "epoch": epoch,
                                               "decisions": json.dumps(dataclasses.asdict(decided))}
                                              for prefix, decided in found.items()]))

    try:
        playing.play(context.cluster, scheduler, dict(context.phase.cases), say=lambda line: context.say(f"  {line}"),
                     on_epoch=on_epoch)
    except Exception as error:
        message = f"{type(error).__name__}: {error}"
        if tail := scheduler.log_tail():
            message += f"\n--- last lines of the {context.scenario.scheduler.implementation} log ---\n{tail}"
        context.emit(FAILURES, pd.DataFrame([{"failure": message}]))
        raise
