"""Faults injected during a phase, and how long the system took to recover from each.

- `recovering`: the record of one fault and the recovery clock over probes (pure: clock injected);
- `injecting`: what is done to a process (kill -9, SIGTERM, SIGSTOP/SIGCONT; start the same command again);
- `running`: the injector the runner starts with a phase that names faults, and stops when it ends.
"""
