"""The results store on a real S3 server: versitygw (built from its Go module) over a folder, started and
stopped here; `kqbench results` pushes, pulls and verifies through it as a user would, and refuses bad input."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.results import keeping, manifests, s3serving, storing
from scheduler import listening
from tests.integration.conftest import run_cli

pytestmark = pytest.mark.integration

BUCKET = "runs"


@pytest.fixture(scope="module")
def s3_server(tmp_path_factory):
    """versitygw on a loopback port, serving a folder as buckets; stopped after the module, also on failure."""
    with s3serving.serving(tmp_path_factory.mktemp("versitygw") / "buckets", (BUCKET,)) as server:
        yield server


def _env(address: str) -> dict:
    return {**os.environ, "KQBENCH_STORE": address, **s3serving.environment()}


def _run_folder(parent: Path) -> Path:
    """A run folder as a run leaves it: small files git keeps, raw tables and a log it does not."""
    folder = parent / "20261206-120000-quick"
    (folder / "tables").mkdir(parents=True)
    (folder / "summary.json").write_text('{"schema_version": 1, "metrics": {"apiserver.write_qps": 12.5}}\n')
    (folder / "tables" / "observations.parquet").write_bytes(os.urandom(3 << 20))
    (folder / "tables" / "load_history.csv").write_text("t,value\n" + "".join(f"{i},{i * i}\n" for i in range(20000)))
    (folder / "scheduler.log").write_text("started\n" * 1000)
    return folder


def _digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): storing.sha256_of(p) for p in storing.folder_files(folder)}


def test_push_pull_verify_round_trip_is_byte_identical(s3_server, tmp_path):
    env = _env(s3_server.address(BUCKET))
    folder = _run_folder(tmp_path)
    before = _digests(folder)
    first = run_cli("results", "push", str(folder), env=env)
    assert first.returncode == 0, first.stderr
    assert "4 new objects" in first.stdout
    again = run_cli("results", "push", str(folder), env=env)
    assert again.returncode == 0 and "0 new objects (0.0 MiB)" in again.stdout, again.stdout + again.stderr

    # A clone has only what git keeps: the summary and the manifest. Pull brings back the rest.
    clone = tmp_path / "clone" / folder.name
    clone.mkdir(parents=True)
    for name in ("summary.json", manifests.FILE_NAME):
        shutil.copy(folder / name, clone / name)
    pulled = run_cli("results", "pull", str(clone), env=env)
    assert pulled.returncode == 0, pulled.stderr
    assert _digests(clone) == before
    verified = run_cli("results", "verify", str(clone), "--deep", env=env)
    assert verified.returncode == 0 and "verified 4 files" in verified.stdout, verified.stdout + verified.stderr


def test_bad_objects_and_manifests_are_refused_in_one_line(s3_server, tmp_path):
    env = _env(s3_server.address(BUCKET))
    folder = _run_folder(tmp_path)
    assert run_cli("results", "push", str(folder), env=env).returncode == 0
    manifest = storing.read_manifest(folder)
    objects = s3_server.root / BUCKET / "objects"
    raw = manifest.by_path["tables/observations.parquet"]
    log = manifest.by_path["scheduler.log"]
    (folder / "tables" / "observations.parquet").unlink()
    (folder / "scheduler.log").unlink()

    (objects / raw.sha256).write_bytes(b"not the bytes that were pushed")
    corrupt = run_cli("results", "pull", str(folder), env=env)
    assert corrupt.returncode == 2
    [line] = corrupt.stderr.strip().splitlines()[-1:]
    assert "observations.parquet" in line and "corrupt" in line and "push the file again" in line
    assert not (folder / "tables" / "observations.parquet").exists(), "a corrupt object must not take the file's place"

    (objects / raw.sha256).unlink()
    (objects / log.sha256).unlink()
    missing = run_cli("results", "pull", str(folder), env=env)
    assert missing.returncode == 2
    assert "no object" in missing.stderr and "kqbench results push" in missing.stderr
    unchecked = run_cli("results", "verify", str(folder), env=env)
    assert unchecked.returncode == 2 and "2 of 4 files have problems" in unchecked.stderr

    text = (folder / manifests.FILE_NAME).read_text()
    doubled = storing.read_manifest(folder)
    (folder / manifests.FILE_NAME).write_text(manifests.to_json(manifests.Manifest(doubled.entries)).replace(
        '"path": "summary.json"', '"path": "scheduler.log"'))
    twice = run_cli("results", "pull", str(folder), env=env)
    assert twice.returncode == 2 and "names scheduler.log twice" in twice.stderr
    (folder / manifests.FILE_NAME).write_text(text)


def test_an_unreachable_store_is_said_in_one_line_and_the_folder_stays_untouched(tmp_path):
    [port] = listening.pick_free(1)  # nothing listens there
    folder = _run_folder(tmp_path)
    before = _digests(folder)
    result = run_cli("results", "push", str(folder), env=_env(f"s3+http://{listening.LOOPBACK}:{port}/{BUCKET}"), timeout=120)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "cannot be reached" in result.stderr and "KQBENCH_STORE" in result.stderr
    assert _digests(folder) == before and not (folder / manifests.FILE_NAME).exists()


def test_raw_data_taken_out_of_the_tree_comes_back_from_git_history_in_a_fresh_clone(tmp_path):
    repo = tmp_path / "repo"
    folder = _run_folder(repo / "results" / "peer")
    shutil.copy(keeping.REPO / "results" / ".gitignore", repo / "results" / ".gitignore")
    git = lambda *args, cwd=repo: subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,  # noqa: E731
                                                 check=True, capture_output=True, timeout=60)
    git("init", "-q")
    git("add", "-A", "-f")  # raw data committed before the store existed, as on main
    git("commit", "-q", "-m", "a run with its raw data in git")
    before = _digests(folder)
    recorded = run_cli("results", "record-history", str(folder), "--untrack")
    assert recorded.returncode == 0, recorded.stderr
    assert "3 files" in recorded.stdout, recorded.stdout
    git("add", str(folder / manifests.FILE_NAME))
    git("commit", "-q", "-m", "raw data out of the tree")
    assert _digests(folder) == before, "the working copies stay"
    git("clone", "-q", str(repo), str(tmp_path / "clone"), cwd=tmp_path)
    cloned = tmp_path / "clone" / folder.relative_to(repo)
    assert sorted(_digests(cloned)) == ["summary.json"], "only what results/.gitignore keeps is in a fresh clone"
    # No store holds these files: the manifest's git places are what brings them back.
    verified = run_cli("results", "verify", str(cloned), "--deep", env=_env(str(tmp_path / "empty-store")))
    assert verified.returncode == 0, verified.stderr
    git("clone", "-q", "--depth", "1", f"file://{repo}", str(tmp_path / "shallow"), cwd=tmp_path)
    shallow = run_cli("results", "verify", str(tmp_path / "shallow" / folder.relative_to(repo)),
                      env=_env(str(tmp_path / "empty-store")))
    assert shallow.returncode != 0 and "shallow clone" in shallow.stderr, shallow.stderr
    pulled = run_cli("results", "pull", str(cloned), env=_env(str(tmp_path / "empty-store")))
    assert pulled.returncode == 0, pulled.stderr
    assert _digests(cloned) == before
    recorded_names = {entry.path for entry in storing.read_manifest(cloned).entries}
    assert "summary.json" not in recorded_names, "a file git keeps is versioned by git, not the manifest"
