"""What a table builder says when a file its spec names is not here."""

from __future__ import annotations

from pathlib import Path

from harness.errors import KqbenchError
from harness.results import manifests


def missing(path: Path, why: str = "") -> KqbenchError:
    """A file a block reads is absent: raw data may be in the results store, named by the run's manifest."""
    hint = (f"; its run has a {manifests.FILE_NAME}: `kqbench results pull {path}` brings it back from the store"
            if any((folder / manifests.FILE_NAME).is_file() for folder in Path(path).parents) else "")
    return KqbenchError(f"{path} does not exist{f' ({why})' if why else ''}{hint}")
