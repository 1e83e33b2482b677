"""Cluster settings, feature gates and the kwokctl configuration built from them."""

import re

import pytest
import yaml

from harness.clusters import kwokconfig, spec as specs
from harness.toolchain import layout


@pytest.mark.parametrize("text, expected", [
    ("", {}),
    ("WatchList=true", {"WatchList": True}),
    ("WatchList=true, ListFromCacheSnapshot=false", {"WatchList": True, "ListFromCacheSnapshot": False}),
    ("A=TRUE,", {"A": True}),
])
def test_feature_gates_parse(text, expected):
    assert specs.parse_feature_gates(text) == expected


@pytest.mark.parametrize("bad", ["WatchList", "WatchList=yes", "=true", "watchList=true", "A=true,B"])
def test_malformed_feature_gates_name_the_item(bad):
    with pytest.raises(specs.SpecError, match="Name=true"):
        specs.parse_feature_gates(bad)


def test_feature_gates_round_trip_in_flag_syntax():
    gates = {"WatchList": False, "ListFromCacheSnapshot": True}
    assert specs.format_feature_gates(gates) == "ListFromCacheSnapshot=true,WatchList=false"
    assert specs.parse_feature_gates(specs.format_feature_gates(gates)) == gates


@pytest.mark.parametrize("kwargs, message", [
    ({"name": "Big_Cluster"}, "cluster name"),
    ({"name": ""}, "cluster name"),
    ({"apiserver_port": 70000}, "out of range"),
    ({"etcd_quota_bytes": 1024}, "quota"),
])
def test_invalid_cluster_specs_fail_with_the_field_named(kwargs, message):
    with pytest.raises(specs.SpecError, match=message):
        specs.ClusterSpec(**kwargs)


def _documents(**kwargs):
    binaries = layout.Binaries.in_cache("v1.35.4", "v3.6.16", "v0.7.0")
    ports = kwokconfig.Ports(6443, 2379, 2380, 10257, 10259, 10247)
    return kwokconfig.kwokctl_documents(specs.ClusterSpec(**kwargs), binaries, ports)


def _patch_args(config, component):
    for patch in config["componentsPatches"]:
        if patch["name"] == component:
            return {a["key"]: a for a in patch["extraArgs"]}
    return {}


def test_kwokctl_config_binds_loopback_and_names_every_port_and_binary():
    config = _documents()[0]
    options = config["options"]
    assert options["runtime"] == "binary"
    assert options["bindAddress"] == "127.0.0.1"
    assert options["kubeApiserverPort"] == 6443
    assert options["etcdPort"] == 2379 and options["etcdPeerPort"] == 2380
    assert options["kwokControllerPort"] == 10247
    assert options["kubeApiserverBinary"].endswith("kubernetes-v1.35.4/kube-apiserver")
    assert options["etcdBinary"].endswith("etcd-v3.6.16/etcd")
    assert int(options["etcdQuotaBackendSize"]) == 8 * 1024**3
    assert "kubeFeatureGates" not in options


def test_heartbeats_off_means_no_leases_no_lifecycle_controller_and_a_one_shot_ready_stage():
    documents = _documents()
    config, kwok, stage = documents
    assert kwok["kind"] == "KwokConfiguration" and kwok["options"]["nodePlayStageParallelism"] == 64
    assert _patch_args(config, "kwok-controller")["node-lease-duration-seconds"] == {
        "key": "node-lease-duration-seconds", "value": "0", "override": True}
    controllers = _patch_args(config, "kube-controller-manager")["controllers"]["value"].split(",")
    assert "node-lifecycle-controller" not in controllers and "ttl-controller" not in controllers
    assert "namespace-controller" in controllers and "*" not in controllers
    assert stage["kind"] == "Stage" and stage["spec"]["resourceRef"]["kind"] == "Node"
    assert "delay" not in stage["spec"], "a delayed stage would be a heartbeat"
    # The status template must be YAML once kwok fills in its placeholders.
    assert "Ready" in stage["spec"]["next"]["statusTemplate"]


def test_heartbeats_on_use_kwok_defaults_with_our_periods():
    documents = _documents(heartbeats=specs.Heartbeats(enabled=True, lease_seconds=120, status_seconds=60))
    assert [d["kind"] for d in documents] == ["KwokctlConfiguration", "KwokConfiguration"], "kwok's own stages apply"
    options = documents[0]["options"]
    assert options["nodeLeaseDurationSeconds"] == 120
    assert options["nodeStatusUpdateFrequencyMilliseconds"] == 60_000
    assert "kwok-controller" not in {p["name"] for p in documents[0]["componentsPatches"]}
    assert "node-lifecycle-controller" in _patch_args(documents[0], "kube-controller-manager")["controllers"]["value"]


def test_a_cluster_without_jobs_runs_neither_the_job_controller_nor_kube_scheduler():
    config = _documents()[0]
    assert config["options"]["disableKubeScheduler"] is True
    assert "job-controller" not in _patch_args(config, "kube-controller-manager")["controllers"]["value"].split(",")


@pytest.mark.parametrize("heartbeats", [specs.Heartbeats(), specs.Heartbeats(enabled=True)])
def test_a_cluster_with_jobs_adds_the_job_controller_and_kube_scheduler(heartbeats):
    config = _documents(jobs=True, heartbeats=heartbeats)[0]
    assert config["options"]["disableKubeScheduler"] is False, "someone must bind the Jobs' pods"
    controllers = _patch_args(config, "kube-controller-manager")["controllers"]["value"].split(",")
    assert "job-controller" in controllers
    assert "garbage-collector-controller" in controllers, "pods and Workloads go with their Job"
    assert set(kwokconfig.CONTROLLERS) <= set(controllers)
    disabled = _patch_args(config, "kube-apiserver").get("disable-admission-plugins", {}).get("value")
    # Without heartbeats no node-lifecycle controller lifts the not-ready taint new nodes get.
    assert disabled == (None if heartbeats.enabled else "TaintNodesByCondition")


def test_only_a_jobs_cluster_has_its_controller_manager_and_scheduler_scraped():
    ports = kwokconfig.Ports(6443, 2379, 2380, 10257, 10259, 10247)
    assert kwokconfig.metrics_urls(specs.ClusterSpec(), ports) == {}
    assert kwokconfig.metrics_urls(specs.ClusterSpec(jobs=True), ports) == {
        "kube-controller-manager": "https://127.0.0.1:10257/metrics",
        "kube-scheduler": "https://127.0.0.1:10259/metrics"}


def test_jobs_pods_run_then_succeed_after_their_annotated_runtime_and_deleted_pods_go():
    documents = _documents(jobs=True)
    stages = {d["metadata"]["name"]: d["spec"] for d in documents if d["kind"] == "Stage"}
    assert set(stages) == {"kqbench-node-ready", "kqbench-pod-running", "kqbench-pod-running-unready",
                           "kqbench-pod-ready", "kqbench-pod-succeeded", "kqbench-pod-deleted"}
    succeeded = stages["kqbench-pod-succeeded"]
    assert {"key": ".metadata.ownerReferences.[].kind", "operator": "In", "values": ["Job"]} in \
        succeeded["selector"]["matchExpressions"], "only Jobs' pods finish: anything else runs on"
    assert kwokconfig.RUNTIME_ANNOTATION in succeeded["delay"]["durationFrom"]["expressionFrom"]
    assert stages["kqbench-pod-deleted"]["next"] == {"finalizers": {"empty": True}, "delete": True}
    assert not [d for d in _documents() if d["kind"] == "Stage" and d["spec"]["resourceRef"]["kind"] == "Pod"]
    # Templates are YAML once kwok fills in its placeholders.
    for stage in stages.values():
        template = stage["next"].get("statusTemplate")
        if template:
            actions_alone = re.sub(r"^{{[^}]*}}$", "", template, flags=re.M)  # $now := ..., range, end
            filled = yaml.safe_load(re.sub(r"{{[^}]*}}", '"x"', actions_alone))
            assert isinstance(filled, dict) and filled["phase"] in ("Running", "Succeeded")


def test_the_scenario_cluster_section_carries_jobs_to_the_cluster():
    from harness.scenarios import models, sections

    assert sections.ClusterSection(jobs=True).cluster_spec("c").jobs is True
    assert sections.ClusterSection().cluster_spec("c").jobs is False


def test_feature_gates_and_apiserver_args_reach_the_config():
    config = _documents(feature_gates={"WatchList": False},
                        apiserver_args=(("requestheader-allowed-names", "front-proxy"),))[0]
    assert config["options"]["kubeFeatureGates"] == "WatchList=false"
    args = _patch_args(config, "kube-apiserver")
    assert args["requestheader-allowed-names"]["value"] == "front-proxy"
    assert args["max-requests-inflight"]["value"] == "400"
    assert config["options"]["disableQPSLimits"] is False, "APF must stay on"


def test_controller_manager_and_scheduler_flags_reach_their_components_from_an_arm():
    from harness.scenarios import models, sections

    scenario = models.Scenario.model_validate({
        "name": "arms", "cluster": {"jobs": True, "controller_manager_args": {"kube-api-burst": "300"}},
        "arms": {"raised": {"controller_manager_args": {"kube-api-qps": "200"},
                            "scheduler_args": {"kube-api-qps": "150"}}},
        "arm": "raised"})
    spec = scenario.cluster.cluster_spec("c")
    config = _documents(jobs=True, controller_manager_args=spec.controller_manager_args,
                        scheduler_args=spec.scheduler_args)[0]
    manager = _patch_args(config, "kube-controller-manager")
    assert manager["kube-api-qps"]["value"] == "200" and manager["kube-api-burst"]["value"] == "300"
    assert "job-controller" in manager["controllers"]["value"]
    assert _patch_args(config, "kube-scheduler")["kube-api-qps"]["value"] == "150"
    assert "kube-scheduler" not in [p["name"] for p in _documents(jobs=True)[0]["componentsPatches"]]


def test_etcd_flags_reach_etcd_only_when_given():
    config = _documents(etcd_args=(("max-request-bytes", "262144"),))[0]
    assert _patch_args(config, "etcd")["max-request-bytes"]["value"] == "262144"
    assert "etcd" not in [p["name"] for p in _documents()[0]["componentsPatches"]]


def test_the_config_serialises_as_multi_document_yaml():
    text = yaml.safe_dump_all(_documents(), sort_keys=False)
    kinds = [d["kind"] for d in yaml.safe_load_all(text)]
    assert kinds == ["KwokctlConfiguration", "KwokConfiguration", "Stage"]
