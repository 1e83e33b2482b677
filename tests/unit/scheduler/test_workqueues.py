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


def test_backoff_doubles_from_the_first_wait_up_to_the_most():
    assert [workqueues.backoff(n, 0.005, 0.03) for n in (1, 2, 3, 4, 5)] == [0.005, 0.01, 0.02, 0.03, 0.03]


def test_workers_handle_every_key_survive_a_failing_one_and_stop_with_the_stop_event():
    async def main() -> tuple[list, bool]:
        queue, stop, handled = workqueues.WorkQueue(), asyncio.Event(), []
        beside_cancelled = asyncio.Event()

        async def handle(key) -> None:
            if key == "bad":
                raise RuntimeError("surprise")
            handled.append(key)
            if len(handled) == 2:
                stop.set()

        async def beside() -> None:
            try:
                await asyncio.sleep(60)
            finally:
                beside_cancelled.set()
        for key in ("a", "bad", "b"):
            queue.add(key)
        await asyncio.wait_for(workqueues.run_workers(stop, queue, handle, 1, "key", beside()), timeout=5)
        return handled, beside_cancelled.is_set()

    handled, cancelled = asyncio.run(main())
    assert handled == ["a", "b"] and cancelled
