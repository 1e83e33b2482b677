"""Reading a Kubernetes object's status conditions (metav1.Condition: type, status "True"/"False"/"Unknown")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def condition(obj: Mapping[str, Any], kind: str) -> dict | None:
    """The object's condition of this type, or None when it has none."""
    for c in (obj.get("status") or {}).get("conditions") or ():
        if c.get("type") == kind:
            return c
    return None


def is_true(obj: Mapping[str, Any], kind: str) -> bool:
    """Whether the object has this condition with status "True"."""
    found = condition(obj, kind)
    return found is not None and found.get("status") == "True"
