"""Simulated nodes: pool specs (pure) and creating them fast against a real apiserver."""
