"""A run folder's store manifest: every file of the folder with its size, sha256 and where its bytes live.

Pure: parsing, checking and building manifests; no file or network I/O (storing.py does that). The
manifest is committed beside the run, so that git keeps only what the READMEs render while the bytes of
every other file live in the results store (named by sha256) or in git history (commit and path).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from harness.errors import KqbenchError

FILE_NAME = "store-manifest.json"
SCHEMA_VERSION = 1
"""store-manifest.json format; readers refuse newer ones. 1: first format."""

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


class ManifestError(KqbenchError):
    """A manifest that cannot be read or names something it must not; the message says which file and what to do."""


@dataclass(frozen=True, slots=True)
class GitPlace:
    """Where a file's bytes are in git history: `git show COMMIT:PATH` gives them (PATH from the repository's top)."""

    commit: str
    path: str


@dataclass(frozen=True, slots=True)
class Entry:
    """One file of the run folder; `path` is relative to the folder, with forward slashes."""

    path: str
    size: int
    sha256: str
    in_store: bool = True
    """The bytes were pushed to the results store (under their sha256)."""
    git: GitPlace | None = None
    """The bytes are also (or only) in git history here."""


@dataclass(frozen=True, slots=True)
class Manifest:
    entries: tuple[Entry, ...] = ()
    store: str = ""
    """The store address the folder was last pushed to (informational: pull asks the configured store)."""
    schema_version: int = SCHEMA_VERSION
    by_path: dict[str, Entry] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        seen: dict[str, Entry] = {}
        for entry in self.entries:
            if entry.path in seen:
                raise ManifestError(f"names {entry.path} twice: keep one entry (push the folder again to rebuild it)")
            seen[entry.path] = entry
        object.__setattr__(self, "by_path", seen)

    def total_bytes(self) -> int:
        return sum(e.size for e in self.entries)


def merged(old: Manifest, new_entries: Iterable[Entry], store: str) -> Manifest:
    """The old manifest with new_entries replacing same-path ones. For the same bytes, every place known stays
    known (in the store, in git history), so that a file taken out of the tree stays restorable."""
    entries = dict(old.by_path)
    for entry in new_entries:
        before = entries.get(entry.path)
        if before is not None and before.sha256 == entry.sha256:
            entry = Entry(entry.path, entry.size, entry.sha256, entry.in_store or before.in_store, entry.git or before.git)
        entries[entry.path] = entry
    return Manifest(tuple(entries[p] for p in sorted(entries)), store)


def to_json(manifest: Manifest) -> str:
    files = []
    for e in manifest.entries:
        row: dict = {"path": e.path, "size": e.size, "sha256": e.sha256, "in_store": e.in_store}
        if e.git is not None:
            row["git"] = {"commit": e.git.commit, "path": e.git.path}
        files.append(row)
    document = {"schema_version": manifest.schema_version, "store": manifest.store, "files": files}
    return json.dumps(document, indent=1) + "\n"


def from_json(text: str, name: str = FILE_NAME) -> Manifest:
    """Parse a manifest; every problem is one ManifestError naming the file and what is wrong."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ManifestError(f"{name}: not JSON ({error.msg} at line {error.lineno}): restore it from git") from None
    if not isinstance(document, dict) or not isinstance(document.get("files"), list):
        raise ManifestError(f"{name}: no `files` list: restore it from git or push the folder again")
    version = document.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ManifestError(f"{name}: schema_version {version!r} is newer than this kqbench reads ({SCHEMA_VERSION}): "
                            "update kqbench")
    entries = []
    for index, row in enumerate(document["files"]):
        entries.append(_entry(row, f"{name}: files[{index}]"))
    try:
        return Manifest(tuple(entries), str(document.get("store", "")), version)
    except ManifestError as error:
        raise ManifestError(f"{name}: {error}") from None


def _entry(row: object, where: str) -> Entry:
    if not isinstance(row, dict):
        raise ManifestError(f"{where}: not an object")
    path, size, sha = row.get("path"), row.get("size"), row.get("sha256")
    if not isinstance(path, str) or not path or path.startswith("/") or ".." in path.split("/"):
        raise ManifestError(f"{where}: path {path!r} is not a relative path inside the run folder")
    if not isinstance(size, int) or size < 0:
        raise ManifestError(f"{where} ({path}): size {size!r} is not a byte count")
    if not isinstance(sha, str) or not _SHA256.match(sha):
        raise ManifestError(f"{where} ({path}): sha256 {sha!r} is not 64 lowercase hex digits")
    git = row.get("git")
    place = None
    if git is not None:
        if not isinstance(git, dict) or not _COMMIT.match(str(git.get("commit", ""))) or not git.get("path"):
            raise ManifestError(f"{where} ({path}): git {git!r} needs a 40-digit commit and a path")
        place = GitPlace(git["commit"], git["path"])
    in_store = bool(row.get("in_store", True))
    if not in_store and place is None:
        raise ManifestError(f"{where} ({path}): neither in the store nor in git history: push the folder again")
    return Entry(path, size, sha, in_store, place)
