"""Cluster backends (kwok, kind, existing): bring a control plane up, describe it, tear it down."""
