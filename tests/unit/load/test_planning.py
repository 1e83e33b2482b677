"""harness.load.planning: one Locust run plan from the scenario, whichever driver asks for it."""

from __future__ import annotations

import pytest

from harness.clusters import state
from harness.drivers.locust import phases as locustphases, planning as locustplanning
from harness.errors import KqbenchError
from harness.load import planning
from harness.scenarios import loading


@pytest.fixture()
def cluster(tmp_path) -> state.ClusterInfo:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                          "users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
                          "current-context: x\n")
    return state.ClusterInfo(name="c", backend="kwok", kubeconfig=str(kubeconfig), apiserver_url="https://127.0.0.1:1")


def test_a_capacity_step_churns_as_a_churn_phase_after_a_fill_of_its_load(cluster):
    scenario = loading.load("capacity-positions").cases[0].scenario
    step = planning.plan(cluster, scenario, dict(scenario.load.users), 30.0, 4000)
    filled = scenario.model_copy(update={"phases": {"fill": locustphases.FillPhase(pending=4000)}})
    churn = locustplanning.load_plan(cluster, filled, locustphases.ChurnPhase(seconds=30.0))
    assert step == churn
    assert step.run_time == 30.0


def test_no_users_no_plan_and_fixed_counts_are_refused(cluster):
    scenario = loading.load("quick").scenario
    assert planning.plan(cluster, scenario, {"churn": 0, "querier": 0}, 10.0, 100) is None
    counted = loading.load("kueue-baseline").scenario
    with pytest.raises(KqbenchError, match="kind: kueue-baseline"):
        planning.plan(cluster, counted, {"churn": 1}, 10.0, 100)


def test_a_bulk_fill_runs_no_locust_and_churn_keeps_only_its_own_share(cluster):
    scenario = loading.load("quick").scenario
    bulk = locustphases.FillPhase(pending=100_000, bulk=True, churn_pending=80)
    filled = scenario.model_copy(update={"phases": {"fill": bulk, "churn": locustphases.ChurnPhase(seconds=30.0)}})
    assert locustplanning.load_plan(cluster, filled, bulk) is None
    assert locustplanning.fill_target(filled) == 80
    churn = locustplanning.load_plan(cluster, filled, locustphases.ChurnPhase(seconds=30.0))
    users = scenario.load.users.churn
    assert churn.settings.churn.pending_target == 80 // users
    posted = scenario.model_copy(update={"phases": {"fill": locustphases.FillPhase(pending=2000)}})
    assert locustplanning.fill_target(posted) == 2000
