"""The cycle loop's pace after cycles that admit nothing, as Kueue's scheduler loop paces itself."""

from scheduler.controller.controlling import ControllerSettings, next_slow_down


def test_slow_down_starts_at_the_first_bound_and_doubles_up_to_the_cap():
    bounds = ControllerSettings().slow_down_seconds
    waits, wait = [], 0.0
    for _ in range(6):
        wait = next_slow_down(wait, bounds)
        waits.append(round(wait, 6))
    assert waits == [0.001, 0.002, 0.004, 0.008, 0.01, 0.01]


def test_an_admission_starts_the_sequence_over():
    bounds = (0.001, 0.010)
    assert next_slow_down(0.0, bounds) == 0.001  # the loop resets to 0 after a cycle that admitted
