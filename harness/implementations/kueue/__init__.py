"""Real Kueue (built from its Go module) as the scheduler under test, started as a local process."""
