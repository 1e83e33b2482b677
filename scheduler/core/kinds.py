"""The Kueue configuration kinds the core understands, as plain typed dataclasses.

ResourceFlavor, ClusterQueue (with its quotas and policies), Cohort, LocalQueue and
WorkloadPriorityClass of ``kueue.x-k8s.io/v1beta2``, and the labels of core/v1 Namespaces that
a ClusterQueue's namespaceSelector reads, reduced to the fields the scheduling semantics use.
Workloads live in ``workloads``; conversion from Kueue-shaped dicts lives in ``conversion``.
Quantities are milli-units (``quantities``).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

# (flavor name, resource name): the unit of quota accounting, as in Kueue's FlavorResource.
FlavorResource = tuple[str, str]
# (namespace, name) of a LocalQueue, the key the queue manager keeps LocalQueues and their counts by.
LocalQueueKey = tuple[str, str]


class QueueingStrategy(enum.Enum):
    STRICT_FIFO = "StrictFIFO"
    BEST_EFFORT_FIFO = "BestEffortFIFO"


class PreemptionPolicy(enum.Enum):
    NEVER = "Never"
    LOWER_PRIORITY = "LowerPriority"
    LOWER_OR_NEWER_EQUAL_PRIORITY = "LowerOrNewerEqualPriority"
    ANY = "Any"


class BorrowWithinCohortPolicy(enum.Enum):
    NEVER = "Never"
    LOWER_PRIORITY = "LowerPriority"


class FungibilityPolicy(enum.Enum):
    """v1beta2 names; v1beta1's ``Borrow``/``Preempt`` map to MAY_STOP_SEARCH."""

    MAY_STOP_SEARCH = "MayStopSearch"
    TRY_NEXT_FLAVOR = "TryNextFlavor"


class FungibilityPreference(enum.Enum):
    BORROWING_OVER_PREEMPTION = "BorrowingOverPreemption"
    PREEMPTION_OVER_BORROWING = "PreemptionOverBorrowing"


@dataclass(slots=True, frozen=True)
class Taint:
    key: str
    value: str = ""
    effect: str = "NoSchedule"


@dataclass(slots=True, frozen=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        """Whether this toleration matches ``taint`` (core/v1 toleration semantics)."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.operator == "Exists":
            return not self.key or self.key == taint.key
        return self.key == taint.key and self.value == taint.value


class SelectorOperator(enum.Enum):
    IN = "In"
    NOT_IN = "NotIn"
    EXISTS = "Exists"
    DOES_NOT_EXIST = "DoesNotExist"


@dataclass(slots=True, frozen=True)
class LabelRequirement:
    """One requirement of a label selector (k8s.io/apimachinery labels.Requirement)."""

    key: str
    operator: SelectorOperator
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """labels.Requirement.Matches: NotIn and DoesNotExist hold for a missing key, In does not."""
        if self.operator is SelectorOperator.IN:
            return self.key in labels and labels[self.key] in self.values
        if self.operator is SelectorOperator.NOT_IN:
            return self.key not in labels or labels[self.key] not in self.values
        if self.operator is SelectorOperator.EXISTS:
            return self.key in labels
        return self.key not in labels


@dataclass(slots=True, frozen=True)
class LabelSelector:
    """A label selector as metav1.LabelSelectorAsSelector makes it: requirements ANDed, or nothing.

    The API's null selects nothing and ``{}`` everything (``NOTHING``/``EVERYTHING``); a ClusterQueue's
    ``namespaceSelector`` is read this way by Kueue (pkg/cache/scheduler/clusterqueue.go).
    """

    requirements: tuple[LabelRequirement, ...] = ()
    selects_nothing: bool = False

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.selects_nothing:
            return False
        return all(requirement.matches(labels) for requirement in self.requirements)


EVERYTHING = LabelSelector()
NOTHING = LabelSelector(selects_nothing=True)


@dataclass(slots=True, frozen=True)
class Namespace:
    """What the scheduler needs of a core/v1 Namespace: the labels ClusterQueues select on."""

    name: str
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class ResourceFlavor:
    name: str
    node_labels: dict[str, str] = field(default_factory=dict)
    node_taints: tuple[Taint, ...] = ()
    # spec.topologyName: a TAS flavor, whose pod sets are placed on its Topology's domains ("": none).
    topology_name: str = ""
    # spec.tolerations: added to a pod set's own when placing it on this flavor's nodes.
    tolerations: tuple[Toleration, ...] = ()


@dataclass(slots=True, frozen=True)
class ResourceQuota:
    """Quota of one resource in one flavor; limits are None when unset (unbounded)."""

    name: str
    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass(slots=True, frozen=True)
class FlavorQuotas:
    name: str
    resources: tuple[ResourceQuota, ...]


@dataclass(slots=True, frozen=True)
class ResourceGroup:
    covered_resources: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...]


@dataclass(slots=True, frozen=True)
class BorrowWithinCohort:
    """``preemption.borrowWithinCohort``: whether a queue that would borrow may still reclaim from
    lower-priority workloads of its cohort (at most ``max_priority_threshold``, when set). Kueue treats
    an absent field and policy Never alike (classical.IsBorrowingWithinCohortForbidden)."""

    policy: BorrowWithinCohortPolicy = BorrowWithinCohortPolicy.NEVER
    max_priority_threshold: int | None = None

    @property
    def forbidden(self) -> bool:
        return self.policy is BorrowWithinCohortPolicy.NEVER


@dataclass(slots=True, frozen=True)
class Preemption:
    """Kueue's ClusterQueuePreemption; with fair sharing on, ``reclaim_within_cohort`` also says whom
    fair-sharing preemption may take from other queues (``borrow_within_cohort`` is not used then)."""

    within_cluster_queue: PreemptionPolicy = PreemptionPolicy.NEVER
    reclaim_within_cohort: PreemptionPolicy = PreemptionPolicy.NEVER
    borrow_within_cohort: BorrowWithinCohort = BorrowWithinCohort()


@dataclass(slots=True, frozen=True)
class FlavorFungibility:
    # Defaults are v1beta2's: stop at a flavor that fits by borrowing, look further
    # before preempting.
    when_can_borrow: FungibilityPolicy = FungibilityPolicy.MAY_STOP_SEARCH
    when_can_preempt: FungibilityPolicy = FungibilityPolicy.TRY_NEXT_FLAVOR
    preference: FungibilityPreference = FungibilityPreference.BORROWING_OVER_PREEMPTION


@dataclass(slots=True, frozen=True)
class AdmissionCheckStrategyRule:
    """One entry of spec.admissionChecksStrategy.admissionChecks (scheduler.core.admissionchecks).

    No ``on_flavors`` means every flavor of the ClusterQueue; v1beta1's ``spec.admissionChecks`` converts to
    such rules.
    """

    name: str
    on_flavors: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class ClusterQueue:
    """A ClusterQueue spec."""

    name: str
    resource_groups: tuple[ResourceGroup, ...] = ()
    cohort: str = ""
    queueing_strategy: QueueingStrategy = QueueingStrategy.BEST_EFFORT_FIFO
    preemption: Preemption = Preemption()
    flavor_fungibility: FlavorFungibility = FlavorFungibility()
    # stopPolicy Hold/HoldAndDrain: the queue keeps its pending workloads but admits none.
    stopped: bool = False
    # stopPolicy HoldAndDrain: its admitted workloads are evicted too.
    drain: bool = False
    # Namespaces whose workloads it may admit. Every namespace by default here, so that a queue built
    # in code is not closed by surprise; a missing spec.namespaceSelector converts to NOTHING, as in Kueue.
    namespace_selector: LabelSelector = EVERYTHING
    # spec.fairSharing.weight (default 1): its share is divided by it; 0 borrows only what nobody
    # with a weight wants (Kueue's DRS).
    fair_weight: float = 1.0
    # spec.admissionScope.admissionMode UsageBasedAdmissionFairSharing: its pending workloads are
    # ordered by their LocalQueue's decayed usage first (``admissionfairsharing``).
    usage_based_admission: bool = False
    # spec.admissionChecksStrategy.admissionChecks: checks a Workload it reserves quota for must pass.
    admission_checks: tuple[AdmissionCheckStrategyRule, ...] = ()

    def quota(self, flavor_resource: FlavorResource) -> ResourceQuota | None:
        """The quota for a (flavor, resource), or None when the queue does not provide it."""
        flavor, resource = flavor_resource
        for group in self.resource_groups:
            if resource not in group.covered_resources:
                continue
            for flavor_quotas in group.flavors:
                if flavor_quotas.name == flavor:
                    for quota in flavor_quotas.resources:
                        if quota.name == resource:
                            return quota
        return None

    def flavor_names(self) -> set[str]:
        return {fq.name for group in self.resource_groups for fq in group.flavors}


@dataclass(slots=True, frozen=True)
class Cohort:
    """A Cohort object: ``parent`` is its spec.parentName ("" for a root); its resource groups hold
    quota shared by its subtree, with borrowing and lending limits towards its parent."""

    name: str
    parent: str = ""
    resource_groups: tuple[ResourceGroup, ...] = ()
    fair_weight: float = 1.0


class FairSharingStrategy(enum.Enum):
    """Kueue's Configuration fairSharing.preemptionStrategies (pkg/scheduler/preemption/fairsharing/strategy.go)."""

    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
    LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"


@dataclass(slots=True, frozen=True)
class FairSharing:
    """Kueue's Configuration ``fairSharing``: when enabled, entries of a cycle are ordered by dominant
    resource share and preemption between queues follows the strategies, in order."""

    enabled: bool = False
    strategies: tuple[FairSharingStrategy, ...] = (
        FairSharingStrategy.LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
        FairSharingStrategy.LESS_THAN_INITIAL_SHARE,
    )


FAIR_SHARING_OFF = FairSharing()


@dataclass(slots=True, frozen=True)
class AdmissionFairSharing:
    """Kueue's Configuration ``admissionFairSharing`` (its presence turns it on: the feature gate is on
    by default since v0.15). Durations in seconds."""

    enabled: bool = False
    usage_half_life_seconds: float = 0.0
    """usageHalfLifeTime: the time in which past usage decays by half; 0 forgets it at every sample."""
    usage_sampling_interval_seconds: float = 300.0
    """usageSamplingInterval: how often a LocalQueue's usage is folded in (Kueue's default 5 min)."""
    resource_weights: tuple[tuple[str, float], ...] = ()
    """resourceWeights: a resource's weight in a LocalQueue's usage (1 when not listed)."""

    def __post_init__(self) -> None:
        # pkg/config/validation.go validateAdmissionFairSharing
        if self.usage_half_life_seconds < 0:
            raise ValueError("admissionFairSharing.usageHalfLifeTime must not be negative "
                             f"(got {self.usage_half_life_seconds})")
        if self.usage_sampling_interval_seconds <= 0:
            raise ValueError("admissionFairSharing.usageSamplingInterval must be greater than 0 "
                             f"(got {self.usage_sampling_interval_seconds})")
        for resource, weight in self.resource_weights:
            if weight < 0:
                raise ValueError(f"admissionFairSharing.resourceWeights[{resource}] must not be negative "
                                 f"(got {weight})")


ADMISSION_FAIR_SHARING_OFF = AdmissionFairSharing()


@dataclass(slots=True, frozen=True)
class LocalQueue:
    namespace: str
    name: str
    cluster_queue: str
    # stopPolicy Hold/HoldAndDrain: its workloads leave the ClusterQueue until it resumes.
    stopped: bool = False
    # stopPolicy HoldAndDrain: its admitted workloads are evicted too.
    drain: bool = False
    # spec.fairSharing.weight (default 1): its usage is divided by it under admission fair sharing.
    fair_weight: float = 1.0


@dataclass(slots=True, frozen=True)
class WorkloadPriorityClass:
    name: str
    value: int
