"""The Kubernetes-facing API of the reference scheduler: Kueue-compatible CRDs and visibility types."""
