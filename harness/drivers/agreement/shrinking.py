"""Reducing a disagreeing case to a minimal one that still disagrees the same way.

Candidates are one-step reductions, largest cuts first (half of the Workloads, an epoch, a
ClusterQueue, a flavor, a namespace, then single Workloads and pod sets); each is validated, and
invalid ones are skipped. A round tries every candidate at once (side by side on one cluster per
implementation, so a round costs two cluster runs, not one per candidate) and keeps the first, in
that order, that still disagrees. Ends when no candidate does, or after ``max_rounds``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from harness.agreeing import cases

StillFails = Callable[[list[cases.Case]], list[bool]]
Verdicts = Callable[[list[tuple[int, cases.Case]]], list[bool]]
"""(owner, candidate) pairs -> whether each still disagrees as its owner's original did."""


def shrink(case: cases.Case, still_fails: StillFails, max_rounds: int = 12,
           say: Callable[[str], None] = lambda line: None) -> cases.Case:
    for round_ in range(max_rounds):
        options = list(candidates(case))
        if not options:
            break
        verdicts = still_fails(options)
        chosen = next((option for option, fails in zip(options, verdicts, strict=True) if fails), None)
        if chosen is None:
            break
        say(f"round {round_ + 1}: {case.size()} -> {chosen.size()} (workloads, queues, flavors, epochs)")
        case = chosen
    return case


def shrink_many(originals: list[cases.Case], verdicts: Verdicts, max_rounds: int = 12,
                say: Callable[[str], None] = lambda line: None) -> list[cases.Case]:
    """``shrink`` for several cases at once: each round puts every case's candidates into one
    batch, so shrinking N cases costs the rounds of the slowest, not N times as many."""
    current = list(originals)
    active = set(range(len(current)))
    for round_ in range(max_rounds):
        options = [(owner, option) for owner in sorted(active) for option in candidates(current[owner])]
        if not options:
            break
        results = verdicts(options)
        chosen: dict[int, cases.Case] = {}
        for (owner, option), fails in zip(options, results, strict=True):
            if fails and owner not in chosen:
                chosen[owner] = option
        for owner in active - chosen.keys():
            say(f"round {round_ + 1}: case {owner} is minimal at {current[owner].size()}")
        active &= chosen.keys()
        for owner, option in chosen.items():
            say(f"round {round_ + 1}: case {owner} {current[owner].size()} -> {option.size()}")
            current[owner] = option
        if not active:
            break
    return current


def candidates(case: cases.Case) -> Iterator[cases.Case]:
    """Every valid one-step reduction, largest cut first, each strictly smaller."""
    names = [w.name for w in case.workloads()]
    seen: set[str] = set()
    for cut in (_halves(names), _epochs(case), _queues(case), _flavors(case), _namespaces(case),
                ([n] for n in names), _pod_sets(case)):
        for reduced in cut:
            option = reduced if isinstance(reduced, cases.Case) else _without_workloads(case, set(reduced))
            if option is None:
                continue
            key = cases.dump(option)
            if key in seen:
                continue
            seen.add(key)
            try:
                yield cases.check(option)
            except cases.CaseError:
                continue


def _halves(names: list[str]) -> Iterator[list[str]]:
    size = len(names) // 2
    while size >= 2:
        for start in range(0, len(names), size):
            yield names[start:start + size]
        size //= 2


def _without_workloads(case: cases.Case, gone: set[str]) -> cases.Case | None:
    epochs = tuple(cases.Epoch(arrive=tuple(w for w in e.arrive if w.name not in gone),
                               finish=tuple(n for n in e.finish if n not in gone)) for e in case.epochs)
    epochs = _trim(epochs)
    if not epochs or not epochs[0].arrive:
        return None
    return case.model_copy(update={"epochs": epochs})


def _trim(epochs: tuple[cases.Epoch, ...]) -> tuple[cases.Epoch, ...]:
    """Empty epochs go: they decide nothing."""
    return tuple(e for e in epochs if e.arrive or e.finish)


def _epochs(case: cases.Case) -> Iterator[cases.Case]:
    for i in range(1, len(case.epochs)):
        gone = {w.name for w in case.epochs[i].arrive}
        kept = tuple(cases.Epoch(arrive=e.arrive, finish=tuple(n for n in e.finish if n not in gone))
                     for j, e in enumerate(case.epochs) if j != i)
        yield case.model_copy(update={"epochs": _trim(kept)})


def _queues(case: cases.Case) -> Iterator[cases.Case]:
    for cq in case.clusterQueues:
        local = {lq.name for lq in case.localQueues if lq.clusterQueue == cq.name}
        gone = {w.name for w in case.workloads() if w.queueName in local}
        reduced = _without_workloads(case, gone)
        if reduced is None:
            continue
        yield reduced.model_copy(update={
            "clusterQueues": tuple(q for q in case.clusterQueues if q.name != cq.name),
            "localQueues": tuple(lq for lq in case.localQueues if lq.clusterQueue != cq.name)})


def _flavors(case: cases.Case) -> Iterator[cases.Case]:
    if len(case.flavors) < 2:
        return
    for flavor in case.flavors:
        queues = []
        for cq in case.clusterQueues:
            groups = tuple(g.model_copy(update={"flavors": tuple(f for f in g.flavors if f.name != flavor.name)})
                           for g in cq.resourceGroups)
            queues.append(cq.model_copy(update={"resourceGroups": tuple(g for g in groups if g.flavors)}))
        if any(not cq.resourceGroups for cq in queues):
            continue
        yield case.model_copy(update={"flavors": tuple(f for f in case.flavors if f.name != flavor.name),
                                      "clusterQueues": tuple(queues)})


def _namespaces(case: cases.Case) -> Iterator[cases.Case]:
    if len(case.namespaces) < 2:
        return
    for ns in case.namespaces:
        reduced = _without_workloads(case, {w.name for w in case.workloads() if w.namespace == ns.name})
        if reduced is None:
            continue
        yield reduced.model_copy(update={
            "namespaces": tuple(n for n in case.namespaces if n.name != ns.name),
            "localQueues": tuple(lq for lq in case.localQueues if lq.namespace != ns.name)})


def _pod_sets(case: cases.Case) -> Iterator[cases.Case]:
    for e, epoch in enumerate(case.epochs):
        for w, wl in enumerate(epoch.arrive):
            simpler = []
            if len(wl.podSets) > 1:
                simpler += [wl.podSets[:1], wl.podSets[1:]]
            if any(ps.count > 1 for ps in wl.podSets):
                simpler.append(tuple(ps.model_copy(update={"count": 1}) for ps in wl.podSets))
            for pod_sets in simpler:
                arrive = epoch.arrive[:w] + (wl.model_copy(update={"podSets": tuple(pod_sets)}),) + epoch.arrive[w + 1:]
                epochs = case.epochs[:e] + (epoch.model_copy(update={"arrive": arrive}),) + case.epochs[e + 1:]
                yield case.model_copy(update={"epochs": epochs})
