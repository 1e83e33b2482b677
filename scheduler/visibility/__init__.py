"""Kueue's visibility API (visibility.kueue.x-k8s.io) served as an aggregated API over TLS."""
