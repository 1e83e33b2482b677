"""The differential run's bookkeeping: batches, repeats, and which differences count (pure: the
cluster runs are a function given to it, here a table of decisions)."""

from __future__ import annotations

from harness.agreeing import cases, generating
from harness.drivers.agreement import batching, differential
from harness.agreeing.decisions import Decisions

ADMITTED = Decisions(admitted={"w00": ("cq0", (("ps0", (("cpu", "f0"),)),))})
PENDING = Decisions()


def fake(decide):
    """run_batch stand-in: decide(implementation, prefix, call) -> per-epoch decisions."""
    calls = []

    def run_batch(impl, batch, name):
        calls.append((impl, sorted(batch), name))
        return {p: batching.Outcome([decide(impl, p, len(calls))] * len(c.epochs)) for p, c in batch.items()}

    return run_batch, calls


def classical(seed: int):
    """The seed's case with fair sharing off, so that any of them share a batch."""
    return generating.generate(seed).model_copy(update={"fairSharing": None})


def test_cases_run_in_batches_twice_per_implementation():
    run_batch, calls = fake(lambda impl, prefix, call: ADMITTED)
    chosen = [classical(seed) for seed in range(5)]
    results = differential.run(chosen, ("reference", "kueue"), repeats=2, batch_size=2, run_batch=run_batch,
                               say=lambda line: None)
    assert len(calls) == 3 * 2 * 2
    assert [c[1] for c in calls[:4]] == [["c000", "c001"]] * 4
    assert all(len(r.outcomes["kueue"]) == 2 and r.cross is not None and r.cross.agrees for r in results)
    summary = differential.summarize(results, ("reference", "kueue"))
    assert summary["cross"]["rate"] == 1.0 and summary["classes"] == []


def test_a_difference_each_implementation_repeats_is_a_class_one_that_flips_is_not():
    def decide(impl, prefix, call):
        if prefix == "c000":  # kueue always decides otherwise: a disagreement
            return PENDING if impl == "kueue" else ADMITTED
        return ADMITTED if impl == "kueue" or call <= 2 else PENDING  # case 1: the reference flips
    run_batch, _ = fake(decide)
    chosen = [classical(seed) for seed in range(2)]
    results = differential.run(chosen, ("reference", "kueue"), 2, 10, run_batch, say=lambda line: None)
    summary = differential.summarize(results, ("reference", "kueue"))
    assert [(row["class"], row["example_case"]) for row in summary["classes"]] == [("admission: only a admits", 0)]
    assert summary["self"]["reference"]["rate"] < 1.0 and summary["self"]["kueue"]["rate"] == 1.0


def test_cases_with_fair_sharing_never_share_a_batch_with_cases_without():
    run_batch, calls = fake(lambda impl, prefix, call: ADMITTED)
    fair = cases.FairSharingConfig(preemptionStrategies=("LessThanInitialShare",))
    chosen = [classical(1), classical(2).model_copy(update={"fairSharing": fair}), classical(3)]
    differential.run(chosen, ("reference", "kueue"), repeats=1, batch_size=10, run_batch=run_batch,
                     say=lambda line: None)
    assert [c[1] for c in calls] == [["c000", "c002"], ["c000", "c002"], ["c001"], ["c001"]]


def test_a_failed_case_is_counted_apart_and_the_run_goes_on():
    def run_batch(impl, batch, name):
        return {p: batching.Outcome(failure="SchedulerDied: exited\nlog tail") for p in batch}
    results = differential.run([generating.generate(1)], ("reference", "kueue"), 1, 5, run_batch,
                               say=lambda line: None)
    summary = differential.summarize(results, ("reference", "kueue"))
    assert summary["cases_failed"] == 1 and summary["failures"][0]["failure"] == "SchedulerDied: exited"


def test_the_report_is_rendered_from_the_summary_alone():
    from harness.drivers.agreement import reporting

    run_batch, _ = fake(lambda impl, prefix, call: ADMITTED)
    results = differential.run([generating.generate(s) for s in (3, 4)], ("reference", "kueue"), 2, 5, run_batch,
                               say=lambda line: None)
    summary = differential.summarize(results, ("reference", "kueue"))
    run = {"command": "kqbench agree --cases 2 --seed 3", "git_sha": "abc", "seeds": [3, 4], "repeats": 2, "batch": 5}
    text = reporting.render(run, summary)
    assert "seeds 3-4" in text
    assert f"| reference / kueue | 2 | 2 | {summary['cross']['decisions']} |" in text
    assert "## Decisions that differ\n\nNone." in text


def test_every_committed_agreement_report_renders_from_its_data():
    import json
    from pathlib import Path

    from harness.drivers.agreement import reporting

    folders = [p.parent for p in (Path(__file__).parents[3] / "results" / "agreement").rglob(differential.RECORD)]
    assert folders, "results/agreement/ holds the committed differential runs"
    for folder in folders:
        run = json.loads((folder / differential.RECORD).read_text())
        summary = json.loads((folder / "summary.json").read_text())
        assert (folder / "report.md").read_text() == reporting.render(run, summary), folder


def test_a_written_run_reads_back_to_the_same_summary(tmp_path):
    def decide(impl, prefix, call):
        return PENDING if (impl, prefix) == ("kueue", "c001") else ADMITTED
    run_batch, _ = fake(decide)
    results = differential.run([generating.generate(s) for s in (3, 4)], ("reference", "kueue"), 2, 5, run_batch,
                               say=lambda line: None)
    summary = differential.summarize(results, ("reference", "kueue"))
    differential.write(results, summary, tmp_path, "reference", "kueue")
    again = differential.read(tmp_path, ("reference", "kueue"))
    assert differential.summarize(again, ("reference", "kueue")) == summary
    assert [r.case for r in again] == [r.case for r in results]
    assert (tmp_path / "cases" / "case-001.yaml").exists() and not (tmp_path / "cases" / "case-000.yaml").exists()


def test_a_difference_that_does_not_come_back_in_a_small_batch_is_not_a_rule():
    def big(impl, prefix, call):
        return PENDING if (impl, prefix) == ("kueue", "c001") else ADMITTED
    run_batch, _ = fake(big)
    chosen = [generating.generate(s) for s in (3, 4)]
    results = differential.run(chosen, ("reference", "kueue"), 2, 5, run_batch, say=lambda line: None)
    summary = differential.summarize(results, ("reference", "kueue"))
    doubtful = differential.disagreeing(results)
    assert [r.index for r in doubtful] == [1]
    calm, _ = fake(lambda impl, prefix, call: ADMITTED)
    again = differential.run([r.case for r in doubtful], ("reference", "kueue"), 2, 1, calm, say=lambda line: None)
    differential.confirm(summary, doubtful, again)
    confirmation = summary["confirmation"]
    assert confirmation["cases"][0]["reproduced"] == [] and confirmation["rate_after_confirmation"] == 1.0
    from harness.drivers.agreement import reporting
    assert "did not come back" in reporting.render({"command": "c", "git_sha": "s", "seeds": [3, 4], "repeats": 2,
                                                    "batch": 5}, summary)


def test_a_tie_is_set_aside_beside_the_rates_and_reads_back_from_the_files(tmp_path):
    """Kueue's coin flip between two equal candidates: it evicts w1 in one run and w2 in the other,
    the reference w2 in both. Neither a disagreement nor an agreement, across and within Kueue."""
    import yaml

    from harness.drivers.agreement import reporting

    from tests.unit.agreeing.test_comparing import T1, TIES, preempted

    calls = []

    def run_batch(impl, batch, name):
        calls.append(impl)
        victim = "w1" if impl == "kueue" and calls.count("kueue") == 1 else "w2"
        return {p: batching.Outcome(preempted({"w1": T1, "w2": T1}, (victim,))) for p in batch}

    results = differential.run([cases.parse(yaml.safe_load(TIES))], ("reference", "kueue"), 2, 5, run_batch,
                               say=lambda line: None)
    summary = differential.summarize(results, ("reference", "kueue"))
    cross = summary["cross"]
    assert (cross["decisions"], cross["rate"], cross["decisions_set_aside"]) == (4, 1.0, 12)
    assert (cross["cases_agreeing"], cross["cases_tied"]) == (0, 1)
    assert summary["self"]["kueue"]["cases_tied"] == 1 and summary["self"]["reference"]["cases_agreeing"] == 1
    assert summary["classes"] == [] and differential.disagreeing(results) == []
    assert {r["class"]: r["count"] for r in summary["tie_classes"]}["tie-target"] == 2
    text = reporting.render({"command": "c", "git_sha": "s", "seeds": [None], "repeats": 2, "batch": 5}, summary)
    assert "- reference / kueue: 12 decisions set aside; 1 case(s) agreeing up to a tie" in text
    assert "| tie-target | 2 | 0 |" in text
    differential.write(results, summary, tmp_path, "reference", "kueue")
    assert differential.summarize(differential.read(tmp_path, ("reference", "kueue")), ("reference", "kueue")) == summary
    assert "# set aside (tie-target): epoch 1 eviction w1" in (tmp_path / "cases" / "case-000.yaml").read_text()


def test_a_case_that_failed_on_one_side_is_not_taken_for_a_disagreeing_one():
    def run_batch(impl, batch, name):
        failed = "NotSettled: decisions still changed" if impl == "kueue" else None
        return {p: batching.Outcome([] if failed else [ADMITTED] * len(c.epochs), failed) for p, c in batch.items()}

    results = differential.run([classical(1)], ("reference", "kueue"), repeats=1, batch_size=1, run_batch=run_batch,
                               say=lambda line: None)
    assert results[0].cross is None and results[0].failure
    assert differential.disagreeing(results) == []
