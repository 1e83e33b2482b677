"""Builds and locates the Go binaries kqbench runs: kube-apiserver & co, etcd, kwok, Kueue."""
