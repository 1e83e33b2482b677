"""Load shapes walked with explicit elapsed times (no clock)."""

from __future__ import annotations

import pytest

from loadtests import shapes
from loadtests.settings import SettingsError, ShapeSettings


@pytest.mark.parametrize("shape, elapsed, users", [
    (ShapeSettings(kind="constant", users=7, duration=60), 0, 7),
    (ShapeSettings(kind="constant", users=7, duration=60), 59.9, 7),
    (ShapeSettings(kind="constant", users=7, duration=60), 60, None),
    (ShapeSettings(kind="steps", users=5, step_users=10, step_seconds=30, steps=3), 0, 5),
    (ShapeSettings(kind="steps", users=5, step_users=10, step_seconds=30, steps=3), 29.9, 5),
    (ShapeSettings(kind="steps", users=5, step_users=10, step_seconds=30, steps=3), 30, 15),
    (ShapeSettings(kind="steps", users=5, step_users=10, step_seconds=30, steps=3), 89.9, 25),
    (ShapeSettings(kind="steps", users=5, step_users=10, step_seconds=30, steps=3), 90, None),
    (ShapeSettings(kind="spike", users=4, spike_users=40, spike_at=10, spike_seconds=5, duration=30), 9.9, 4),
    (ShapeSettings(kind="spike", users=4, spike_users=40, spike_at=10, spike_seconds=5, duration=30), 10, 40),
    (ShapeSettings(kind="spike", users=4, spike_users=40, spike_at=10, spike_seconds=5, duration=30), 15, 4),
    (ShapeSettings(kind="spike", users=4, spike_users=40, spike_at=10, spike_seconds=5, duration=30), 30, None),
])
def test_users_over_time(shape, elapsed, users):
    tick = shapes.tick(shapes.check(shape), elapsed)
    assert (tick.users if tick else None) == users


def test_a_spike_spawns_within_a_second():
    shape = ShapeSettings(kind="spike", spawn_rate=2, spike_users=60, spike_at=0, spike_seconds=5)
    assert shapes.tick(shape, 1).spawn_rate >= 60


@pytest.mark.parametrize("shape, duration", [
    (ShapeSettings(kind="constant", duration=45), 45),
    (ShapeSettings(kind="steps", step_seconds=20, steps=4), 80),
    (ShapeSettings(kind="spike", duration=90), 90),
])
def test_duration(shape, duration):
    assert shapes.duration(shape) == duration


@pytest.mark.parametrize("shape, message", [
    (ShapeSettings(kind="ramp"), "unknown"),
    (ShapeSettings(spawn_rate=0), "spawn_rate"),
    (ShapeSettings(kind="steps", steps=0), "steps"),
    (ShapeSettings(kind="spike", spike_seconds=0), "spike"),
])
def test_bad_shapes_are_refused(shape, message):
    with pytest.raises(SettingsError, match=message):
        shapes.check(shape)
