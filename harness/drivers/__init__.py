"""Experiments, one driver per folder."""
