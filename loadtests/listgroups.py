"""What a harness and the ModeLister user agree on, importable without Locust (pure).

Importing Locust monkey-patches the process with gevent, which breaks a harness's threads and
asyncio; so the label, the mode rules and the locustfile path live here, apart from the user class.
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path

GROUP_LABEL = "kqbench.dev/list-group"
"""Namespaces populated for ModeListers carry this label; its value is the group's name."""
LOCUSTFILE = str(Path(__file__).with_name("users") / "modelisting.py")
"""The locustfile with ModeLister (give it to loadtests.settings.RunPlan)."""
USER_CLASS = "ModeLister"


def group_selector(group: str) -> str:
    """URL-encoded labelSelector of a group's namespaces."""
    return urllib.parse.quote(f"{GROUP_LABEL}={group}")


def member(names: list[str], index: int) -> str | None:
    """The namespace client `index` lists (round robin over the sorted group); None for an empty group."""
    ordered = sorted(names)
    return ordered[index % len(ordered)] if ordered else None


def mode_of(list_modes: tuple[str, ...], watch_modes: tuple[str, ...]) -> str:
    """The one mode a ModeLister runs: the first list mode, else watch-list."""
    if list_modes:
        return list_modes[0]
    if "watchlist" in watch_modes:
        return "watchlist"
    raise ValueError("ModeLister needs list_modes (rv0|consistent|paginated) or watch_modes ('watchlist',)")
