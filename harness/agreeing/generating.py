"""Random, valid Kueue setups and Workload streams, reproducible from a seed.

The ranges follow what decides admission and preemption in Kueue: 1-3 cohorts (and queues outside
any), 2-6 ClusterQueues of both queueing strategies, 1-3 flavors, cpu and memory (sometimes `pods`),
nominal quotas with borrowing and lending limits, every classical preemption policy,
flavor fungibility, 2-3 priorities, one or two pod sets of 1-3 pods, and namespaces that a queue's
namespaceSelector does or does not select. Three epochs: Workloads arrive (more than the quota
holds), higher-priority Workloads arrive (preemptors), some admitted Workloads finish.

Hierarchical cohorts and fair sharing are drawn from a second stream of the seed, so the rest of a
seed's case is what it was before they existed: in 6 cases of 10 the cohorts become Cohort objects
in trees 1-3 deep (a root above them, or roots and middle Cohorts), some with quota of their own and
borrowing and lending limits below the root, some queues attached to an inner Cohort; in about 1 of
3 fair sharing is on (one of the strategy lists Kueue accepts) with weights on queues and Cohorts,
and then every queue has a cohort (a queue alone has nothing to share fairly). `require` turns either
on in every case (`hierarchy`, `fair-sharing`): the same draws are made, so a seed whose case had them
anyway gives the same case.

The Workload lifecycle families come from a third stream, and only when required, so that every other
case is what it was: `limits` gives about half of the Workloads a `maximumExecutionTimeSeconds` of 45-60 s;
`pods-ready` turns waitForPodsReady on (a 45 s timeout, a 1 s backoff base capped at 2 s, a limit of 2
requeues) and marks about half of the Workloads ready, so that the
rest time out, back off and are deactivated; `checks` puts one or two AdmissionChecks on most
ClusterQueues and a rule on every Workload (ready, ready after 1-2 s, one or two Retries with a 1-3 s
backoff, or Rejected). A limit or a timeout runs from the admission and must outlast the time a batch of
cases takes to settle after its gates open (the runner waits out every timed step with the gates closed,
harness.drivers.agreement.playing; a batch of a hundred cases took more than twenty seconds with two runs on a 2-core
machine, which a limit of twenty did not outlast); the rest are a few seconds, so that a batch still finishes in minutes.
A lifecycle case has fair sharing off: like waitForPodsReady it is a setting of the scheduler, and every
setting among a batch's cases is a cluster of its own per implementation (its weights stay, unread).

Quotas are small integers so that a few Workloads contend; the generator never checks its own
output by hand: ``cases.check`` does, and a seed whose case it refuses is a generator bug.
"""

from __future__ import annotations

import random

from harness.agreeing import cases, lifecycles
from scheduler import settings as scheduler_settings

PRIORITIES = (0, 100, 200)
HIERARCHY, FAIR_SHARING = "hierarchy", "fair-sharing"
LIMITS, PODS_READY, CHECKS = "limits", "pods-ready", "checks"
LIFECYCLE_FEATURES = (LIMITS, PODS_READY, CHECKS)
"""Drawn only when required: a case without them is the one its seed always gave."""
FEATURES = (HIERARCHY, FAIR_SHARING, *LIFECYCLE_FEATURES)
"""What `require` may turn on in every case."""


def generate(seed: int, require: frozenset[str] = frozenset()) -> cases.Case:
    """The case of ``seed``: the same seed gives the same case on every machine."""
    unknown = set(require) - set(FEATURES)
    if unknown:
        raise ValueError(f"unknown case feature(s) {sorted(unknown)}: known are {', '.join(FEATURES)}")
    rng = random.Random(seed)
    flavors = tuple(cases.Flavor(name=f"f{i}", nodeLabels={"pool": f"p{i}"}) for i in range(rng.randint(1, 3)))
    resources = ("cpu", "memory") if rng.random() < 0.8 else ("cpu", "memory", "pods")
    cohorts = [f"co{i}" for i in range(rng.randint(1, 3))]
    namespaces = (cases.Namespace(name="ns-a", labels={"team": "a"}), cases.Namespace(name="ns-b", labels={"team": "b"}))
    queues = tuple(_cluster_queue(rng, i, cohorts, flavors, resources) for i in range(rng.randint(2, 6)))
    # LocalQueue names differ between namespaces: Kueue v0.17.0's LocalQueue pending list matches
    # Workloads by queue name only (pkg/visibility/storage/pending_workloads_lq.go), so two
    # same-named LocalQueues of one ClusterQueue would list each other's Workloads.
    local = tuple(cases.LocalQueue(namespace=ns.name, name=f"lq-{ns.name}-{cq.name}", clusterQueue=cq.name)
                  for cq in queues for ns in namespaces)
    priorities = PRIORITIES[:rng.randint(2, 3)]
    counter = iter(range(1000))
    first = tuple(_workload(rng, next(counter), local, priorities[:-1] or priorities, resources)
                  for _ in range(rng.randint(6, 16)))
    preemptors = tuple(_workload(rng, next(counter), local, priorities[1:], resources) for _ in range(rng.randint(1, 5)))
    finished = tuple(sorted(rng.sample([w.name for w in first], k=rng.randint(1, min(3, len(first))))))
    epochs = (cases.Epoch(arrive=first), cases.Epoch(arrive=preemptors), cases.Epoch(finish=finished))
    more = random.Random(f"tree-{seed}")
    tree, queues = _cohort_tree(more, cohorts, queues, flavors, resources, HIERARCHY in require)
    fair, tree, queues = _fair_sharing(more, cohorts, tree, queues, FAIR_SHARING in require)
    case = cases.Case(seed=seed, fairSharing=fair, flavors=flavors, namespaces=namespaces, cohorts=tree,
                      clusterQueues=queues, localQueues=local, epochs=epochs)
    if set(require) & set(LIFECYCLE_FEATURES):
        case = _lifecycle(random.Random(f"lifecycle-{seed}"), case, require)
    return cases.check(case)


def _lifecycle(rng: random.Random, case: cases.Case, require: frozenset[str]) -> cases.Case:
    """The required lifecycle features on ``case``, every draw made whichever are required (so that one
    feature's draws do not depend on another's being on)."""
    names = [w.name for w in case.workloads()]
    limits = {n: rng.randint(45, 60) for n in names if rng.random() < 0.5}
    settings = rng.choice(PODS_READY_SETTINGS)
    ready = {n for n in names if rng.random() < 0.5}
    checks = tuple(lifecycles.AdmissionCheck(name=f"ac{i}") for i in range(rng.randint(1, 2)))
    queue_checks = {}
    for queue in case.clusterQueues:  # 4 queues in 5 have checks, at least one of the case's
        checked = rng.random() < 0.8
        chosen = tuple(c.name for c in checks if rng.random() < 0.7) or (checks[0].name,)
        queue_checks[queue.name] = chosen if checked else ()
    rules = {n: rng.choices(CHECK_RULES, weights=CHECK_RULE_WEIGHTS)[0] for n in names}
    update: dict = {}
    workload_fields: dict[str, dict] = {n: {} for n in names}
    if LIMITS in require:
        for n, seconds in limits.items():
            workload_fields[n]["maximumExecutionTimeSeconds"] = seconds
    if PODS_READY in require:
        update["waitForPodsReady"] = settings
        for n in ready:
            workload_fields[n]["podsReady"] = True
    if CHECKS in require:
        update["admissionChecks"] = checks
        update["clusterQueues"] = tuple(q.model_copy(update={"admissionChecks": queue_checks[q.name]})
                                        for q in case.clusterQueues)
        for n, rule in rules.items():
            workload_fields[n]["checkRule"] = rule
    epochs = tuple(e.model_copy(update={"arrive": tuple(w.model_copy(update=workload_fields[w.name])
                                                        for w in e.arrive)}) for e in case.epochs)
    return case.model_copy(update={**update, "fairSharing": None, "epochs": epochs})


PODS_READY_SETTINGS = (
    lifecycles.WaitForPodsReady(timeoutSeconds=45, backoffBaseSeconds=1, backoffMaxSeconds=2, backoffLimitCount=2),
)
"""The settings a case may take. One: each is a scheduler of its own, a cluster per implementation and batch, and
a second one doubled the family's run on this 2-core machine. Two requeues before the deactivation, so that the
backoff doubles (1 s, then 2 s, the cap). Always a backoffLimitCount: without one a Workload that is never ready
times out again and again, and its epoch never ends."""
CHECK_RULES = ("ready", "ready-after=1s", "ready-after=2s", "retry=1,backoff=1s", "retry=1,backoff=3s",
               "retry=2,backoff=2s", "reject")
CHECK_RULE_WEIGHTS = (5, 1, 1, 1, 1, 1, 2)


def _cohort_tree(rng: random.Random, cohorts: list[str], queues, flavors, resources, always: bool = False):
    """Cohort objects over the case's cohorts, 1-3 levels deep, or none (flat implicit cohorts)."""
    if rng.random() < 0.4 and not always:
        return (), queues
    depth = rng.randint(1, 3)
    parents: dict[str, str | None] = {name: None for name in cohorts}
    inner: list[str] = []
    if depth >= 2:
        inner = ["top"] + ([f"mid{i}" for i in range(rng.randint(1, 2))] if depth == 3 else [])
        parents |= {name: (None if name == "top" else "top") for name in inner}
        below = [n for n in inner if n != "top"] or ["top"]
        for name in cohorts:
            # Now and then a cohort stays a root of its own: two trees side by side.
            parents[name] = rng.choice(below) if rng.random() < 0.85 else None
    tree = tuple(cases.Cohort(name=name, parentName=parent,
                              resourceGroups=_cohort_groups(rng, flavors, resources, parent is not None))
                 for name, parent in parents.items())
    if inner:
        queues = tuple(q.model_copy(update={"cohort": rng.choice(inner)}) if q.cohort and rng.random() < 0.2 else q
                       for q in queues)
    return tree, queues


def _cohort_groups(rng: random.Random, flavors, resources, has_parent: bool) -> tuple[cases.ResourceGroup, ...]:
    """Quota of a Cohort (half of them): lending may exceed nominal there; limits need a parent."""
    if rng.random() < 0.5:
        return ()
    chosen = rng.sample(flavors, k=rng.randint(1, len(flavors)))
    quotas = []
    for flavor in chosen:
        resources_quota = []
        for resource in resources:
            unit = "Gi" if resource == "memory" else ""
            nominal = rng.randint(0, 6)
            borrowing = f"{rng.randint(0, 4)}{unit}" if has_parent and rng.random() < 0.35 else None
            lending = f"{rng.randint(0, nominal + 2)}{unit}" if has_parent and rng.random() < 0.35 else None
            resources_quota.append(cases.Quota(name=resource, nominalQuota=f"{nominal}{unit}",
                                               borrowingLimit=borrowing, lendingLimit=lending))
        quotas.append(cases.FlavorQuotas(name=flavor.name, resources=tuple(resources_quota)))
    return (cases.ResourceGroup(coveredResources=resources, flavors=tuple(quotas)),)


WEIGHTS = (None, "0", "0.5", "1", "2", "3")


def _fair_sharing(rng: random.Random, cohorts: list[str], tree, queues, always: bool = False):
    """Fair sharing on in about a third of the cases, with weights; every queue then in a cohort."""
    if rng.random() >= 0.35 and not always:
        return None, tree, queues
    strategies = rng.choice(scheduler_settings.FAIR_SHARING_STRATEGY_SETS)

    def weight():
        value = rng.choices(WEIGHTS, weights=[4, 1, 1, 1, 2, 1])[0]
        return None if value is None else cases.FairSharing(weight=value)

    queues = tuple(q.model_copy(update={"cohort": q.cohort or rng.choice(cohorts), "fairSharing": weight()})
                   for q in queues)
    tree = tuple(c.model_copy(update={"fairSharing": weight()}) for c in tree)
    return cases.FairSharingConfig(preemptionStrategies=strategies), tree, queues


def _cluster_queue(rng: random.Random, index: int, cohorts: list[str], flavors, resources) -> cases.ClusterQueue:
    cohort = rng.choice(cohorts) if rng.random() < 0.85 else None
    chosen = rng.sample(flavors, k=rng.randint(1, len(flavors)))
    group = cases.ResourceGroup(coveredResources=resources, flavors=tuple(
        cases.FlavorQuotas(name=f.name, resources=tuple(_quota(rng, r, cohort) for r in resources)) for f in chosen))
    selector = rng.choices([{}, {"team": "a"}, None], weights=[8, 3, 1])[0]
    borrow = None
    reclaim = rng.choice(["Never", "LowerPriority", "Any"])
    if reclaim != "Never" and rng.random() < 0.4:
        borrow = cases.BorrowWithinCohort(policy="LowerPriority",
                                          maxPriorityThreshold=rng.choice([None, 0, 100]))
    return cases.ClusterQueue(
        name=f"cq{index}", cohort=cohort,
        queueingStrategy=rng.choice(["StrictFIFO", "BestEffortFIFO"]),
        namespaceSelector=selector,
        preemption=cases.Preemption(
            withinClusterQueue=rng.choice(["Never", "LowerPriority", "LowerOrNewerEqualPriority"]),
            reclaimWithinCohort=reclaim, borrowWithinCohort=borrow),
        flavorFungibility=cases.FlavorFungibility(whenCanBorrow=rng.choice(["MayStopSearch", "TryNextFlavor"]),
                                                  whenCanPreempt=rng.choice(["MayStopSearch", "TryNextFlavor"])),
        resourceGroups=(group,))


def _quota(rng: random.Random, resource: str, cohort: str | None) -> cases.Quota:
    nominal = rng.randint(0, 8)
    unit = "Gi" if resource == "memory" else ""
    borrowing = lending = None
    if cohort and rng.random() < 0.35:
        borrowing = f"{rng.randint(0, 4)}{unit}"
    if cohort and rng.random() < 0.35:
        lending = f"{rng.randint(0, nominal)}{unit}"
    return cases.Quota(name=resource, nominalQuota=f"{nominal}{unit}", borrowingLimit=borrowing, lendingLimit=lending)


def _workload(rng: random.Random, index: int, local, priorities, resources) -> cases.Workload:
    lq = rng.choice(local)
    pod_sets = tuple(
        cases.PodSet(name=f"ps{p}", count=rng.randint(1, 3),
                     requests={"cpu": str(rng.randint(1, 3)), "memory": f"{rng.randint(0, 3)}Gi"})
        for p in range(1 if rng.random() < 0.75 else 2))
    return cases.Workload(name=f"w{index:02d}", namespace=lq.namespace, queueName=lq.name,
                          priority=rng.choice(priorities), podSets=pod_sets)
