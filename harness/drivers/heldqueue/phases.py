"""The held-queue driver's phase: N pending Workloads held by a zero-quota ClusterQueue, read, then admitted."""

from __future__ import annotations

from typing import Literal

from pydantic import NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt

from harness.scenarios import base

KIND = "held-queue"


class HeldQueuePhase(base.Model):
    """Fill the scenario's first ClusterQueue (zero quota) with `workloads` pending one-CPU Workloads spread
    over its LocalQueues; wait until the scheduler has processed every one; read pages of its visibility API
    through kube-apiserver idle, under churn and beside the proxy ceiling; then raise the quota and count
    admissions. Every wait is bounded; a bound reached is recorded, not a failure."""

    kind: Literal["held-queue"] = KIND
    workloads: PositiveInt = 20_000
    """Pending Workloads, one CPU each, LocalQueue k's at priority k mod 7 (so that order is not arrival order)."""
    create: Literal["bulk", "posts"] = "bulk"
    """bulk: written straight into etcd while kube-apiserver runs (harness.workloads.bulkloading), so the
    scheduler takes them in as watch events without N admission chains in the window; posts: concurrent
    POSTs through kube-apiserver."""
    process_seconds: PositiveFloat = 300.0
    """Bound on "every Workload processed" from the fill's start: the scheduler's pending gauge at N and, for
    a Kueue that writes a Pending condition to each Workload it finds (before v0.18), that many status writes."""
    idle_seconds: NonNegativeFloat = 10.0
    """Cores each process uses once every Workload is processed and nothing is asked (catching up shows here)."""
    readers: NonNegativeInt = 50
    """Readers of one page each, back to back, in every read arm; 0 skips the reads."""
    read_seconds: NonNegativeFloat = 20.0
    """Each read arm (idle queue, under churn, proxy ceiling); 0 skips the reads."""
    page_limit: PositiveInt = 100
    """Items per page; the page read starts in the middle of the queue (offset N/2)."""
    churn_per_second: PositiveFloat = 25.0
    """Create + delete pairs per second in the churn arm: the queue's membership changes many times a second,
    so no cached page survives."""
    admit_seconds: NonNegativeFloat = 60.0
    """Bound on the admission window once the quota is raised to every Workload; 0 skips admissions."""


PHASES = (HeldQueuePhase,)
