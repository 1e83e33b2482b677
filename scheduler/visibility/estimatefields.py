"""The expected-admission-time fields of a pendingworkloads entry (pure).

Added only when the scheduler runs an estimator (``estimator`` setting): an entry is otherwise Kueue's
``PendingWorkload`` exactly. A Kueue client (kubectl kueue, client-go's typed visibility client) decodes
entries into Kueue's Go types, which drop fields they do not know, so the added ones cost it nothing.

- ``estimator``: the estimator's name (scheduler.core.estimators);
- ``estimatedAdmissionTime``: when quota is expected to be reserved (RFC 3339, whole seconds as metav1.Time),
  or, when there is none, ``estimateReason`` (scheduler.core.estimates' reasons, or ``not estimated yet``);
- ``estimateNote``: what qualifies the time, when something does;
- ``estimateSnapshotTime``: the time of the snapshot the estimate was computed from (now minus it is its age);
- ``estimateAgeSeconds``: its age at the refresh that served it: 0 for a fresh estimate, more for one the
  simulator served again when its budget ran out before reaching the Workload.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from scheduler.controller import estimating
from scheduler.core.estimates import Estimate
from scheduler.core.positions import PendingWorkloadItem, rfc3339


def fields_of(estimate: Estimate | None, estimator: str) -> dict:
    """The fields an entry gains for its Workload's estimate (None: the last refresh has none for it)."""
    if estimate is None:
        return {"estimator": estimator, "estimateReason": estimating.NOT_ESTIMATED}
    fields: dict = {"estimator": estimate.estimator}
    if estimate.admission_at is not None:
        fields["estimatedAdmissionTime"] = rfc3339(estimate.admission_at)
    else:
        fields["estimateReason"] = estimate.reason
    if estimate.note:
        fields["estimateNote"] = estimate.note
    fields["estimateSnapshotTime"] = rfc3339(estimate.computed_at)
    fields["estimateAgeSeconds"] = round(estimate.age, 3)
    return fields


def entries(items: Iterable[PendingWorkloadItem], board: estimating.Board | None) -> Iterator[dict]:
    """The entries of a page: Kueue's alone without a board, with the estimate fields with one."""
    if board is None:
        return (item.to_dict() for item in items)
    found = board.estimates.get
    return (item.to_dict() | fields_of(found((item.namespace, item.name)), board.estimator) for item in items)
