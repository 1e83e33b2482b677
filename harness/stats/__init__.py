"""Statistics for the gate (pure: numbers in, numbers out; numpy, scipy, ruptures).

- `intervals`: 95% bootstrap intervals of a summary's estimates (over requests, over repeats).
- `differences`: whether two estimates with intervals differ significantly, and the change's interval.
- `changepoints`: change points in a nightly series (ruptures' PELT).
"""
