"""The job reconciler decides every known Job again each resync period, so that a decision missed
(a lost event) costs at most that long; nothing is queued before the period or after stop."""

from __future__ import annotations

import asyncio

from scheduler.controller import jobreconciling, metering
from tests.unit.scheduler.test_core_jobs import JobBuilder


def test_every_known_job_is_queued_again_each_resync_period_until_stop():
    async def scenario():
        reconciler = jobreconciling.JobReconciler(
            client=None, flavors=dict, metrics=metering.SchedulerMetrics(),
            settings=jobreconciling.JobSettings(resync_seconds=1.0))
        for name in ("a", "b"):
            reconciler._on_event("ADDED", JobBuilder(name).obj())
        for _ in range(2):  # what the events queued is taken and done with
            reconciler.queue.done(await reconciler.queue.get())
        stop = asyncio.Event()
        resync = asyncio.create_task(reconciler._resync(stop))
        await asyncio.sleep(0.1)
        before = len(reconciler.queue)
        await asyncio.sleep(1.4)
        after = len(reconciler.queue)
        stop.set()
        await asyncio.wait_for(resync, timeout=1.0)
        return before, after

    before, after = asyncio.run(scenario())
    assert (before, after) == (0, 2)
