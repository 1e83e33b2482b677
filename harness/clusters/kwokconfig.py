"""Pure builder of the kwokctl configuration for a `--runtime binary` cluster.

We write every port and flag into a config file rather than using `--extra-args` on the command
line: that flag mis-assigns arguments when several components get them.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.clusters import spec as specs
from harness.toolchain import layout
from scheduler import listening

KWOKCTL_API = "config.kwok.x-k8s.io/v1alpha1"
KWOK_API = "kwok.x-k8s.io/v1alpha1"

# The single node stage used when heartbeats are off: mark a new node Ready once, then leave it
# alone. kwok's default set adds a periodic heartbeat stage, which is exactly what we turn off.
# (type, status, reason) of the conditions a healthy kubelet reports.
NODE_CONDITIONS = (
    ("Ready", "True", "KubeletReady"),
    ("MemoryPressure", "False", "KubeletHasSufficientMemory"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID"),
    ("NetworkUnavailable", "False", "RouteCreated"),
)
NODE_CONDITION_MESSAGE = "kwok simulated node"
NODE_INFO = {
    "architecture": "amd64", "operatingSystem": "linux", "kubeletVersion": "kwok",
    "containerRuntimeVersion": "kwok", "kernelVersion": "kwok", "kubeProxyVersion": "kwok", "osImage": "kwok",
    "machineID": "", "bootID": "", "systemUUID": "",
}
"""status.nodeInfo of a Ready node (the stage's, and the bulk loader's)."""
NODE_PHASE = "Running"
_CONDITION = """\
- type: {0}
  status: "{1}"
  reason: {2}
  message: {3}
  lastHeartbeatTime: {{{{ $now | Quote }}}}
  lastTransitionTime: {{{{ $now | Quote }}}}
"""
_RESOURCES = """\
{0}:
{{{{ with .status.{0} }}}}
{{{{ YAML . 1 }}}}
{{{{ else }}}}
  cpu: "32"
  memory: 256Gi
  pods: "110"
{{{{ end }}}}
"""
NODE_READY_TEMPLATE = (
    "{{ $now := Now }}\nconditions:\n"
    + "".join(_CONDITION.format(*c, NODE_CONDITION_MESSAGE) for c in NODE_CONDITIONS)
    + _RESOURCES.format("allocatable")
    + _RESOURCES.format("capacity")
    + "nodeInfo:\n"
    + "".join(f"  {key}: {value or chr(34) * 2}\n" for key, value in NODE_INFO.items())
    + f"phase: {NODE_PHASE}\n"
)


# kube-controller-manager runs only what kqbench's objects need (namespace clean-up, owner
# references, service accounts). The others watch nodes and pods that nobody runs here and cost
# the apiserver CPU we measure: the TTL controller alone re-annotates every node each time the node
# count crosses a size step, and attach-detach logs a line per node.
CONTROLLERS = (
    "namespace-controller",
    "garbage-collector-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    "clusterrole-aggregation-controller",
    "root-ca-certificate-publisher-controller",
    "resourcequota-controller",
)
# What a cluster that runs Jobs adds: pods are made by the job controller (the garbage collector,
# already on, deletes them with their Job).
JOB_CONTROLLERS = ("job-controller",)


@dataclass(frozen=True, slots=True)
class Ports:
    """Every loopback port one cluster uses; chosen by the caller, never by kwokctl."""

    apiserver: int
    etcd: int
    etcd_peer: int
    controller_manager: int
    scheduler: int
    kwok_controller: int

    @classmethod
    def from_list(cls, ports: list[int]) -> "Ports":
        return cls(*ports)


def _arg(key: str, value: str, override: bool = False) -> dict:
    return {"key": key, "value": value, "override": override}


def node_ready_stage() -> dict:
    return {
        "apiVersion": KWOK_API,
        "kind": "Stage",
        "metadata": {"name": "kqbench-node-ready"},
        "spec": {
            "resourceRef": {"apiGroup": "v1", "kind": "Node"},
            "selector": {
                "matchExpressions": [{
                    "key": '.status.conditions.[] | select( .type == "Ready" ) | .status',
                    "operator": "NotIn",
                    "values": ["True"],
                }]
            },
            "next": {"statusTemplate": NODE_READY_TEMPLATE},
        },
    }


# Pods on a cluster with Jobs play a kubelet's part in stages of our own (kwok's defaults, used when
# none are given, finish a Job's pods the moment they run). No pod IP is allocated: nothing here
# routes to pods, and kwok's default pool holds 254 addresses.
RUNTIME_ANNOTATION = "pod-complete.stage.kwok.x-k8s.io/delay"
"""A Job pod's run time (Go duration text, e.g. "30s") from Ready to Succeeded (from Running for a pod
Ready at once); absent: at once. kwok's own name for it, in its `general` stages."""
READY_AFTER_ANNOTATION = "kqbench.io/ready-after"
"""How long a pod stays Running but not Ready (Go duration text, e.g. "20s"), as a slow readiness probe
would keep it, or READY_NEVER; absent: Ready at once. For Kueue's waitForPodsReady: a Job sets it in its
pod template's annotations. Text kwok cannot parse as a duration (e.g. "20") means Ready at once."""
READY_NEVER = "never"
"""READY_AFTER_ANNOTATION's value for a pod that runs and is never Ready (a Job's pod then never succeeds)."""


def _running_template(ready: bool) -> str:
    """A bound pod's Running status: Ready at once, or started with its containers not yet ready (a
    kubelet's ContainersNotReady, for a pod with READY_AFTER_ANNOTATION)."""
    status = '"True"' if ready else '"False"\n  reason: ContainersNotReady'
    return f"""\
{{{{ $now := Now | Quote }}}}
conditions:
- type: Initialized
  status: "True"
  lastTransitionTime: {{{{ $now }}}}
- type: ContainersReady
  status: {status}
  lastTransitionTime: {{{{ $now }}}}
- type: Ready
  status: {status}
  lastTransitionTime: {{{{ $now }}}}
containerStatuses:
{{{{ range .spec.containers }}}}
- name: {{{{ .name | Quote }}}}
  image: {{{{ .image | Quote }}}}
  ready: {str(ready).lower()}
  started: true
  restartCount: 0
  state:
    running:
      startedAt: {{{{ $now }}}}
{{{{ end }}}}
phase: Running
startTime: {{{{ $now }}}}
"""


POD_RUNNING_TEMPLATE = _running_template(ready=True)
POD_RUNNING_UNREADY_TEMPLATE = _running_template(ready=False)

# ...and then ready. Conditions are merged by type (the null drops the not-ready reason); the container
# statuses are replaced whole, so they are written again with the start time the pod already has.
POD_READY_TEMPLATE = """\
{{ $now := Now | Quote }}
conditions:
- type: ContainersReady
  status: "True"
  reason: null
  lastTransitionTime: {{ $now }}
- type: Ready
  status: "True"
  reason: null
  lastTransitionTime: {{ $now }}
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: true
  started: true
  restartCount: 0
  state:
    running:
      startedAt: {{ $.status.startTime | Quote }}
{{ end }}
phase: Running
"""
POD_SUCCEEDED_TEMPLATE = """\
{{ $now := Now | Quote }}
conditions:
- type: ContainersReady
  status: "False"
  reason: PodCompleted
  lastTransitionTime: {{ $now }}
- type: Ready
  status: "False"
  reason: PodCompleted
  lastTransitionTime: {{ $now }}
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: false
  started: false
  restartCount: 0
  state:
    terminated:
      exitCode: 0
      reason: Completed
      startedAt: {{ $now }}
      finishedAt: {{ $now }}
{{ end }}
phase: Succeeded
"""


def _pod_stage(name: str, expressions: list[dict], next_: dict, delay: dict | None = None) -> dict:
    spec = {"resourceRef": {"apiGroup": "v1", "kind": "Pod"}, "selector": {"matchExpressions": expressions},
            "next": next_}
    if delay:
        spec["delay"] = delay
    return {"apiVersion": KWOK_API, "kind": "Stage", "metadata": {"name": name}, "spec": spec}


def _annotation(key: str) -> str:
    return f'.metadata.annotations["{key}"]'


def _in(key: str, *values: str) -> dict:
    return {"key": key, "operator": "In", "values": list(values)}


POD_READY_KEY = '.status.conditions.[] | select( .type == "Ready" ) | .status'


def pod_stages() -> list[dict]:
    """A bound pod runs at once and is Ready at once, or after its READY_AFTER_ANNOTATION (never if
    READY_NEVER); a Job's pod succeeds RUNTIME_ANNOTATION after it turned Ready; a deleted pod goes.

    kwok re-matches a pod on every change it sees and counts a stage's delay from then, so the readiness
    delay counts from Running and a late-ready Job pod's run time from Ready (it runs ready-after plus
    runtime in all); a write to the pod in between (by anyone) starts the current delay again."""
    # kwok plays one stage per change: among the stages that match, a random one weighted by `weight`
    # (all 0 here: uniformly), never by order. So the selectors are disjoint, each pod state matching at
    # most one: phase Pending / Running, the annotation present or not, the Ready condition False / True.
    alive = {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"}
    ready_after = _annotation(READY_AFTER_ANNOTATION)
    return [
        _pod_stage("kqbench-pod-running",
                   [alive, _in(".status.phase", "Pending"), {"key": ready_after, "operator": "DoesNotExist"}],
                   {"statusTemplate": POD_RUNNING_TEMPLATE}),
        _pod_stage("kqbench-pod-running-unready",
                   [alive, _in(".status.phase", "Pending"), {"key": ready_after, "operator": "Exists"}],
                   {"statusTemplate": POD_RUNNING_UNREADY_TEMPLATE}),
        # Text that is no duration (and no RFC 3339 time) leaves kwok the 0 ms default: Ready at once;
        # hence READY_NEVER is kept out by the selector, not by the delay.
        _pod_stage("kqbench-pod-ready",
                   [alive, _in(".status.phase", "Running"), _in(POD_READY_KEY, "False"),
                    {"key": ready_after, "operator": "Exists"},
                    {"key": ready_after, "operator": "NotIn", "values": [READY_NEVER]}],
                   {"statusTemplate": POD_READY_TEMPLATE},
                   {"durationMilliseconds": 0, "durationFrom": {"expressionFrom": ready_after}}),
        _pod_stage("kqbench-pod-succeeded",
                   [alive, _in(".status.phase", "Running"), _in(POD_READY_KEY, "True"),
                    _in(".metadata.ownerReferences.[].kind", "Job")],
                   {"statusTemplate": POD_SUCCEEDED_TEMPLATE},
                   {"durationMilliseconds": 0,
                    "durationFrom": {"expressionFrom": _annotation(RUNTIME_ANNOTATION)}}),
        _pod_stage("kqbench-pod-deleted", [{"key": ".metadata.deletionTimestamp", "operator": "Exists"}],
                   {"finalizers": {"empty": True}, "delete": True}),
    ]


def taints_new_nodes(cluster: specs.ClusterSpec) -> bool:
    """Whether kube-apiserver's TaintNodesByCondition admission puts `node.kubernetes.io/not-ready` on
    every node created through it (the bulk loader, which bypasses admission, adds it the same way).

    Off in a cluster with Jobs, or with schedulable nodes (for topology-aware scheduling), and no
    heartbeats: only the node-lifecycle controller (off without heartbeats) would lift the taint, and
    kube-scheduler would place no pod, TAS no pod set. Our nodes are Ready from their first stage on,
    so the taint is never added."""
    return not ((cluster.jobs or cluster.schedulable_nodes) and not cluster.heartbeats.enabled)


NOT_READY_TAINT = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
"""The taint TaintNodesByCondition adds to a new node whose Ready condition is not yet True."""


def flags_taint_new_nodes(apiserver_command: list[str]) -> bool:
    """Whether a kube-apiserver started with this command line taints new nodes (TaintNodesByCondition is
    on by default; the last --disable-admission-plugins wins, as for every flag)."""
    disabled = [arg.partition("=")[2] for arg in apiserver_command if arg.startswith("--disable-admission-plugins=")]
    return not (disabled and "TaintNodesByCondition" in disabled[-1].split(","))


def metrics_urls(cluster: specs.ClusterSpec, ports: Ports) -> dict[str, str]:
    """The components whose /metrics say where Jobs wait (the job controller's work queue, the pods
    kube-scheduler has yet to place); a cluster without Jobs runs no kube-scheduler and is not asked."""
    if not cluster.jobs:
        return {}
    return {"kube-controller-manager": f"https://{listening.LOOPBACK}:{ports.controller_manager}/metrics",
            "kube-scheduler": f"https://{listening.LOOPBACK}:{ports.scheduler}/metrics"}


def starts_tainting_new_nodes(cluster: specs.ClusterSpec) -> bool:
    """flags_taint_new_nodes of the kube-apiserver this cluster will start, before it runs (kwokctl adds no
    admission flags of its own; the bulk loader checks the running one's command line again)."""
    return flags_taint_new_nodes([f"--{arg['key']}={arg['value']}" for arg in apiserver_extra_args(cluster)])


def apiserver_extra_args(cluster: specs.ClusterSpec) -> list[dict]:
    """kube-apiserver's flags beyond kwokctl's own (`extraArgs`)."""
    args = [_arg("max-requests-inflight", str(cluster.max_requests_inflight))]
    # Appended, not "override": kwokctl's override only replaces flags it already set, and for
    # kube-apiserver the last occurrence of a flag wins anyway.
    if not taints_new_nodes(cluster):
        args.append(_arg("disable-admission-plugins", "TaintNodesByCondition"))
    return args + [_arg(key, value) for key, value in cluster.apiserver_args]


def kwokctl_documents(cluster: specs.ClusterSpec, binaries: layout.Binaries, ports: Ports) -> list[dict]:
    """The YAML documents of `kwokctl create cluster --config`."""
    options = {
        "runtime": "binary",
        "kubeVersion": binaries.kubernetes_version,
        "etcdVersion": binaries.etcd_version.lstrip("v"),
        "kwokVersion": binaries.kwok_version,
        "kubeApiserverBinary": str(binaries.kube_apiserver),
        "kubeControllerManagerBinary": str(binaries.kube_controller_manager),
        "kubeSchedulerBinary": str(binaries.kube_scheduler),
        "kubectlBinary": str(binaries.kubectl),
        "etcdBinary": str(binaries.etcd),
        "etcdctlBinary": str(binaries.etcdctl),
        "kwokControllerBinary": str(binaries.kwok),
        "bindAddress": listening.LOOPBACK,
        "securePort": True,
        "kubeAuthorization": True,
        "kubeApiserverPort": ports.apiserver,
        "etcdPort": ports.etcd,
        "etcdPeerPort": ports.etcd_peer,
        "kubeControllerManagerPort": ports.controller_manager,
        "kubeSchedulerPort": ports.scheduler,
        "kwokControllerPort": ports.kwok_controller,
        # Workloads are admitted by our scheduler; without Jobs no pod is ever bound: no kube-scheduler.
        "disableKubeScheduler": not cluster.jobs,
        # True would also turn off API Priority and Fairness and the inflight limits in
        # kube-apiserver: the very queueing and 429s a position design can cause must stay real.
        "disableQPSLimits": False,
        "etcdQuotaBackendSize": str(cluster.etcd_quota_bytes),
    }
    if cluster.feature_gates:
        options["kubeFeatureGates"] = specs.format_feature_gates(cluster.feature_gates)

    apiserver_args = apiserver_extra_args(cluster)
    controllers = list(CONTROLLERS) + (list(JOB_CONTROLLERS) if cluster.jobs else [])
    patches = [{"name": "kube-apiserver", "extraArgs": apiserver_args}]
    documents: list[dict] = []

    if cluster.heartbeats.enabled:
        # No stage of ours here: kwokctl then gives kwok its defaults with our heartbeat periods. With Jobs
        # that means kwok's fast pod stages (a pod succeeds as soon as it runs, RUNTIME_ANNOTATION unread).
        controllers.append("node-lifecycle-controller")
        options["nodeLeaseDurationSeconds"] = cluster.heartbeats.lease_seconds
        options["nodeStatusUpdateFrequencyMilliseconds"] = cluster.heartbeats.status_seconds * 1000
    else:
        patches.append({
            "name": "kwok-controller",
            "extraArgs": [_arg("node-lease-duration-seconds", "0", override=True)],
        })
        documents.append(node_ready_stage())
        if cluster.jobs:
            documents += pod_stages()
    patches.append({"name": "kube-controller-manager", "extraArgs": [_arg("controllers", ",".join(controllers))]
                    + [_arg(key, value) for key, value in cluster.controller_manager_args]})
    if cluster.scheduler_args:
        patches.append({"name": "kube-scheduler", "extraArgs": [_arg(key, value) for key, value in cluster.scheduler_args]})
    if cluster.etcd_args:
        patches.append({"name": "etcd", "extraArgs": [_arg(key, value) for key, value in cluster.etcd_args]})

    # kwok-controller plays the node stage on 4 workers by default: ~75 nodes/s become Ready on
    # this machine, 20 minutes for 100k. Its work is one status patch per node; more workers keep up.
    kwok = {"apiVersion": KWOKCTL_API, "kind": "KwokConfiguration",
            "options": {"nodePlayStageParallelism": cluster.kwok_parallelism,
                        "podPlayStageParallelism": cluster.kwok_parallelism}}
    documents.insert(0, kwok)
    config = {
        "apiVersion": KWOKCTL_API,
        "kind": "KwokctlConfiguration",
        "options": options,
        "componentsPatches": patches,
    }
    return [config, *documents]
