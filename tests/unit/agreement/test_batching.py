"""A batch as a scenario run: the scenario kqbench agree builds validates and carries the batch's scheduler
setting, and the batch's outcomes read back from that run's tables."""

from __future__ import annotations

import dataclasses
import json

import pandas as pd
import pytest
import yaml

from harness.agreeing import generating, rendering
from harness.agreeing.decisions import Decisions
from harness.drivers.agreement import batching, running, settings
from harness.scenarios import loading

PLAIN = generating.generate(2)
FAIR = generating.generate(2, frozenset({generating.FAIR_SHARING}))
PODS_READY = generating.generate(2, frozenset({generating.PODS_READY}))


def _loaded(batch, implementation="reference", version=None):
    data = batching.scenario(batch, implementation, settings.KueueOptions(version=version), "agree-test-b0")
    return loading.parse(yaml.safe_dump(data, sort_keys=False), "test")


@pytest.mark.parametrize("case", [PLAIN, FAIR, PODS_READY], ids=["plain", "fair-sharing", "pods-ready"])
@pytest.mark.parametrize("implementation", settings.IMPLEMENTATIONS)
def test_a_batch_is_a_one_case_scenario_of_its_setting(case, implementation):
    loaded = _loaded({rendering.prefix_of(0): case, rendering.prefix_of(1): case}, implementation)
    assert len(loaded.cases) == 1
    scenario = loaded.cases[0].scenario
    section = scenario.scheduler
    assert section.implementation == implementation
    assert section.fair_sharing == (case.fairSharing is not None)
    assert bool(section.wait_for_pods_ready) == (case.waitForPodsReady is not None)
    assert section.hold_evicted_quota and (section.qps, section.burst) == (settings.CLIENT_QPS, settings.CLIENT_BURST)
    phase = scenario.phases["agreement"]
    assert phase.kind == "agreement"
    assert phase.cases[rendering.prefix_of(1)] == case, "a case comes back as it went in"
    assert scenario.queues.flavors == [], "every object comes from the cases"


def test_cases_of_two_settings_are_refused_in_one_scenario():
    with pytest.raises(loading.ScenarioError, match="differ in the scheduler's settings"):
        _loaded({"c000": PLAIN, "c001": FAIR})


def test_a_scheduler_section_that_does_not_run_the_cases_setting_is_refused():
    data = batching.scenario({"c000": FAIR}, "reference", settings.KueueOptions(), "agree-test-b0")
    data["scheduler"]["fair_sharing"] = False
    with pytest.raises(loading.ScenarioError, match="fair sharing on: set scheduler.fair_sharing"):
        loading.parse(yaml.safe_dump(data), "test")


def test_by_setting_splits_a_mixed_batch_in_order():
    parts = batching.by_setting({"c000": PLAIN, "c001": FAIR, "c002": PLAIN, "c003": PODS_READY})
    assert [list(part) for part in parts] == [["c000", "c002"], ["c001"], ["c003"]]


def _rows(prefix: str, epoch: int, decided: Decisions) -> pd.DataFrame:
    return pd.DataFrame([{"prefix": prefix, "epoch": epoch, "decisions": json.dumps(dataclasses.asdict(decided))}])


def test_outcomes_read_every_epoch_back_in_order_and_a_failure_keeps_the_epochs_before():
    first = Decisions(admitted={"w1": ("cq0", (("main", (("cpu", "f0"),)),))})
    second = Decisions(evicted=(("w1", "Preempted"),))
    tables = {running.DECISIONS: pd.concat([_rows("c000", 1, second), _rows("c000", 0, first),
                                            _rows("c001", 0, first), _rows("c099", 0, first)])}
    found = batching.outcomes({"c000": PLAIN, "c001": PLAIN}, tables, "")
    assert found["c000"].decisions == [first, second] and found["c000"].failure is None
    assert found["c001"].decisions == [first], "rows of a case not in the batch are not read"
    tables[running.FAILURES] = pd.DataFrame([{"failure": "SchedulerDied: exited\n--- last lines ---\nboom"}])
    failed = batching.outcomes({"c000": PLAIN, "c001": PLAIN}, tables, "SchedulerDied: exited")
    assert failed["c000"].decisions == [first, second]
    assert failed["c001"].failure.endswith("boom"), "the failure table's full text, not the record's one line"


def test_a_run_that_stopped_before_the_phase_fails_every_case_with_its_error():
    found = batching.outcomes({"c000": PLAIN}, {}, "KqbenchError: the cluster did not come up")
    assert found["c000"].decisions == [] and found["c000"].failure == "KqbenchError: the cluster did not come up"
