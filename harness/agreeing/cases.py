"""A differential-test case: one Kueue setup and the Workload stream it receives, in epochs.

A case file reads like Kueue's own objects (its field names, its enum values), reduced to what
decisions depend on, so that a minimal case can be read and replayed by hand. It is validated as
a whole before any cluster starts: every rule Kueue's webhooks enforce on these fields and every
reference between objects, each failure naming the field (`clusterQueues[1].resourceGroups[0]...`).

Epochs make the outcome independent of timing: each epoch's changes (new Workloads, finished ones)
are made while the case's queues cannot admit, then released in one step (see ``running``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pydantic
import yaml

from harness.agreeing import lifecycles
from harness.errors import KqbenchError
from scheduler import settings as scheduler_settings
from scheduler.core import kinds, quantities

FORMAT_VERSION = 3
"""Version 1: flavors, namespaces, clusterQueues, localQueues, epochs (arrive / finish).
Version 2 adds cohorts (Cohort objects: parentName, quota, weight), ClusterQueue fairSharing
weights and the scheduler's fairSharing configuration; a version 1 file reads the same.
Version 3 adds the Workload lifecycle (``lifecycles``): Workload maximumExecutionTimeSeconds,
podsReady and checkRule, the scheduler's waitForPodsReady, AdmissionChecks and ClusterQueue
admissionChecks; a version 1 or 2 file reads the same (none of them set)."""

RESOURCES = ("cpu", "memory", "pods")
Strict = pydantic.ConfigDict(extra="forbid", frozen=True)
Policy = Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority", "Any"]
Strategy = Literal[tuple(s.value for s in kinds.FairSharingStrategy)]  # type: ignore[valid-type]
"""One of Kueue's fair-sharing preemption strategies; the lists of them it accepts are
scheduler.settings.FAIR_SHARING_STRATEGY_SETS."""


class CaseError(KqbenchError, ValueError):
    """A case file that is not a valid Kueue setup; the message names the field."""


class Quota(pydantic.BaseModel):
    model_config = Strict
    name: Literal["cpu", "memory", "pods"]
    nominalQuota: str
    borrowingLimit: str | None = None
    lendingLimit: str | None = None


class FlavorQuotas(pydantic.BaseModel):
    model_config = Strict
    name: str
    resources: tuple[Quota, ...]


class ResourceGroup(pydantic.BaseModel):
    model_config = Strict
    coveredResources: tuple[Literal["cpu", "memory", "pods"], ...]
    flavors: tuple[FlavorQuotas, ...]


class BorrowWithinCohort(pydantic.BaseModel):
    model_config = Strict
    policy: Literal["Never", "LowerPriority"] = "Never"
    maxPriorityThreshold: int | None = None


class Preemption(pydantic.BaseModel):
    model_config = Strict
    withinClusterQueue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = "Never"
    reclaimWithinCohort: Literal["Never", "LowerPriority", "Any"] = "Never"
    borrowWithinCohort: BorrowWithinCohort | None = None


class FlavorFungibility(pydantic.BaseModel):
    model_config = Strict
    whenCanBorrow: Literal["MayStopSearch", "TryNextFlavor"] = "MayStopSearch"
    whenCanPreempt: Literal["MayStopSearch", "TryNextFlavor"] = "TryNextFlavor"


class FairSharing(pydantic.BaseModel):
    """A ClusterQueue's or Cohort's spec.fairSharing."""

    model_config = Strict
    weight: str


class Cohort(pydantic.BaseModel):
    """A Cohort object: its parent (a Cohort of the case, or a name only, which Kueue treats as an
    implicit root), the quota it shares with its subtree, its weight."""

    model_config = Strict
    name: str
    parentName: str | None = None
    resourceGroups: tuple[ResourceGroup, ...] = ()
    fairSharing: FairSharing | None = None


class FairSharingConfig(pydantic.BaseModel):
    """The scheduler's fairSharing configuration (Kueue's Configuration; the reference's setting)."""

    model_config = Strict
    preemptionStrategies: tuple[Strategy, ...] = scheduler_settings.FAIR_SHARING_STRATEGY_SETS[2]


class ClusterQueue(pydantic.BaseModel):
    model_config = Strict
    name: str
    cohort: str | None = None
    queueingStrategy: Literal["StrictFIFO", "BestEffortFIFO"] = "BestEffortFIFO"
    namespaceSelector: dict[str, str] | None = pydantic.Field(default_factory=dict)
    """matchLabels; {} selects every namespace and null none, as in Kueue."""
    preemption: Preemption = Preemption()
    flavorFungibility: FlavorFungibility = FlavorFungibility()
    resourceGroups: tuple[ResourceGroup, ...]
    fairSharing: FairSharing | None = None
    admissionChecks: tuple[str, ...] = ()
    """Names of the case's AdmissionChecks, for every flavor (spec.admissionChecksStrategy)."""


class Flavor(pydantic.BaseModel):
    model_config = Strict
    name: str
    nodeLabels: dict[str, str] = pydantic.Field(default_factory=dict)


class Namespace(pydantic.BaseModel):
    model_config = Strict
    name: str
    labels: dict[str, str] = pydantic.Field(default_factory=dict)


class LocalQueue(pydantic.BaseModel):
    model_config = Strict
    namespace: str
    name: str
    clusterQueue: str


class PodSet(pydantic.BaseModel):
    model_config = Strict
    name: str = "main"
    count: int = pydantic.Field(ge=1)
    requests: dict[Literal["cpu", "memory"], str]
    """Per pod."""


class Workload(pydantic.BaseModel):
    model_config = Strict
    name: str
    namespace: str
    queueName: str
    priority: int = 0
    podSets: tuple[PodSet, ...]
    maximumExecutionTimeSeconds: int | None = None
    podsReady: bool = False
    """The tester writes PodsReady=True once it is admitted (needs the case's waitForPodsReady)."""
    checkRule: str | None = None
    """How kqbench's check controller answers its checks (harness.workloads.checkrules; None: ready)."""


class Epoch(pydantic.BaseModel):
    model_config = Strict
    arrive: tuple[Workload, ...] = ()
    """Created in this order, one creation second each, while the queues cannot admit."""
    finish: tuple[str, ...] = ()
    """Workload names marked Finished at the start of the epoch, where admitted."""


class Case(pydantic.BaseModel):
    model_config = Strict
    version: Literal[1, 2, 3] = FORMAT_VERSION
    seed: int | None = None
    """The generator's seed, when the case came from one (provenance only)."""
    fairSharing: FairSharingConfig | None = None
    """On for both schedulers when present (cases with and without it never share a batch)."""
    waitForPodsReady: lifecycles.WaitForPodsReady | None = None
    """On for both schedulers when present, as fairSharing (a case without it runs with the Kueue
    version's default: off in v0.17, a 30-minute timeout in v0.19, which no case reaches)."""
    admissionChecks: tuple[lifecycles.AdmissionCheck, ...] = ()
    flavors: tuple[Flavor, ...]
    namespaces: tuple[Namespace, ...]
    cohorts: tuple[Cohort, ...] = ()
    clusterQueues: tuple[ClusterQueue, ...]
    localQueues: tuple[LocalQueue, ...]
    epochs: tuple[Epoch, ...]

    def workloads(self) -> list[Workload]:
        return [w for epoch in self.epochs for w in epoch.arrive]

    def namespace_of(self, workload: str) -> str:
        return next(w.namespace for w in self.workloads() if w.name == workload)

    def cohort_names(self) -> set[str]:
        """Every Cohort the case names: its objects, their parents, and the ClusterQueues' cohorts."""
        return ({c.name for c in self.cohorts} | {c.parentName for c in self.cohorts if c.parentName}
                | {q.cohort for q in self.clusterQueues if q.cohort})

    def size(self) -> tuple[int, int, int, int]:
        """What shrinking makes smaller: (workloads, queues, flavors, epochs)."""
        return len(self.workloads()), len(self.clusterQueues), len(self.flavors), len(self.epochs)


def check(case: Case) -> Case:
    """Every reference resolves and every quota is one Kueue's webhooks accept; else CaseError."""
    problems = list(_problems(case))
    if problems:
        raise CaseError(problems[0])
    return case


def _problems(case: Case):
    flavors = {f.name for f in case.flavors}
    namespaces = {n.name for n in case.namespaces}
    queues = {q.name for q in case.clusterQueues}
    checks = {c.name for c in case.admissionChecks}
    for kind, names in (("flavors", [f.name for f in case.flavors]), ("namespaces", [n.name for n in case.namespaces]),
                        ("cohorts", [c.name for c in case.cohorts]),
                        ("admissionChecks", [c.name for c in case.admissionChecks]),
                        ("clusterQueues", [q.name for q in case.clusterQueues]),
                        ("localQueues", [f"{q.namespace}/{q.name}" for q in case.localQueues]),
                        ("workloads", [w.name for w in case.workloads()])):
        seen = set()
        for i, name in enumerate(names):
            if not name or not _dns_label(name.split("/")[-1]):
                yield f"{kind}[{i}].name: {name!r} is not a DNS label (lower-case letters, digits, '-')"
            if name in seen:
                yield f"{kind}[{i}].name: {name!r} appears twice"
            seen.add(name)
    for i, cq in enumerate(case.clusterQueues):
        yield from _queue_problems(f"clusterQueues[{i}]", cq, flavors)
        if cq.cohort is not None and not _dns_label(cq.cohort):
            yield f"clusterQueues[{i}].cohort: {cq.cohort!r} is not a DNS label"
        yield from lifecycles.queue_problems(f"clusterQueues[{i}]", cq.admissionChecks, checks)
    for i, cohort in enumerate(case.cohorts):
        yield from _cohort_problems(f"cohorts[{i}]", cohort, flavors)
    accepted = scheduler_settings.FAIR_SHARING_STRATEGY_SETS
    if case.fairSharing is not None and case.fairSharing.preemptionStrategies not in accepted:
        yield (f"fairSharing.preemptionStrategies: {list(case.fairSharing.preemptionStrategies)} is not a list "
               f"Kueue accepts: {' | '.join(','.join(s) for s in accepted)}")
    for i, lq in enumerate(case.localQueues):
        if lq.namespace not in namespaces:
            yield f"localQueues[{i}].namespace: {lq.namespace!r} is not in namespaces"
        if lq.clusterQueue not in queues:
            yield f"localQueues[{i}].clusterQueue: {lq.clusterQueue!r} is not in clusterQueues"
    local = {(q.namespace, q.name) for q in case.localQueues}
    arrived: set[str] = set()
    for e, epoch in enumerate(case.epochs):
        for name in epoch.finish:
            if name not in arrived:
                yield f"epochs[{e}].finish: {name!r} has not arrived in an earlier epoch"
        for w, wl in enumerate(epoch.arrive):
            where = f"epochs[{e}].arrive[{w}]"
            if (wl.namespace, wl.queueName) not in local:
                yield f"{where}.queueName: {wl.namespace}/{wl.queueName} is not in localQueues"
            yield from lifecycles.workload_problems(where, wl.maximumExecutionTimeSeconds, wl.podsReady, wl.checkRule,
                                                    case.waitForPodsReady)
            for p, pod_set in enumerate(wl.podSets):
                for resource, value in pod_set.requests.items():
                    if _quantity(value) is None:
                        yield f"{where}.podSets[{p}].requests.{resource}: {value!r} is not a quantity"
        arrived |= {w.name for w in epoch.arrive}
    if not case.epochs or not case.epochs[0].arrive:
        yield "epochs[0].arrive: the first epoch brings no Workload"


def _queue_problems(where: str, cq: ClusterQueue, flavors: set[str]):
    yield from _groups_problems(where, cq.resourceGroups, flavors, cq.cohort)
    yield from _weight_problems(where, cq.fairSharing)
    bwc = cq.preemption.borrowWithinCohort
    if bwc is not None and bwc.policy != "Never" and cq.preemption.reclaimWithinCohort == "Never":
        yield f"{where}.preemption.borrowWithinCohort: needs reclaimWithinCohort other than Never (Kueue's webhook)"


def _cohort_problems(where: str, cohort: Cohort, flavors: set[str]):
    """Kueue's Cohort webhook: resource groups as a ClusterQueue's, but lending may exceed nominal and
    limits need a parent."""
    if cohort.parentName is not None and not _dns_label(cohort.parentName):
        yield f"{where}.parentName: {cohort.parentName!r} is not a DNS label"
    yield from _groups_problems(where, cohort.resourceGroups, flavors, cohort.parentName, cohort_level=True)
    yield from _weight_problems(where, cohort.fairSharing)


def _weight_problems(where: str, fair: FairSharing | None):
    if fair is None:
        return
    weight = _quantity(fair.weight)
    if weight is None or weight < 0:
        yield f"{where}.fairSharing.weight: {fair.weight!r} is not a non-negative quantity"


def _groups_problems(where: str, groups: tuple[ResourceGroup, ...], flavors: set[str], parent: str | None,
                     cohort_level: bool = False):
    covered: set[str] = set()
    listed: set[str] = set()
    for g, group in enumerate(groups):
        if not group.coveredResources or not group.flavors:
            yield f"{where}.resourceGroups[{g}]: needs coveredResources and flavors"
        for resource in group.coveredResources:
            if resource in covered:
                yield f"{where}.resourceGroups[{g}].coveredResources: {resource} is covered by two groups"
            covered.add(resource)
        for f, fq in enumerate(group.flavors):
            at = f"{where}.resourceGroups[{g}].flavors[{f}]"
            if fq.name not in flavors:
                yield f"{at}.name: {fq.name!r} is not in flavors"
            if fq.name in listed:
                yield f"{at}.name: {fq.name!r} appears in two groups or twice"
            listed.add(fq.name)
            if [q.name for q in fq.resources] != list(group.coveredResources):
                yield f"{at}.resources: must list {list(group.coveredResources)} in that order (got {[q.name for q in fq.resources]})"
            for r, quota in enumerate(fq.resources):
                yield from _quota_problems(f"{at}.resources[{r}]", quota, parent, cohort_level)


def _quota_problems(where: str, quota: Quota, cohort: str | None, cohort_level: bool = False):
    values = {}
    for field in ("nominalQuota", "borrowingLimit", "lendingLimit"):
        raw = getattr(quota, field)
        if raw is None:
            continue
        values[field] = _quantity(raw)
        if values[field] is None or values[field] < 0:
            yield f"{where}.{field}: {raw!r} is not a non-negative quantity"
    if not cohort and ("borrowingLimit" in values or "lendingLimit" in values):
        yield f"{where}: borrowingLimit and lendingLimit need a {'parent' if cohort_level else 'cohort'} (Kueue's webhook)"
    lending, nominal = values.get("lendingLimit"), values.get("nominalQuota")
    if not cohort_level and lending is not None and nominal is not None and lending > nominal:
        yield f"{where}.lendingLimit: {quota.lendingLimit} exceeds nominalQuota {quota.nominalQuota}"


def _quantity(raw: str) -> int | None:
    try:
        return quantities.parse_quantity(raw)
    except (ValueError, TypeError):
        return None


def _dns_label(name: str) -> bool:
    return len(name) <= 40 and all(c.islower() or c.isdigit() or c == "-" for c in name) and name[0].isalnum()


def load(path: Path) -> Case:
    """Read and validate a case file (YAML or JSON); CaseError names the file and field."""
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise CaseError(f"{path}: cannot read a case: {error}") from None
    return parse(raw, str(path))


def parse(raw: object, source: str = "case") -> Case:
    try:
        case = Case.model_validate(raw)
    except pydantic.ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise CaseError(f"{source}: {field}: {first['msg']} (got {first.get('input')!r:.80})") from None
    try:
        return check(case)
    except CaseError as error:
        raise CaseError(f"{source}: {error}") from None


def dump(case: Case) -> str:
    """YAML without defaults, so a minimal case stays short."""
    return yaml.safe_dump(case.model_dump(mode="json", exclude_defaults=True), sort_keys=False, width=120)
