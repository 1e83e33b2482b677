"""The controller's keyed work queue: one wait per key, never one key in two workers, nothing lost."""

from __future__ import annotations

import asyncio

from scheduler.controller import workqueues


def run(coroutine):
    return asyncio.run(coroutine)


def test_a_key_added_twice_while_waiting_is_handled_once():
    async def scenario():
        queue = workqueues.WorkQueue()
        for key in ("a", "b", "a"):
            queue.add(key)
        assert len(queue) == 2
        first, second = await queue.get(), await queue.get()
        return first, second, len(queue)
    assert run(scenario()) == ("a", "b", 0)


def test_a_key_added_while_handled_comes_back_after_done_not_before():
    async def scenario():
        queue = workqueues.WorkQueue()
        queue.add("a")
        key = await queue.get()
        queue.add("a")  # changed while a worker has it
        assert len(queue) == 0, "a second worker must not take it meanwhile"
        queue.done(key)
        assert len(queue) == 1
        return await queue.get()
    assert run(scenario()) == "a"


def test_get_waits_for_an_add_and_add_after_adds_later():
    async def scenario():
        queue = workqueues.WorkQueue()
        waiter = asyncio.create_task(queue.get())
        await asyncio.sleep(0)
        assert not waiter.done()
        queue.add_after("late", 0.01)
        key = await asyncio.wait_for(waiter, timeout=5)
        queue.add_after("never", 60)
        queue.close()  # a cancelled retry never fires
        return key, len(queue)
    assert run(scenario()) == ("late", 0)
