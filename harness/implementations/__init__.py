"""Scheduler implementations kqbench can run: the reference scheduler and real Kueue."""
