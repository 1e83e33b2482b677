"""The lifecycle case families: the new fields of a case file, what the generator draws, how they are rendered."""

from __future__ import annotations

import pytest
import yaml

from harness.agreeing import cases, generating, rendering
from harness.drivers.agreement import batching, differential, settings
from harness.agreeing.decisions import Decisions
from harness.workloads import checkrules

from .test_cases import MINIMAL
from .test_cases import edited as minimal_edited

LIFECYCLE = MINIMAL.replace("flavors: [{name: f0}]", """flavors: [{name: f0}]
waitForPodsReady: {timeoutSeconds: 5, backoffBaseSeconds: 1, backoffMaxSeconds: 2, backoffLimitCount: 1}
admissionChecks: [{name: ac0}]""").replace("  cohort: co\n", "  cohort: co\n  admissionChecks: [ac0]\n").replace(
    "{name: w0, namespace: ns-a, queueName: lq,",
    "{name: w0, namespace: ns-a, queueName: lq, maximumExecutionTimeSeconds: 3, podsReady: true, checkRule: reject,")


def edited(path: str, value) -> dict:
    return minimal_edited(path, value, LIFECYCLE)


def test_a_lifecycle_case_reads_back_from_its_own_dump():
    case = cases.parse(yaml.safe_load(LIFECYCLE))
    assert case.waitForPodsReady is not None and case.waitForPodsReady.backoffLimitCount == 1
    assert case.clusterQueues[0].admissionChecks == ("ac0",)
    assert case.workloads()[0].checkRule == "reject" and case.workloads()[0].podsReady
    assert cases.parse(yaml.safe_load(cases.dump(case))) == case


@pytest.mark.parametrize("version", [1, 2])
def test_case_files_of_earlier_versions_still_load(version):
    raw = yaml.safe_load(MINIMAL) | {"version": version}
    case = cases.parse(raw)
    assert case.waitForPodsReady is None and not case.admissionChecks
    assert all(w.maximumExecutionTimeSeconds is None and not w.podsReady for w in case.workloads())


@pytest.mark.parametrize("path, value, named", [
    ("epochs.0.arrive.0.maximumExecutionTimeSeconds", 0, "epochs[0].arrive[0].maximumExecutionTimeSeconds: 0 is below 1"),
    ("epochs.0.arrive.0.checkRule", "retyr=1", "epochs[0].arrive[0].checkRule: bad kqbench.io/check-rule"),
    ("clusterQueues.0.admissionChecks", ["ac9"], "clusterQueues[0].admissionChecks[0]: 'ac9' is not in admissionChecks"),
    ("clusterQueues.0.admissionChecks", ["ac0", "ac0"], "clusterQueues[0].admissionChecks[1]: 'ac0' appears twice"),
    ("admissionChecks", [{"name": "AC"}], "admissionChecks[0].name: 'AC' is not a DNS label"),
    ("waitForPodsReady", None, "epochs[0].arrive[0].podsReady: needs the case's waitForPodsReady"),
    ("waitForPodsReady", {"timeoutSeconds": 0}, "waitForPodsReady.timeoutSeconds"),
    ("waitForPodsReady", {"timeoutSeconds": 5, "backoffLimitCount": -1}, "waitForPodsReady.backoffLimitCount"),
    ("version", 4, "version"),
])
def test_a_bad_lifecycle_field_is_named_in_one_line(path, value, named):
    with pytest.raises(cases.CaseError) as error:
        cases.parse(edited(path, value), "x.yaml")
    message = str(error.value)
    assert named in message and "\n" not in message, message
    assert message.startswith("x.yaml: ")


@pytest.mark.parametrize("feature", generating.LIFECYCLE_FEATURES)
def test_a_lifecycle_family_is_in_every_case_and_leaves_the_rest_of_a_seed_alone(feature):
    for seed in range(30):
        forced = generating.generate(seed, frozenset({feature}))
        assert forced == generating.generate(seed, frozenset({feature})), "the same seed, the same case"
        plain = generating.generate(seed).model_copy(update={"fairSharing": None})
        assert forced.fairSharing is None, "one scheduler setting per family (and waitForPodsReady)"
        stripped = forced.model_copy(update={
            "waitForPodsReady": None, "admissionChecks": (),
            "clusterQueues": tuple(q.model_copy(update={"admissionChecks": ()}) for q in forced.clusterQueues),
            "epochs": tuple(e.model_copy(update={"arrive": tuple(
                w.model_copy(update={"maximumExecutionTimeSeconds": None, "podsReady": False, "checkRule": None})
                for w in e.arrive)}) for e in forced.epochs)})
        assert stripped == plain
        workloads = forced.workloads()
        if feature == generating.LIMITS:
            assert any(w.maximumExecutionTimeSeconds for w in workloads)
            assert all(45 <= w.maximumExecutionTimeSeconds <= 60 for w in workloads if w.maximumExecutionTimeSeconds)
        if feature == generating.PODS_READY:
            assert forced.waitForPodsReady in generating.PODS_READY_SETTINGS
            assert forced.waitForPodsReady.backoffLimitCount is not None, "else a never-ready Workload never ends"
        if feature == generating.CHECKS:
            assert forced.admissionChecks and any(q.admissionChecks for q in forced.clusterQueues)
            assert all(checkrules.parse(w.checkRule) is not None for w in workloads)


def test_families_draw_alike_whichever_others_are_on():
    """One family's draws do not depend on another's being required."""
    for seed in range(10):
        both = generating.generate(seed, frozenset({generating.LIMITS, generating.CHECKS}))
        limits = generating.generate(seed, frozenset({generating.LIMITS}))
        assert ([w.maximumExecutionTimeSeconds for w in both.workloads()]
                == [w.maximumExecutionTimeSeconds for w in limits.workloads()])


def test_rendering_carries_limits_marks_rules_and_checks():
    case = cases.parse(yaml.safe_load(LIFECYCLE))
    objects = rendering.setup_objects(case, "c004")
    check = next(o for o in objects if o["kind"] == "AdmissionCheck")
    assert check["metadata"]["name"] == "c004-ac0" and check["spec"]["controllerName"] == checkrules.CONTROLLER_NAME
    cq = next(o for o in objects if o["kind"] == "ClusterQueue")
    assert cq["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "c004-ac0"}]}
    kinds = [o["kind"] for o in objects]
    assert kinds.index("AdmissionCheck") < kinds.index("ClusterQueue")
    obj = rendering.workload(case.workloads()[0], "c004")
    assert obj["spec"]["maximumExecutionTimeSeconds"] == 3
    assert obj["metadata"]["annotations"] == {checkrules.RULE_ANNOTATION: "reject",
                                              rendering.PODS_READY_ANNOTATION: "true"}
    plain = rendering.workload(cases.parse(yaml.safe_load(MINIMAL)).workloads()[0], "c004")
    assert "annotations" not in plain["metadata"] and "maximumExecutionTimeSeconds" not in plain["spec"]


def test_cases_that_differ_in_waitforpodsready_never_share_a_scheduler():
    case = cases.parse(yaml.safe_load(LIFECYCLE))
    other = case.model_copy(update={"waitForPodsReady": case.waitForPodsReady.model_copy(update={"timeoutSeconds": 6})})
    plain = cases.parse(yaml.safe_load(MINIMAL))
    assert len({settings.setting_of(c) for c in (case, other, plain)}) == 3
    assert settings.setting_of(case) == settings.setting_of(cases.parse(yaml.safe_load(LIFECYCLE)))


def test_pods_ready_settings_get_batches_of_their_own_and_the_summary_says_lifecycle():
    """differential.run groups by the scheduler setting, so one batch never mixes two waitForPodsReady."""
    calls = []

    def run_batch(impl, batch, name):
        calls.append({settings.setting_of(c) for c in batch.values()})
        return {p: batching.Outcome([Decisions()] * len(c.epochs)) for p, c in batch.items()}

    chosen = [generating.generate(seed, frozenset({generating.PODS_READY})) for seed in range(8)]
    chosen[1::2] = [c.model_copy(update={"waitForPodsReady": c.waitForPodsReady.model_copy(
        update={"timeoutSeconds": 6})}) for c in chosen[1::2]]
    results = differential.run(chosen, ("reference", "kueue"), repeats=1, batch_size=100, run_batch=run_batch,
                               say=lambda line: None)
    assert len(calls) == 4 and all(len(settings) == 1 for settings in calls)
    assert differential.summarize(results, ("reference", "kueue"))["lifecycle"]
    plain = differential.run([generating.generate(1).model_copy(update={"fairSharing": None})], ("reference", "kueue"),
                             repeats=1, batch_size=1, run_batch=run_batch, say=lambda line: None)
    assert not differential.summarize(plain, ("reference", "kueue"))["lifecycle"]
