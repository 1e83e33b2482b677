"""What each bundled scenario needs built follows from its definition alone: no Kueue for a scenario that
runs only the reference scheduler (a newcomer's `make bench`), the version a Kueue case names otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.scenarios import loading, needs
from harness.toolchain import components, versions

ROOT = Path(__file__).parents[3]
PINS = versions.load_pins()
CONTROL_PLANE = {str(c) for c in components.control_plane(None, PINS)}
NEWER_APISERVER = f"kubernetes {PINS.kubernetes_known[-1]}"
KUEUE_DEFAULT = f"kueue {PINS.kueue}"
KUEUE_NAMED = "kueue v0.19.2"  # the version those scenario files name

EXPECTED = {  # beyond the pinned control plane every one needs
    **{name: set() for name in loading.shipped()},
    "list-configmaps": {NEWER_APISERVER},  # swept over two apiserver versions
    "list-nodes": {NEWER_APISERVER},
    "results/peer/kueue-baseline-peers.yaml": {KUEUE_DEFAULT},  # sweeps reference and Kueue at its default
    "results/peer/kueue-baseline-1cohort-peers.yaml": {KUEUE_DEFAULT},
    "results/large-scale/kueue-large-scale-peers.yaml": {KUEUE_NAMED},  # names scheduler.kueue_version
    "results/tas/jobs/jobs-tas.yaml": {KUEUE_NAMED},
}


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_a_scenario_needs_the_control_plane_and_the_kueue_its_cases_name(scenario):
    source = str(ROOT / scenario) if scenario.endswith(".yaml") else scenario
    named = {str(c) for c in needs.of(loading.load(source))}
    assert named == CONTROL_PLANE | EXPECTED[scenario]


def test_the_quick_scenario_of_make_bench_builds_no_kueue():
    assert not [c for c in needs.of(loading.load("quick")) if c.name == "kueue"]


def test_an_override_changes_what_is_built():
    loaded = loading.load("quick", ["scheduler.implementation=kueue", "scheduler.strategy=aggregated-indexed",
                                    f"scheduler.kueue_version={PINS.kueue_known[-1]}", "sweep={}"])
    assert components.kueue(PINS.kueue_known[-1], PINS) in needs.of(loaded)


def test_a_cluster_that_is_not_local_needs_no_control_plane_built():
    loaded = loading.load("tiny", ["cluster.backend=existing"])
    assert needs.of(loaded) == ()
