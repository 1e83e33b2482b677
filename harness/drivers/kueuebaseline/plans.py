"""The labels kueue-baseline puts on its Workloads (the schedule itself is harness.load.arrivals)."""

CLASS_LABEL = "kqbench.io/kueue-baseline-class"
"""Kueue labels its workloads `kueue.x-k8s.io/performance-scheduler-class`; ours say the same in our domain."""
RUNTIME_LABEL = "kqbench.io/kueue-baseline-runtime-ms"
