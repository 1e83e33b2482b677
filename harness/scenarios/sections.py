"""The scenario's sections that need no registry (pure): pydantic models, frozen, unknown fields rejected.

Drivers and implementations read a scenario through these: `ScenarioFields` is what every Scenario is,
and `models` (which imports the registries, and so every driver) only narrows its assembled fields,
the phase union, the scheduler fields of each implementation and the load.mix fields of each driver.
Each model converts to the settings the harness pieces already take (ClusterSpec, NodePool), so a raw
dict never travels past `loading`.
"""

from __future__ import annotations

import itertools
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt, model_validator

from harness.clusters import spec as clusterspecs
from harness.implementations import names
from harness.nodes import pools as nodepools, topologies
from harness.scenarios import base
from harness.toolchain import versions
from loadtests import settings as load_settings
from scheduler import settings as scheduler_settings
from scheduler.publishing import strategies

STRATEGIES = tuple(strategies.STRATEGIES)
Strategy = Literal[STRATEGIES]  # type: ignore[valid-type]
"""A position strategy's name (scheduler.publishing.strategies)."""
FairSharingStrategies = Literal[tuple(",".join(s) for s in scheduler_settings.FAIR_SHARING_STRATEGY_SETS)]  # type: ignore[valid-type]
"""Kueue's fairSharing.preemptionStrategies, comma-separated: one of the lists its Configuration accepts."""
_PROCESS = scheduler_settings.SchedulerSettings(kubeconfig="")
"""The scheduler process's defaults: the scheduler section's defaults are the same."""
_Model = base.Model

# -- cluster ------------------------------------------------------------------------------


class TaintSpec(_Model):
    key: str
    value: str = ""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = "NoSchedule"


class TopologySpec(_Model):
    """Blocks of racks of hosts as node labels (harness.nodes.topologies)."""

    racks_per_block: PositiveInt = topologies.NodeTopology().racks_per_block
    hosts_per_rack: PositiveInt = topologies.NodeTopology().hosts_per_rack

    def node_topology(self) -> topologies.NodeTopology:
        return topologies.NodeTopology(self.racks_per_block, self.hosts_per_rack)


class PoolSpec(_Model):
    name: str = "kwok"
    count: PositiveInt = 1
    cpu: str = "32"
    memory: str = "256Gi"
    gpus: NonNegativeInt = 0
    labels: dict[str, str] = {}
    taints: list[TaintSpec] = []
    zones: list[str] = Field(default_factory=lambda: ["zone-a"], min_length=1)
    topology: TopologySpec | None = None
    names: Literal[nodepools.NAME_STYLES] = "indexed"  # type: ignore[valid-type]
    """indexed: <pool>-000042; cloud: as a cloud names its VMs (harness.nodes.pools)."""

    def node_pool(self) -> nodepools.NodePool:
        return nodepools.NodePool(name=self.name, count=self.count, cpu=self.cpu, memory=self.memory, gpus=self.gpus,
                                  labels=dict(self.labels), zones=tuple(self.zones),
                                  taints=tuple(nodepools.Taint(t.key, t.value, t.effect) for t in self.taints),
                                  topology=self.topology.node_topology() if self.topology else None,
                                  names=self.names)


class HeartbeatSpec(_Model):
    enabled: bool = False
    lease_seconds: PositiveInt = 600
    status_seconds: PositiveInt = 600


class ClusterSection(_Model):
    backend: Literal["kwok", "kind", "existing"] = "kwok"
    name: str | None = None
    """None: a fresh name per run (`kqb-<run id tail>`)."""
    reuse: bool = False
    """Adopt a running cluster of this `name` and leave it running afterwards."""
    kubeconfig: str | None = None
    """Only for backend `existing`."""
    allow_remote: bool = False
    """Let backend `existing` and the load reach an apiserver that is not on a loopback address: load aimed
    at a shared cluster by mistake hurts its users, so this is never implied."""
    k8s_version: str | None = None
    nodes: NonNegativeInt | None = None
    """Shorthand for one pool of default nodes; give either `nodes` or `pools`."""
    pools: list[PoolSpec] = []
    topology: TopologySpec | None = None
    """With `nodes`: label them with blocks and racks (each pool has its own `topology`)."""
    feature_gates: dict[str, bool] = {}
    apiserver_args: dict[str, str] = {}
    """Extra kube-apiserver flags without dashes, e.g. {emulated-version: "1.33"}."""
    controller_manager_args: dict[str, str] = {}
    """Extra kube-controller-manager flags, e.g. {kube-api-qps: "200"} (the job controller's pace)."""
    scheduler_args: dict[str, str] = {}
    """Extra kube-scheduler flags, e.g. {kube-api-qps: "200"} (its binds and events)."""
    etcd_args: dict[str, str] = {}
    """Extra etcd flags, e.g. {max-request-bytes: "262144"}: etcd's request limit met at a scale a test affords."""
    heartbeats: HeartbeatSpec = HeartbeatSpec()
    jobs: bool = False
    """Run batch Jobs' pods (job controller and kube-scheduler on); see ClusterSpec.jobs."""
    bulk: bool = False
    """Write the nodes straight into etcd instead of POSTing them (kwok backend); see ClusterSpec.bulk."""

    @model_validator(mode="after")
    def _nodes_or_pools(self) -> "ClusterSection":
        if self.nodes is not None and self.pools:
            raise ValueError("give either nodes or pools, not both")
        if self.topology is not None and self.pools:
            raise ValueError("with pools, give each pool its own topology")
        if len({p.name for p in self.pools}) != len(self.pools):
            raise ValueError("pool names must be distinct")
        return self

    def node_pools(self) -> list[nodepools.NodePool]:
        if self.pools:
            return [p.node_pool() for p in self.pools]
        topology = self.topology.node_topology() if self.topology else None
        return [nodepools.NodePool(count=self.nodes, topology=topology)] if self.nodes else []

    def cluster_spec(self, name: str) -> clusterspecs.ClusterSpec:
        hb = self.heartbeats
        return clusterspecs.ClusterSpec(name=self.name or name, backend=self.backend, k8s_version=self.k8s_version,
                                        feature_gates=dict(self.feature_gates),
                                        apiserver_args=tuple(sorted(self.apiserver_args.items())),
                                        controller_manager_args=tuple(sorted(self.controller_manager_args.items())),
                                        scheduler_args=tuple(sorted(self.scheduler_args.items())),
                                        etcd_args=tuple(sorted(self.etcd_args.items())),
                                        heartbeats=clusterspecs.Heartbeats(hb.enabled, hb.lease_seconds, hb.status_seconds),
                                        jobs=self.jobs, allow_remote=self.allow_remote, bulk=self.bulk,
                                        schedulable_nodes=any(p.topology for p in self.node_pools()))


# -- queues -------------------------------------------------------------------------------

FairSharingWeight = Annotated[float, Field(ge=0)]
"""0 or more; Kueue also refuses a weight in (0, 1e-9] (our CRDs do too)."""
Each = dict[str, PositiveInt]
"""Template ranges: {c: 5, q: 6} makes 30 objects, `{c}` and `{q}` formatted into names."""


def expand_each(each: dict[str, int], **templates: str | None) -> list[dict[str, str | None]]:
    """One dict per point of the `each` ranges: every template formatted with that point's values."""
    keys = sorted(each)
    out = []
    for values in itertools.product(*(range(each[k]) for k in keys)) if keys else [()]:
        bound = dict(zip(keys, values))
        out.append({k: (t.format(**bound) if t is not None else None) for k, t in templates.items()})
    return out


class FlavorSpec(_Model):
    name: str
    node_labels: dict[str, str] = {}
    topology_name: str | None = None
    """A TAS flavor: pod sets go to the domains of this Topology (one of queues.topologies)."""


class TopologyObjectSpec(_Model):
    """A Topology object: node label keys, highest level first (default: the harness's node levels)."""

    name: str
    levels: list[str] = Field(default_factory=lambda: list(topologies.LEVELS), min_length=1)


class ResourceQuotaSpec(_Model):
    name: str
    nominal: str | int
    borrowing_limit: str | int | None = None
    lending_limit: str | int | None = None


class FlavorQuotaSpec(_Model):
    flavor: str
    resources: list[ResourceQuotaSpec] = Field(min_length=1)


class ResourceGroupSpec(_Model):
    covered_resources: list[str] = Field(min_length=1)
    flavors: list[FlavorQuotaSpec] = Field(min_length=1)


class PreemptionSpec(_Model):
    """A ClusterQueue's spec.preemption (Kueue's names); omitted means Never for both."""

    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = "Never"
    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] = "Never"


class ClusterQueueSpec(_Model):
    name: str
    cohort: str | None = None
    each: Each = {}
    queueing_strategy: Literal["BestEffortFIFO", "StrictFIFO"] = "BestEffortFIFO"
    preemption: PreemptionSpec | None = None
    resource_groups: list[ResourceGroupSpec] = Field(min_length=1)
    fair_sharing_weight: FairSharingWeight | None = None
    """spec.fairSharing.weight (Kueue's default 1): its share under fair sharing is divided by it."""
    admission_mode: Literal["UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing"] | None = None
    """spec.admissionScope.admissionMode: UsageBasedAdmissionFairSharing orders its pending Workloads by
    their LocalQueue's usage when scheduler.admission_fair_sharing is on."""

    def expanded(self) -> list[tuple[str, str | None]]:
        return [(e["name"], e["cohort"]) for e in expand_each(self.each, name=self.name, cohort=self.cohort)]


class LocalQueueSpec(_Model):
    name: str
    cluster_queue: str
    namespace: str = "kqbench-churn"
    each: Each = {}
    fair_sharing_weight: FairSharingWeight | None = None
    """spec.fairSharing.weight: its usage under admission fair sharing is divided by it."""

    def expanded(self) -> list[tuple[str, str, str]]:
        return [(e["namespace"], e["name"], e["cq"])
                for e in expand_each(self.each, name=self.name, cq=self.cluster_queue, namespace=self.namespace)]


class CohortSpec(_Model):
    name: str
    parent: str | None = None
    each: Each = {}
    fair_sharing_weight: FairSharingWeight | None = None
    """spec.fairSharing.weight: its share among its parent's children is divided by it."""


class PriorityClassSpec(_Model):
    name: str
    value: int


class QueuesSection(_Model):
    topologies: list[TopologyObjectSpec] = []
    flavors: list[FlavorSpec] = Field(default_factory=lambda: [FlavorSpec(name="default")])
    cohorts: list[CohortSpec] = []
    cluster_queues: list[ClusterQueueSpec] = []
    local_queues: list[LocalQueueSpec] = []
    priority_classes: list[PriorityClassSpec] = []

    @model_validator(mode="after")
    def _references(self) -> "QueuesSection":
        flavors = {f.name for f in self.flavors}
        known = {t.name for t in self.topologies}
        for flavor in self.flavors:
            if flavor.topology_name is not None and flavor.topology_name not in known:
                raise ValueError(f"flavor {flavor.name!r} names topology {flavor.topology_name!r}, which is not in "
                                 "topologies")
        for cq in self.cluster_queues:
            for group in cq.resource_groups:
                for fq in group.flavors:
                    if fq.flavor not in flavors:
                        raise ValueError(f"cluster queue {cq.name!r} uses flavor {fq.flavor!r}, which is not in flavors")
        cqs = {name for cq in self.cluster_queues for name, _ in cq.expanded()}
        for lq in self.local_queues:
            for _, name, cq in lq.expanded():
                if cq not in cqs:
                    raise ValueError(f"local queue {name!r} points to cluster queue {cq!r}, which is not defined")
        return self

    def cluster_queue_names(self) -> list[str]:
        return [name for cq in self.cluster_queues for name, _ in cq.expanded()]

    def local_queue_names(self) -> list[str]:
        return [name for lq in self.local_queues for _, name, _ in lq.expanded()]

    def cluster_queue_of(self, namespace: str, local_queue: str) -> str | None:
        """The ClusterQueue of LocalQueue namespace/local_queue (None: no such LocalQueue)."""
        return next((cq for lq in self.local_queues for ns, name, cq in lq.expanded()
                     if (ns, name) == (namespace, local_queue)), None)


def unknown_local_queues(scenario: "ScenarioFields", names: tuple[str, ...]) -> str | None:
    """A phase's `local_queues` naming a LocalQueue the scenario has not: the problem, else None."""
    known = scenario.queues.local_queue_names()
    missing = [name for name in names if name not in known]
    if missing:
        return f"local_queues names {', '.join(map(repr, missing))}, not in queues.local_queues ({', '.join(known)})"
    return None


# -- scheduler, phases, load, measurements -----------------------------------------------------


class SchedulerFields(_Model):
    """The scheduler fields every implementation reads; `enabled` and `implementation` are the runner's."""

    enabled: bool = True
    """False: no scheduler and no queue objects (list/watch scenarios measure the apiserver alone)."""
    implementation: str = names.REFERENCE
    """Which scheduler (harness.implementations.registry: models.SchedulerSection names the choices)."""
    strategy: Strategy = _PROCESS.strategy
    """How users learn their queue position (scheduler.publishing.strategies)."""
    qps: PositiveFloat | None = None
    """Client-side write QPS; None: what the implementation ships (the reference scheduler's own default,
    filled in by its fields' validator; Kueue: the clientConnection of its version's shipped Configuration)."""
    burst: PositiveInt | None = None
    """Client-side write burst; None as for qps."""
    no_client_limit: bool = False
    """True: no client-side limit on writes (`qps` and `burst` are ignored)."""
    top_n: PositiveInt = Field(_PROCESS.publish.topn, le=strategies.MAX_TOPN)
    """cq-status-topn only: entries kept in ClusterQueue status (at most strategies.MAX_TOPN, as Kueue allowed)."""
    refresh_seconds: PositiveFloat = _PROCESS.publish.topn_interval_seconds
    """cq-status-topn only: status refresh period."""
    single_object_interval_seconds: PositiveFloat = _PROCESS.publish.single_object_interval_seconds
    """single-object only: each queue's object is rewritten at most this often."""
    status_min_interval_seconds: PositiveFloat = _PROCESS.publish.min_interval_seconds
    """status-field only: positions are recomputed at most this often (changes in between coalesce)."""
    authorization: Literal[scheduler_settings.AUTHORIZATIONS] = _PROCESS.authorization  # type: ignore[valid-type]
    """Visibility requests: delegate (SubjectAccessReview per user and queue, cached) or off."""
    max_unwritten: PositiveInt = _PROCESS.max_unwritten
    """Admissions the cycle loop may decide ahead of their status writes."""
    page_cache: bool = _PROCESS.page_cache
    """Aggregated strategies: keep encoded pages until their queue changes (false: encode per request, as Kueue)."""
    manage_jobs: bool = _PROCESS.manage_jobs
    """Queue batch/v1 Jobs (Kueue's job integration); on by default in a cluster that runs Jobs (cluster.jobs)."""
    fair_sharing: bool = _PROCESS.fair_sharing
    """Kueue's Configuration fairSharing, for both implementations: cycles ordered by dominant resource share,
    preemption between queues by `fair_sharing_strategies` (ClusterQueue/Cohort weights in spec.fairSharing)."""
    fair_sharing_strategies: FairSharingStrategies = ",".join(_PROCESS.fair_sharing_strategies)
    """fairSharing.preemptionStrategies, comma-separated (Kueue's default: both, in this order)."""
    admission_fair_sharing: bool = _PROCESS.admission_fair_sharing
    """Kueue's Configuration admissionFairSharing, for both implementations: in a ClusterQueue with
    spec.admissionScope.admissionMode UsageBasedAdmissionFairSharing, pending workloads go by their
    LocalQueue's decayed usage first (LocalQueue weights in spec.fairSharing)."""
    usage_half_life_seconds: float = Field(_PROCESS.usage_half_life_seconds, ge=0)
    """admissionFairSharing.usageHalfLifeTime (0, Kueue's zero value: usage forgotten at every sample)."""
    usage_sampling_interval_seconds: PositiveFloat = _PROCESS.usage_sampling_interval_seconds
    """admissionFairSharing.usageSamplingInterval (Kueue's default: 5 min)."""
    resource_weights: dict[str, NonNegativeFloat] = {}
    """admissionFairSharing.resourceWeights (a resource not listed weighs 1; none may be negative)."""
    wait_for_pods_ready: bool | None = None
    """Kueue's Configuration waitForPodsReady, for both implementations: an admitted Workload whose pods are
    not all ready within the timeout is evicted (PodsReadyTimeout) and requeued after a backoff, deactivated
    past the backoff limit (docs/lifecycle.md). None: as the run's Kueue version ships it (on from v0.19 with
    a 30-minute timeout; harness/versions.toml [kueue.defaults]; off before)."""
    wait_for_pods_ready_timeout_seconds: PositiveFloat = _PROCESS.wait_for_pods_ready_timeout_seconds
    """waitForPodsReady.timeout: from Admitted to PodsReady (Kueue's default: 30 min)."""
    wait_for_pods_ready_block_admission: bool = _PROCESS.wait_for_pods_ready_block_admission
    """waitForPodsReady.blockAdmission: no admission while an admitted Workload's pods are not ready."""
    wait_for_pods_ready_requeuing_timestamp: Literal["Eviction", "Creation"] = \
        _PROCESS.wait_for_pods_ready_requeuing_timestamp  # type: ignore[assignment]
    """waitForPodsReady.requeuingStrategy.timestamp: what orders a Workload back after a PodsReady timeout."""
    wait_for_pods_ready_backoff_limit_count: NonNegativeInt | None = _PROCESS.wait_for_pods_ready_backoff_limit_count
    """waitForPodsReady.requeuingStrategy.backoffLimitCount: timeouts requeued before deactivation (None: no limit)."""
    wait_for_pods_ready_backoff_base_seconds: NonNegativeInt = _PROCESS.wait_for_pods_ready_backoff_base_seconds
    """waitForPodsReady.requeuingStrategy.backoffBaseSeconds: the first backoff, doubling after (Kueue's: 60)."""
    wait_for_pods_ready_backoff_max_seconds: NonNegativeInt = _PROCESS.wait_for_pods_ready_backoff_max_seconds
    """waitForPodsReady.requeuingStrategy.backoffMaxSeconds: the cap on a backoff, 0 none (Kueue's: 3600)."""
    wait_for_pods_ready_recovery_timeout_seconds: NonNegativeFloat | None = \
        _PROCESS.wait_for_pods_ready_recovery_timeout_seconds
    """waitForPodsReady.recoveryTimeout: from a ready Workload's pod failing to its recovery (None: the
    timeout; 0: none)."""

    def wait_for_pods_ready_on(self, kueue_version: str | None) -> bool:
        """Whether waitForPodsReady is on in a run compared with this Kueue version (None: the default)."""
        if self.wait_for_pods_ready is not None:
            return self.wait_for_pods_ready
        return versions.kueue_defaults(kueue_version)["wait_for_pods_ready"]


class WorkloadMixFields(_Model):
    """The fields of a load.mix entry every load reads."""

    weight: PositiveInt = 1
    priority: int = 0
    priority_class: str | None = None
    pods: PositiveInt = 1
    cpu: str = "1"
    memory: str = "1Gi"
    runtime_seconds: PositiveFloat = 30.0


class UsersSpec(_Model):
    churn: NonNegativeInt = 1
    querier: NonNegativeInt = 2
    bystander: NonNegativeInt = 2
    listwatch: NonNegativeInt = 0


class RatesSpec(_Model):
    create_per_second: PositiveFloat = 20.0
    query_per_second: PositiveFloat = 2.0
    """Per querier user."""
    bystander_per_second: PositiveFloat = 2.0
    """Per bystander user."""


class ShapeSpec(_Model):
    kind: Literal["constant", "steps", "spike"] = "constant"
    step_users: PositiveInt = 10
    step_seconds: PositiveFloat = 30
    steps: PositiveInt = 3
    spike_users: PositiveInt = 50
    spike_at: NonNegativeInt = 30
    spike_seconds: PositiveFloat = 10


class LoadFields(_Model):
    """The load section; models.LoadSection narrows `mix` to the entries with every driver's fields."""

    users: UsersSpec = UsersSpec()
    rates: RatesSpec = RatesSpec()
    shape: ShapeSpec = ShapeSpec()
    mix: list[WorkloadMixFields] = Field(default_factory=lambda: [WorkloadMixFields()], min_length=1)
    workers: NonNegativeInt = 0
    """Locust worker processes on this machine."""
    remote_workers: NonNegativeInt = 0
    """Workers the user starts on other hosts (`kqbench load --worker --master-host H --master-port P`);
    every load phase waits for them (they rejoin between phases) and fails when they do not come."""
    master_bind: str = "0.0.0.0:5557"
    """HOST:PORT the master listens on when there are remote workers (they must reach it)."""
    worker_timeout_seconds: PositiveFloat = 120.0
    """How long a phase waits for its workers to join."""

    @model_validator(mode="after")
    def _master_bind_is_host_port(self) -> "LoadFields":
        try:
            load_settings.host_port(self.master_bind)
        except load_settings.SettingsError as error:
            raise ValueError(f"master_bind: {error}") from None
        return self


class MeasurementsSection(_Model):
    scrape_interval_seconds: PositiveFloat = 5.0
    census: bool = True
    invariants: Literal["every-phase", "last-phase", "off"] = "every-phase"
    """When to check the queueing objects (harness.invariants: a few paginated LISTs of every object each
    time): after every phase, only after the last (and after a phase that failed), or never. At 100k
    Workloads each check takes 15-25 s; `last-phase` checks once the run has drained. `true`/`false`
    read as every-phase/off."""

    @model_validator(mode="before")
    @classmethod
    def _invariants_from_bool(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("invariants"), bool):
            return {**data, "invariants": "every-phase" if data["invariants"] else "off"}
        return data


class ArmSpec(_Model):
    """A named cluster variant (an experiment's arm): merged into `cluster` when `arm` selects it."""

    description: str = ""
    k8s_version: str | None = None
    feature_gates: dict[str, bool] = {}
    apiserver_args: dict[str, str] = {}
    controller_manager_args: dict[str, str] = {}
    scheduler_args: dict[str, str] = {}


FaultKind = Literal["kill-scheduler", "restart-apiserver", "kill-etcd", "pause-kwok"]


class FaultSpec(_Model):
    """One fault injected `at_seconds` into `phase` (harness.faults): kill -9 the scheduler and start it
    again, stop kube-apiserver (SIGTERM) and start it again, kill -9 etcd and start it on the same data
    dir, or SIGSTOP kwok-controller; each back (restarted, SIGCONT) after `down_seconds`."""

    kind: FaultKind
    phase: str
    at_seconds: float = Field(5.0, ge=0)
    down_seconds: float = Field(5.0, ge=0)
    recovery_timeout_seconds: PositiveFloat = 120.0
    """How long to wait, once the component is back, for the apiserver, admissions and positions."""


class ScenarioFields(_Model):
    """What every Scenario is (models.Scenario narrows `scheduler`, `phases` and `load` and validates the whole)."""

    name: str
    description: str = ""
    cluster: ClusterSection = ClusterSection()
    queues: QueuesSection = QueuesSection()
    scheduler: SchedulerFields = SchedulerFields()
    phases: dict[str, BaseModel] = {}
    load: LoadFields = LoadFields()
    measurements: MeasurementsSection = MeasurementsSection()
    faults: list[FaultSpec] = []
    """Faults injected during phases (each names its phase); recorded in table `faults`."""
    repeat: PositiveInt = 1
    arms: dict[str, ArmSpec] = {}
    """Named cluster variants; sweep `arm: [a, b]` to give each its own case and cluster."""
    arm: str | None = None
    """The arm of this case; its version, gates and flags override `cluster`'s."""
    sweep: dict[str, list[Any]] = {}
