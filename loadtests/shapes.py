"""Load shapes as pure functions of elapsed time: constant, steps, spike.

Users pace themselves (each has a per-second rate), so the number of users is the request rate
knob: a constant shape is a constant rate. The Locust adapter (`engine.ScheduledShape`) only asks
`tick(shape, elapsed)`; keeping the arithmetic here lets tests walk a shape without a clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from loadtests.settings import SettingsError, ShapeSettings

KINDS = ("constant", "steps", "spike")


@dataclass(frozen=True, slots=True)
class Tick:
    users: int
    spawn_rate: float


def check(shape: ShapeSettings) -> ShapeSettings:
    if shape.kind not in KINDS:
        raise SettingsError(f"shape {shape.kind!r} is unknown: use one of {', '.join(KINDS)}")
    if shape.spawn_rate <= 0:
        raise SettingsError("shape spawn_rate must be > 0 users/s")
    if shape.kind == "steps" and (shape.steps < 1 or shape.step_seconds <= 0):
        raise SettingsError("steps shape needs steps >= 1 and step_seconds > 0")
    if shape.kind == "spike" and not (0 <= shape.spike_at and shape.spike_seconds > 0):
        raise SettingsError("spike shape needs spike_at >= 0 and spike_seconds > 0")
    return shape


def tick(shape: ShapeSettings, elapsed: float) -> Tick | None:
    """Users wanted `elapsed` seconds into the run, or None when the shape is over."""
    if shape.kind == "steps":
        step = int(elapsed // shape.step_seconds)
        if step >= shape.steps:
            return None
        return Tick(shape.users + step * shape.step_users, shape.spawn_rate)
    if elapsed >= shape.duration:
        return None
    if shape.kind == "spike" and shape.spike_at <= elapsed < shape.spike_at + shape.spike_seconds:
        # A spike arrives at once: spawn everyone within a second.
        return Tick(shape.spike_users, max(shape.spawn_rate, float(shape.spike_users)))
    return Tick(shape.users, shape.spawn_rate)


def duration(shape: ShapeSettings) -> float:
    """Seconds the shape lasts."""
    return shape.steps * shape.step_seconds if shape.kind == "steps" else shape.duration
