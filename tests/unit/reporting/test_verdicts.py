"""The verdict: per question the best design, by how much the others trail, with the evidence."""

from __future__ import annotations

from harness.drivers import registry
from harness.reporting import pivoting, verdicts
from harness.results import summaries


def _pivot(rows, intervals=None) -> pivoting.Pivot:
    summary = summaries.Summary("r", "tiny", "ok")
    points = []
    for metric, point, value, unit in rows:
        extra = (intervals or {}).get((metric, point), {})
        entry = summaries.Entry(metric, point, value, unit, "lower", [value], **extra)
        summary.entries[entry.key] = entry
        points.append(point)
    points = list(dict.fromkeys(points))
    return pivoting.build([pivoting.RunView("r", summary, tuple(points), {})], first=verdicts.metrics(verdicts.questions(registry.drivers())))


def test_each_question_names_the_best_and_the_others_as_ratios():
    pivot = _pivot([("load.position_query_p99_ms", "strategy=a", 30.0, "ms"),
                    ("load.position_query_p99_ms", "strategy=b", 10.0, "ms"),
                    ("load.position_query_p99_ms", "strategy=c", 90.0, "ms")])
    answers, unanswered = verdicts.answer(pivot, verdicts.questions(registry.drivers()))
    (latency,) = answers
    assert latency.best == ("b",) and [(o.label, o.cell.ratio) for o in latency.others] == [("a", 3.0), ("c", 9.0)]
    assert {q.title for q in unanswered} == {"Write cost", "Bystander impact", "Object size", "Memory"}
    line = verdicts.sentence(latency)
    assert line.startswith("Position latency: b best at 10 ms (1 repeat, no interval)") and "c ×9.00" in line


def test_overlapping_intervals_are_not_separable_and_the_evidence_is_shown():
    metric = "load.bystander_p99_ms"
    pivot = _pivot([(metric, "strategy=a", 10.0, "ms"), (metric, "strategy=b", 11.0, "ms"), (metric, "strategy=c", 40.0, "ms")],
                   {(metric, "strategy=a"): {"low": 8.0, "high": 12.5, "n": 2500},
                    (metric, "strategy=b"): {"low": 9.0, "high": 13.0, "n": 2400},
                    (metric, "strategy=c"): {"low": 35.0, "high": 45.0, "n": 2300}})
    (answer,), _ = verdicts.answer(pivot, verdicts.questions(registry.drivers()))
    assert [(o.label, o.separable) for o in answer.others] == [("b", False), ("c", True)]
    assert verdicts.evidence(answer.cell, answer.row) == "95% CI 8–12.5; n=2,500"
    assert "b ×1.10 (not separable)" in verdicts.sentence(answer)


def test_a_capacity_run_says_its_other_answers_compare_unequal_loads():
    pivot = _pivot([("capacity.max_held", "strategy=a", 1000.0, "pending"),
                    ("capacity.max_held", "strategy=b", 4000.0, "pending")])
    answers, unanswered = verdicts.answer(pivot, verdicts.questions(registry.drivers()))
    assert answers[0].question.title == "Capacity" and verdicts.caveats(answers)
    assert "Capacity" not in {q.title for q in unanswered}
