"""The estimate fields of a pendingworkloads entry (scheduler.visibility.estimatefields), hand-checked.

T0 = 1,700,000,000 s is 2023-11-14T22:13:20Z.
"""

from __future__ import annotations

import pytest

from scheduler.controller import estimating
from scheduler.core import estimates, positions
from scheduler.visibility import estimatefields

T0 = 1_700_000_000.0
KEY = ("team-a", "w1")
KUEUE_FIELDS = {"metadata", "priority", "localQueueName", "positionInClusterQueue", "positionInLocalQueue"}


@pytest.mark.parametrize(("estimate", "expected"), [
    # a fresh time, 3.7 s after the snapshot: whole seconds as metav1.Time writes them
    (estimates.at(KEY, "simulator", T0 + 3.7, T0),
     {"estimator": "simulator", "estimatedAdmissionTime": "2023-11-14T22:13:23Z",
      "estimateSnapshotTime": "2023-11-14T22:13:20Z", "estimateAgeSeconds": 0}),
    # no time: the reason instead, never both
    (estimates.unknown(KEY, "simulator", estimates.NO_RUNTIME, T0),
     {"estimator": "simulator", "estimateReason": "no runtime declared",
      "estimateSnapshotTime": "2023-11-14T22:13:20Z", "estimateAgeSeconds": 0}),
    # served again 12.5 s after its snapshot (the simulator out of budget): its age says so
    (estimates.at(KEY, "simulator", T0 + 60, T0).served(T0 + 12.5),
     {"estimator": "simulator", "estimatedAdmissionTime": "2023-11-14T22:14:20Z",
      "estimateSnapshotTime": "2023-11-14T22:13:20Z", "estimateAgeSeconds": 12.5}),
    # a qualified time carries its note
    (estimates.at(KEY, "moving-average", T0, T0, "waited longer than the average already"),
     {"estimator": "moving-average", "estimatedAdmissionTime": "2023-11-14T22:13:20Z",
      "estimateNote": "waited longer than the average already",
      "estimateSnapshotTime": "2023-11-14T22:13:20Z", "estimateAgeSeconds": 0}),
    # the last refresh did not see it
    (None, {"estimator": "rate", "estimateReason": "not estimated yet"}),
])
def test_fields_of_an_estimate(estimate, expected):
    assert estimatefields.fields_of(estimate, "rate") == expected


def item(name: str, position: int) -> positions.PendingWorkloadItem:
    return positions.PendingWorkloadItem(name, "team-a", "2023-11-14T22:00:00Z", 0, "lq", position, position)


def test_entries_are_kueues_alone_without_an_estimator():
    (entry,) = estimatefields.entries([item("w1", 0)], None)
    assert set(entry) == KUEUE_FIELDS and entry == item("w1", 0).to_dict()


def test_entries_gain_the_fields_of_the_board_with_one():
    board = estimating.Board("simulator", 3, {KEY: estimates.at(KEY, "simulator", T0 + 3, T0)})
    first, second = estimatefields.entries([item("w1", 0), item("w2", 1)], board)
    assert first == {**item("w1", 0).to_dict(), "estimator": "simulator",
                     "estimatedAdmissionTime": "2023-11-14T22:13:23Z",
                     "estimateSnapshotTime": "2023-11-14T22:13:20Z", "estimateAgeSeconds": 0}
    assert second == {**item("w2", 1).to_dict(), "estimator": "simulator", "estimateReason": "not estimated yet"}
