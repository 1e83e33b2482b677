"""The Kubernetes API's patch content types, spelled once (pure constants): the scheduler, the harness
and the load users send them."""

APPLY_PATCH = "application/apply-patch+yaml"
"""Server-side apply: the body (JSON is YAML) is the field manager's whole intent, and fields it owned
and left out are removed."""
MERGE_PATCH = "application/merge-patch+json"
"""JSON merge patch (RFC 7386): the body's keys replace, null removes."""
