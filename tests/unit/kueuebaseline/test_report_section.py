"""The report's kueue-baseline section: absent without the table, ours next to Kueue's with it."""

from __future__ import annotations

import pandas as pd

from harness.drivers.kueuebaseline import figures as figs, reporting, tabulating


def _tables():
    records = {n: figs.WorkloadRecord(n, "cq-0", cls, 1000, created=0.0) for n, cls in (("a", "small"), ("b", "large"))}
    for t, r in enumerate(records.values(), start=1):
        r.on_admitted(float(t))
        r.on_released(float(t) + 1, finished=True)
    result = figs.compute(list(records.values()), {"cq-0": 1000}, start=0.0)
    return {tabulating.FIGURES_TABLE: tabulating.figures_frame(result, {}, {}).assign(phase="churn"),
            tabulating.CLASSES_TABLE: tabulating.classes_frame(result),
            tabulating.WORKLOADS_TABLE: tabulating.workloads_frame(records, {}, 0.0)}


def test_no_table_no_section():
    assert reporting.section({"observations": pd.DataFrame()}) is None


def test_section_has_both_columns_the_note_and_a_figure():
    section = reporting.section(_tables(), cpus=2)
    text, [(_, png)] = section.html, section.figures
    assert "kueue_published" in text and "351" in text and "2-CPU machine" in text and "1 s resolution" in text
    assert "<th>phase</th>" not in text
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def _both_implementations():
    """The same phase run by the reference scheduler and by Kueue: ours twice as fast to admit small ones."""
    rows = []
    for case, implementation, small, wall in (("a", "reference", 10.0, 100.0), ("b", "kueue", 20.0, 80.0)):
        rows += [{"metric": "time_to_admission_seconds[small]", "unit": "s", "kqbench": small},
                 {"metric": "wall_seconds", "unit": "s", "kqbench": wall},
                 {"metric": "complete", "unit": "count", "kqbench": 1.0}]
        for row in rows[-3:]:
            row |= {"case": case, "implementation": implementation, "phase": "churn"}
    return pd.DataFrame(rows)


def test_a_run_with_both_implementations_gives_the_reference_case_its_ratios_to_kueue():
    from harness.drivers.kueuebaseline import summarising

    frame = _both_implementations()
    tables = {tabulating.FIGURES_TABLE: frame}
    ratios = {m.name: m.value for m in summarising.metrics(tables, "a") if ".ratio_to_kueue." in m.name}
    assert ratios == {"kueue.ratio_to_kueue.time_to_admission_seconds[small]": 0.5,
                      "kueue.ratio_to_kueue.wall_seconds": 1.25}
    assert not [m for m in summarising.metrics(tables, "b") if ".ratio_to_kueue." in m.name]
    table = reporting.ratio_table(frame)
    assert set(table["ours_over_kueue"]) == {0.5, 1.25}
    single = frame[frame["implementation"] == "reference"]
    assert summarising.ratios_to_kueue(single, "a") == {}


def test_who_preempted_whom_per_implementation_and_evictions_against_wall_time():
    evictions = pd.DataFrame([
        {"case": c, "implementation": i, "reason": r, "preemptor_class": p, "victim_class": v}
        for c, i, r, p, v in (("a", "reference", "InClusterQueue", "large", "medium"),
                              ("a", "reference", "InClusterQueue", "large", "medium"),
                              ("c", "reference", "InClusterQueue", "large", "medium"),
                              ("b", "kueue", "InCohortReclamation", "small", "small"))])
    table = reporting.evictions_table(evictions)
    row = table[(table["reason"] == "InClusterQueue")].iloc[0]
    assert row["reference"] == 1.5 and row["kueue"] == 0  # three over two cases; Kueue had none of that kind
    frame = _both_implementations()
    frame = pd.concat([frame, pd.DataFrame([{"metric": "evictions", "unit": "count", "kqbench": n, "case": c,
                                             "implementation": i, "phase": "churn"}
                                            for c, i, n in (("a", "reference", 3.0), ("b", "kueue", 1.0))])])
    section = reporting.section({tabulating.FIGURES_TABLE: frame, tabulating.EVICTIONS_TABLE: evictions})
    assert "who preempted whom" in section.html
    assert [title for title, _ in section.figures] == [reporting.PACE_TITLE]
    assert reporting.pace_figure(frame[frame["case"] == "a"]) is None  # one case: no cloud to draw


def test_who_preempted_whom_averages_over_every_case_of_an_implementation_also_those_that_evicted_nothing():
    evictions = pd.DataFrame([{"case": "k0", "implementation": "kueue", "reason": "InClusterQueue",
                               "preemptor_class": "large", "victim_class": "small"}] * 3)
    figures = pd.DataFrame([{"case": c, "implementation": "kueue", "metric": "evictions", "kqbench": n}
                            for c, n in (("k0", 3.0), ("k1", 0.0), ("k2", 0.0))])
    assert reporting.evictions_table(evictions)["kueue"].tolist() == [3.0]  # without the figures: cases that evicted
    assert reporting.evictions_table(evictions, figures)["kueue"].tolist() == [1.0]
