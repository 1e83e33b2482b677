"""What a batch of cases asks of its scheduler, as the `scheduler:` fields of a scenario (pure).

Fair sharing and waitForPodsReady are settings of the scheduler, not of a queue: cases that differ in
them never share a scheduler (``setting_of``). Both implementations get one section and each reads its
own fields: the reference scheduler decides as the run's Kueue version does (the Kueue defaults that
version ships) and holds an evicted Workload's quota as Kueue holds a bare Workload's.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.agreeing import cases
from harness.implementations import names

IMPLEMENTATIONS = (names.REFERENCE, names.KUEUE)
CYCLE_LOG_LEVEL = 3
"""Kueue's --zap-log-level from which its scheduler logs every cycle; the reference scheduler then logs its own."""
CLIENT_QPS, CLIENT_BURST = 300.0, 500
"""Both schedulers' client limits (Kueue v0.19's defaults): the tester measures decisions, not
throttling, and a backlog of status writes only slows settling."""


@dataclass(frozen=True)
class KueueOptions:
    """Which Kueue runs (a version of versions.toml; None: the default) and how much it logs (its
    --zap-log-level; 3 and up log every scheduling cycle, for reading why it decided)."""

    version: str | None = None
    log_level: int | None = None


def fair_sharing_of(case: cases.Case) -> tuple[str, ...] | None:
    """The scheduler's fair-sharing strategies a case runs with (None: fair sharing off)."""
    return None if case.fairSharing is None else tuple(case.fairSharing.preemptionStrategies)


SchedulerSetting = tuple[tuple[str, ...] | None, "tuple[int, int, int, int | None] | None"]


def setting_of(case: cases.Case) -> SchedulerSetting:
    """What a case needs of the scheduler's configuration: (fair_sharing_of, its waitForPodsReady's key);
    cases that differ in it never share a scheduler."""
    return fair_sharing_of(case), (None if case.waitForPodsReady is None else case.waitForPodsReady.key())


def section_fields(case: cases.Case, implementation: str, kueue: KueueOptions) -> dict:
    """The `scheduler:` fields that run ``case`` (and every case of its setting) on ``implementation``;
    at Kueue's cycle log level the reference scheduler logs its own cycles too."""
    fields = dict(implementation=implementation, qps=CLIENT_QPS, burst=CLIENT_BURST, kueue_version=kueue.version,
                  kueue_log_level=kueue.log_level, hold_evicted_quota=True,
                  log_cycles=kueue.log_level is not None and kueue.log_level >= CYCLE_LOG_LEVEL)
    if (fair_sharing := fair_sharing_of(case)) is not None:
        fields |= dict(fair_sharing=True, fair_sharing_strategies=",".join(fair_sharing))
    if (pods_ready := case.waitForPodsReady) is not None:
        fields |= dict(wait_for_pods_ready=True, wait_for_pods_ready_timeout_seconds=pods_ready.timeoutSeconds,
                       wait_for_pods_ready_block_admission=False,
                       wait_for_pods_ready_backoff_base_seconds=pods_ready.backoffBaseSeconds,
                       wait_for_pods_ready_backoff_max_seconds=pods_ready.backoffMaxSeconds,
                       wait_for_pods_ready_backoff_limit_count=pods_ready.backoffLimitCount)
    return fields
