"""The capacity search: raise one load axis step by step until a break condition holds.

- `searching`: which load to try next (geometric steps, then bisection), pure.
- `conditions`: the break conditions, their thresholds and their evaluation, pure.
"""
