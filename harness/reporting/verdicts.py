"""The verdict block (pure): per question the scenario asks, which design is best and by how much.

The questions are the report's own (object size, memory) and the drivers' (harness.drivers.contract
Question), in their `place` order. Each names the summary metrics that answer it, in order of
preference (the first one the run measured in at least two columns is used). The answer carries the best value with its interval
and sample count where the summary has them, and every other design as a ratio to the best. Two
designs whose intervals overlap are called not separable rather than ranked.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from harness.drivers import contract
from harness.reporting import pivoting

QUESTIONS = (
    contract.Question("Object size", "largest object in etcd (limit 1.5 MiB)", ("etcd.largest_object_bytes",),
                      place=50),
    contract.Question("Memory", "kube-apiserver peak RSS", ("process.rss_max_bytes[kube-apiserver]",), place=60),
)
"""The report's own questions, of the measurements every run takes."""


def questions(drivers: Iterable[contract.Driver]) -> list[contract.Question]:
    """Every question of the report: its own and the drivers' (the registry's, handed in), in `place` order."""
    asked = (*QUESTIONS, *(question for driver in drivers for question in driver.questions))
    return sorted(asked, key=lambda question: question.place)


@dataclass(frozen=True, slots=True)
class Other:
    label: str
    cell: pivoting.Cell
    separable: bool
    """False when this value's interval overlaps the best's (the ranking is not evidence)."""


@dataclass(frozen=True, slots=True)
class Answer:
    question: contract.Question
    row: pivoting.Row
    best: tuple[str, ...]
    """Labels of the best column(s): ties share the place."""
    cell: pivoting.Cell
    others: tuple[Other, ...]
    """Every other measured column, best first."""


def metrics(asked: Sequence[contract.Question]) -> list[str]:
    """Every metric a question may use (the pivot shows them first)."""
    return [metric for question in asked for metric in question.metrics]


def _overlap(a: pivoting.Cell, b: pivoting.Cell) -> bool:
    return a.has_interval and b.has_interval and a.low <= b.high and b.low <= a.high


def answer(pivot: pivoting.Pivot, asked: Sequence[contract.Question]) -> tuple[list[Answer], list[contract.Question]]:
    """(the answers, the questions this run did not measure in two columns or more)."""
    answers, unanswered = [], []
    for question in asked:
        row = next((r for m in question.metrics if (r := pivot.row(m)) is not None and r.compared), None)
        if row is None:
            if not question.others_note:
                unanswered.append(question)
            continue
        placed = [(column.label, cell) for column, cell in zip(pivot.columns, row.cells) if cell is not None]
        best = [(label, cell) for label, cell in placed if cell.best]
        if not best:  # every design measured the same: no best to name, no one behind
            answers.append(Answer(question, row, (f"all {len(placed)} equal",), placed[0][1], ()))
            continue
        top = best[0][1]
        rest = sorted(((label, cell) for label, cell in placed if not cell.best),
                      key=lambda item: item[1].value if row.better == "lower" else -item[1].value)
        answers.append(Answer(question, row, tuple(label for label, _ in best), top,
                              tuple(Other(label, cell, not _overlap(top, cell)) for label, cell in rest)))
    return answers, unanswered


def evidence(cell: pivoting.Cell, row: pivoting.Row) -> str:
    """`[low, high], n=…` as far as known; says so when a value has no interval."""
    parts = []
    if cell.has_interval:
        parts.append(f"95% CI {row.shown(cell.low)}–{row.shown(cell.high)}")
    if cell.n is not None and (cell.has_interval or cell.n != cell.repeats):
        parts.append(f"n={cell.n:,}")
    if not cell.has_interval:
        parts.append(f"{cell.repeats} repeat{'s' if cell.repeats != 1 else ''}, no interval")
    return "; ".join(parts)


def sentence(item: Answer) -> str:
    """One line of plain text: the best, its value and evidence, and how far the others are."""
    row = item.row
    head = (f"{item.question.title}: {' = '.join(item.best)} best at {row.shown(item.cell.value)} {row.unit} "
            f"({evidence(item.cell, row)})")
    if not item.others:
        return head
    rest = ", ".join(f"{o.label} {pivoting.ratio_text(o.cell.ratio) or row.shown(o.cell.value)}"
                     f"{'' if o.separable else ' (not separable)'}" for o in item.others)
    return f"{head}; {rest}"


def caveats(answers: Sequence[Answer]) -> list[str]:
    """What the answered questions say about reading the others."""
    return [item.question.others_note for item in answers if item.question.others_note]
