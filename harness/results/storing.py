"""Run folders to and from the results store: push (record and upload), pull (restore, byte-identical),
verify, and recording where old files are in git history.

Every file that comes back is checked against the sha256 its manifest names before it replaces anything;
a push writes its manifest last, so a push that fails leaves the run folder as it was.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import KqbenchError
from harness.results import manifests, stores

Progress = Callable[[str, str], None]
CHUNK = 1 << 20


def quiet(topic: str, detail: str) -> None:
    return None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def folder_files(folder: Path) -> list[Path]:
    """Every regular file under folder but its manifest, sorted (symlinks and lock files are not data)."""
    return sorted(p for p in folder.rglob("*")
                  if p.is_file() and not p.is_symlink() and p.name != manifests.FILE_NAME and p.suffix != ".lock")


def read_manifest(folder: Path) -> manifests.Manifest:
    """folder's manifest, or an empty one when it has none yet."""
    path = folder / manifests.FILE_NAME
    if not path.is_file():
        return manifests.Manifest()
    return manifests.from_json(path.read_text(), str(path))


def write_manifest(folder: Path, manifest: manifests.Manifest) -> Path:
    path = folder / manifests.FILE_NAME
    _atomic_write(path, manifests.to_json(manifest).encode())
    return path


def _atomic_write(path: Path, data: bytes) -> None:
    with tempfile.NamedTemporaryFile(dir=path.parent, delete=False, prefix=f".{path.name}.") as handle:
        handle.write(data)
    os.replace(handle.name, path)


@dataclass(slots=True)
class Pushed:
    manifest: Path
    files: int
    bytes: int
    new_objects: int
    new_bytes: int


def push(folder: Path, store: stores.Store, progress: Progress = quiet) -> Pushed:
    """Upload every file of folder that the store lacks, then record all of them in folder's manifest."""
    if not folder.is_dir():
        raise KqbenchError(f"{folder}: not a folder: give a run folder (results/runs/<run-id> or one under results/)")
    old = read_manifest(folder)
    files = folder_files(folder)
    entries, new_objects, new_bytes = [], 0, 0
    for count, path in enumerate(files, start=1):
        sha, size = sha256_of(path), path.stat().st_size
        if not store.has(sha):
            store.put(sha, path)
            new_objects, new_bytes = new_objects + 1, new_bytes + size
        entries.append(manifests.Entry(path.relative_to(folder).as_posix(), size, sha))
        progress("push", f"{count}/{len(files)} files, {new_objects} new objects ({new_bytes / 2**20:.1f} MiB)")
    manifest = manifests.merged(old, entries, store.address)
    written = write_manifest(folder, manifest)
    return Pushed(written, len(files), sum(e.size for e in entries), new_objects, new_bytes)


def tracked(folder: Path) -> tuple[Path, list[str]]:
    """The top of the repository folder is in, and folder's git-tracked files (paths from that top)."""
    top = Path(git(folder, "rev-parse", "--show-toplevel").strip()).resolve()
    names = git(top, "ls-files", "-z", "--", str(folder.resolve().relative_to(top))).split("\0")
    return top, list(filter(None, names))


def record_git_history(folder: Path, names: Iterable[str], progress: Progress = quiet) -> Path:
    """Record the git-tracked files names (paths from the repository's top) of folder with their place in history
    (HEAD's commit and the path), so that `pull` restores them from the clone after they leave the tree. Only files
    unchanged since HEAD are recorded."""
    commit = git(folder, "rev-parse", "HEAD").strip()
    top = Path(git(folder, "rev-parse", "--show-toplevel").strip()).resolve()
    changed = set(git(top, "diff", "--name-only", "-z", "HEAD", "--").split("\0"))
    entries = []
    for name in names:
        path = top / name
        if name in changed or not path.is_file() or path.name == manifests.FILE_NAME:
            continue
        relative = path.relative_to(folder.resolve()).as_posix()
        entries.append(manifests.Entry(relative, path.stat().st_size, sha256_of(path), False,
                                       manifests.GitPlace(commit, name)))
        progress("record", f"{len(entries)} files recorded at {commit[:12]}")
    old = read_manifest(folder)
    return write_manifest(folder, manifests.merged(old, entries, old.store))


def git(repo: Path, *args: str, stdin: str | None = None, allowed: tuple[int, ...] = (0,)) -> str:
    """A git command's output in repo; a KqbenchError saying what failed (an exit code outside allowed)."""
    try:
        done = subprocess.run(["git", *args], cwd=repo, input=None if stdin is None else stdin.encode(),
                              capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise KqbenchError(f"git {args[0]} in {repo} could not run ({error}): is git installed?") from None
    if done.returncode not in allowed:
        raise KqbenchError(f"git {' '.join(args[:2])} in {repo}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode(errors="replace")


def _git_blob(repo: Path, place: manifests.GitPlace, destination: Path) -> None:
    with destination.open("wb") as sink:
        done = subprocess.run(["git", "cat-file", "blob", f"{place.commit}:{place.path}"], cwd=repo,
                              stdout=sink, stderr=subprocess.PIPE, timeout=600)
    if done.returncode != 0:
        raise KqbenchError(f"git history of {repo} has no {place.path} at {place.commit[:12]} "
                           f"({done.stderr.decode(errors='replace').strip()}): pull in a full clone (not shallow) "
                           "of the repository")


@dataclass(slots=True)
class Located:
    """The manifest that governs a path and the entries under that path."""
    folder: Path
    manifest: manifests.Manifest
    entries: list[manifests.Entry]


def locate(path: Path) -> Iterator[Located]:
    """Manifests that cover path: the nearest one in path or above it, else every one below it (a topic folder)."""
    path = path.resolve()
    for folder in [path, *path.parents] if path.is_dir() else list(path.parents):
        if (folder / manifests.FILE_NAME).is_file():
            manifest = read_manifest(folder)
            prefix = "" if path == folder else path.relative_to(folder).as_posix()
            chosen = [e for e in manifest.entries
                      if not prefix or e.path == prefix or e.path.startswith(prefix + "/")]
            if not chosen:
                raise KqbenchError(f"{path}: {folder / manifests.FILE_NAME} names no file there: "
                                   "`kqbench results ls` lists what it names")
            yield Located(folder, manifest, chosen)
            return
    below = sorted(path.rglob(manifests.FILE_NAME)) if path.is_dir() else []
    if not below:
        raise KqbenchError(f"{path}: no {manifests.FILE_NAME} in it, above it or below it: "
                           "push the run folder first (`kqbench results push FOLDER`)")
    for file in below:
        manifest = read_manifest(file.parent)
        yield Located(file.parent, manifest, list(manifest.entries))


@dataclass(slots=True)
class Pulled:
    restored: list[str] = field(default_factory=list)
    present: int = 0
    """Files already there with the right bytes."""
    bytes: int = 0


def pull(path: Path, store: stores.Store | None, repo: Path | None = None, force: bool = False,
         progress: Progress = quiet) -> Pulled:
    """Restore every file the manifests name under path, from the store or else git history (of repo; None: the
    repository the run folder is in), each checked against its sha256 before it takes its place. A file present
    with other bytes is refused unless force."""
    pulled = Pulled()
    for located in locate(path):
        for entry in located.entries:
            target = located.folder / entry.path
            if target.is_file():
                if sha256_of(target) == entry.sha256:
                    pulled.present += 1
                    continue
                if not force:
                    raise KqbenchError(f"{target}: present with other bytes than its manifest names: move it away, or "
                                       "pull with --force to replace it")
            target.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=target.parent, delete=False, prefix=f".{target.name}.") as handle:
                temporary = Path(handle.name)
            try:
                _fetch(entry, temporary, store, repo or located.folder, target)
                os.replace(temporary, target)
            finally:
                temporary.unlink(missing_ok=True)
            pulled.restored.append(str(target))
            pulled.bytes += entry.size
            progress("pull", f"{len(pulled.restored)} restored ({pulled.bytes / 2**20:.1f} MiB), {pulled.present} present")
    return pulled


def _fetch(entry: manifests.Entry, temporary: Path, store: stores.Store | None, repo: Path, target: Path) -> None:
    """Bytes of entry into temporary, checked; the store first, git history when the store lacks them."""
    errors = []
    if entry.in_store and store is not None:
        try:
            store.get(entry.sha256, temporary)
            _check(temporary, entry, target, f"store {store.address}")
            return
        except stores.StoreError as error:
            errors.append(str(error))
    if entry.git is not None:
        _git_blob(repo, entry.git, temporary)
        _check(temporary, entry, target, f"git {entry.git.commit[:12]}:{entry.git.path}")
        return
    raise stores.StoreError(f"{target}: {'; '.join(errors) or 'in no store'}: push its run folder from a machine that "
                            "has it (`kqbench results push FOLDER`), or point KQBENCH_STORE at the store that holds it")


def _check(file: Path, entry: manifests.Entry, target: Path, source: str) -> None:
    actual = sha256_of(file)
    if actual != entry.sha256:
        raise KqbenchError(f"{target}: {source} gave bytes with sha256 {actual[:12]}..., not the manifest's "
                           f"{entry.sha256[:12]}... (a corrupt object): push the file again from a good copy")


@dataclass(slots=True)
class Problem:
    file: str
    what: str


def verify(path: Path, store: stores.Store | None, deep: bool = False, progress: Progress = quiet) -> tuple[int, list[Problem]]:
    """Check each file the manifests name under path: a local copy has the manifest's sha256; the store holds its
    object (deep: and the object's bytes hash right). Returns (files checked, problems)."""
    problems, checked = [], 0
    for located in locate(path):
        for entry in located.entries:
            checked += 1
            target = located.folder / entry.path
            if target.is_file() and sha256_of(target) != entry.sha256:
                problems.append(Problem(str(target), "local copy differs from its manifest's sha256"))
            if entry.in_store and store is not None:
                if not store.has(entry.sha256):
                    problems.append(Problem(str(target), f"no object {entry.sha256[:12]}... in store {store.address}"))
                elif deep:
                    with tempfile.TemporaryDirectory() as scratch:
                        copy = Path(scratch) / "object"
                        store.get(entry.sha256, copy)
                        if sha256_of(copy) != entry.sha256:
                            problems.append(Problem(str(target), f"object {entry.sha256[:12]}... in store "
                                                                 f"{store.address} is corrupt"))
            elif not entry.in_store and entry.git is None:
                problems.append(Problem(str(target), "neither in the store nor in git history"))
            progress("verify", f"{checked} files, {len(problems)} problems")
        problems += _history_problems(located, deep)
    return checked, problems


def _history_problems(located: Located, deep: bool) -> list[Problem]:
    """Entries whose only copy is a place in git history that this clone lacks (a shallow clone, rewritten
    history) or, deep, whose blob there has other bytes."""
    only_history = [e for e in located.entries if not e.in_store and e.git is not None
                    and not (located.folder / e.path).is_file()]
    if not only_history:
        return []
    names = [f"{e.git.commit}:{e.git.path}" for e in only_history]
    answers = git(located.folder, "cat-file", "--batch-check", stdin="\n".join(names) + "\n").splitlines()
    problems = []
    for entry, name, answer in zip(only_history, names, answers + [""] * (len(names) - len(answers))):
        target = str(located.folder / entry.path)
        if not answer.endswith(f" blob {entry.size}"):
            problems.append(Problem(target, f"git history here has no {name[:12]}...:{entry.git.path} of its size "
                                            "(a shallow clone, or history rewritten): pull in a full clone"))
        elif deep:
            with tempfile.TemporaryDirectory() as scratch:
                copy = Path(scratch) / "blob"
                _git_blob(located.folder, entry.git, copy)
                if sha256_of(copy) != entry.sha256:
                    problems.append(Problem(target, f"git history's {name[:12]}...:{entry.git.path} has other bytes "
                                                    "than the manifest names"))
    return problems


def push_new_run(folder: Path, say: Callable[[str], None]) -> Pushed | None:
    """A finished (or stopped) run's raw data into the configured store, said in one line; a store that fails
    is said too, with the command to push later, and loses nothing (the folder keeps every file)."""
    try:
        store = stores.open_store()
        pushed = push(folder, store)
    except KqbenchError as error:
        say(f"raw data not pushed ({error}); the run folder keeps it: `kqbench results push {folder}` when the store is back")
        return None
    say(f"raw data: {pushed.files} files ({pushed.bytes / 2**20:.1f} MiB) in store {store.address}, "
        f"{pushed.new_objects} new; manifest {pushed.manifest}")
    return pushed
