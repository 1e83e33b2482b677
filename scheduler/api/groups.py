"""Kueue's API groups and versions, spelled once: the objects and the visibility API (pure constants).

Everything that names `kueue.x-k8s.io/v1beta2` or the visibility group (the scheduler, the harness,
the load users) reads it from here.
"""

GROUP = "kueue.x-k8s.io"
VERSION = "v1beta2"
API_VERSION = f"{GROUP}/{VERSION}"
PATH = f"/apis/{API_VERSION}"
"""REST prefix of the Kueue objects: PATH + /namespaces/{ns}/workloads, PATH + /clusterqueues ..."""

VISIBILITY_GROUP = "visibility.kueue.x-k8s.io"
VISIBILITY_VERSIONS = ("v1beta2", "v1beta1")
"""Served versions, preferred first."""
VISIBILITY_PATH = f"/apis/{VISIBILITY_GROUP}/{VISIBILITY_VERSIONS[0]}"
