"""The results store with its folder backend (real files, real git): manifests, push, pull, verify, the budget."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.errors import KqbenchError
from harness.results import keeping, manifests, storing, stores


def run_folder(parent: Path, raw_bytes: int = 200_000) -> Path:
    folder = parent / "20261206-120000-quick"
    (folder / "tables").mkdir(parents=True)
    (folder / "summary.json").write_text('{"schema_version": 1}\n')
    (folder / "run.json").write_text('{"status": "ok"}\n')
    (folder / "tables" / "observations.parquet").write_bytes(os.urandom(raw_bytes))
    (folder / "report.html").write_text("<html></html>\n")
    return folder


def digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): storing.sha256_of(p) for p in storing.folder_files(folder)}


SHA = "a" * 64


@pytest.mark.parametrize("document, message", [
    ("{", "not JSON"),
    ('{"schema_version": 1}', "no `files` list"),
    ('{"schema_version": 9, "files": []}', "newer than this kqbench reads"),
    ('{"schema_version": 1, "files": [{"path": "../x", "size": 1, "sha256": "%s"}]}' % SHA, "not a relative path"),
    ('{"schema_version": 1, "files": [{"path": "x", "size": 1, "sha256": "ABC"}]}', "64 lowercase hex"),
    ('{"schema_version": 1, "files": [{"path": "x", "size": 1, "sha256": "%s", "in_store": false}]}' % SHA,
     "neither in the store nor in git history"),
    ('{"schema_version": 1, "files": [{"path": "x", "size": 1, "sha256": "%s"}, {"path": "x", "size": 2, "sha256": "%s"}]}'
     % (SHA, SHA), "names x twice"),
])
def test_a_bad_manifest_is_refused_naming_the_file_and_what_is_wrong(document, message):
    with pytest.raises(manifests.ManifestError) as error:
        manifests.from_json(document, "results/peer/run/store-manifest.json")
    assert message in str(error.value) and str(error.value).startswith("results/peer/run/store-manifest.json")
    assert "\n" not in str(error.value)


def test_a_manifest_reads_back_as_written():
    manifest = manifests.Manifest((manifests.Entry("a/b.csv", 10, SHA),
                                   manifests.Entry("c.log", 3, "b" * 64, False, manifests.GitPlace("c" * 40, "results/x/c.log"))),
                                  "/store")
    assert manifests.from_json(manifests.to_json(manifest)) == manifest


def test_a_git_place_survives_a_later_push_of_the_same_bytes():
    place = manifests.GitPlace("c" * 40, "results/x/c.log")
    old = manifests.Manifest((manifests.Entry("c.log", 3, SHA, False, place),))
    same = manifests.merged(old, [manifests.Entry("c.log", 3, SHA)], "/store")
    changed = manifests.merged(old, [manifests.Entry("c.log", 4, "b" * 64)], "/store")
    assert same.by_path["c.log"] == manifests.Entry("c.log", 3, SHA, True, place)
    assert changed.by_path["c.log"].git is None


def test_push_then_pull_into_a_clone_is_byte_identical_and_a_second_push_writes_nothing(tmp_path):
    store = stores.FolderStore(tmp_path / "store")
    folder = run_folder(tmp_path / "run")
    first = storing.push(folder, store)
    second = storing.push(folder, store)
    assert (first.files, first.new_objects) == (4, 4)
    assert (second.new_objects, second.new_bytes) == (0, 0)
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / manifests.FILE_NAME).write_bytes((folder / manifests.FILE_NAME).read_bytes())
    pulled = storing.pull(clone, store)
    assert len(pulled.restored) == 4 and digests(clone) == digests(folder)
    assert storing.verify(clone, store, deep=True) == (4, [])


def test_a_failed_push_leaves_the_run_folder_untouched(tmp_path):
    (tmp_path / "not-a-folder").write_text("a file where the store's folder should be\n")
    folder = run_folder(tmp_path / "run")
    before = digests(folder)
    with pytest.raises(stores.StoreError, match="cannot write"):
        storing.push(folder, stores.FolderStore(tmp_path / "not-a-folder"))
    assert digests(folder) == before and not (folder / manifests.FILE_NAME).exists()


def test_a_corrupt_or_missing_object_never_takes_a_files_place(tmp_path):
    store = stores.FolderStore(tmp_path / "store")
    folder = run_folder(tmp_path / "run")
    storing.push(folder, store)
    sha = storing.read_manifest(folder).by_path["tables/observations.parquet"].sha256
    (folder / "tables" / "observations.parquet").unlink()
    store._object(sha).write_bytes(b"other bytes")
    with pytest.raises(KqbenchError, match=r"observations.parquet: store .* \(a corrupt object\)"):
        storing.pull(folder, store)
    assert not (folder / "tables" / "observations.parquet").exists()
    assert [p.what for p in storing.verify(folder, store, deep=True)[1]] == [f"object {sha[:12]}... in store {store.address} is corrupt"]
    store._object(sha).unlink()
    with pytest.raises(stores.StoreError, match="no object .*kqbench results push"):
        storing.pull(folder, store)


def test_a_local_file_with_other_bytes_is_kept_unless_forced(tmp_path):
    store = stores.FolderStore(tmp_path / "store")
    folder = run_folder(tmp_path / "run")
    storing.push(folder, store)
    (folder / "report.html").write_text("edited by hand\n")
    with pytest.raises(KqbenchError, match="report.html: present with other bytes"):
        storing.pull(folder, store)
    assert (folder / "report.html").read_text() == "edited by hand\n"
    storing.pull(folder, store, force=True)
    assert (folder / "report.html").read_text() == "<html></html>\n"


def test_pull_of_a_topic_folder_takes_every_run_under_it(tmp_path):
    store = stores.FolderStore(tmp_path / "store")
    runs = [run_folder(tmp_path / "topic" / name) for name in ("a", "b")]
    for folder in runs:
        storing.push(folder, store)
        (folder / "tables" / "observations.parquet").unlink()
    assert len(storing.pull(tmp_path / "topic", store).restored) == 2


@pytest.mark.parametrize("address, kind", [
    ("/var/kqbench/store", stores.FolderStore),
    ("file:///var/kqbench/store", stores.FolderStore),
    ("s3://team-bucket/kqbench", stores.S3Store),
    ("s3+http://127.0.0.1:7070/runs/objects", stores.S3Store),
])
def test_one_address_names_the_store(address, kind):
    assert isinstance(stores.open_store(address), kind)


def test_an_address_no_backend_takes_is_refused_saying_what_works():
    with pytest.raises(stores.StoreError, match="unknown scheme 'ftp'.*KQBENCH_STORE"):
        stores.open_store("ftp://host/x")


def test_the_default_store_is_outside_the_checkout(monkeypatch, tmp_path):
    monkeypatch.delenv(stores.ADDRESS_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert stores.default_address() == str(tmp_path / "kqbench" / "store")
    assert not Path(stores.default_address()).is_relative_to(keeping.REPO)


def test_git_keeps_the_summary_and_manifest_of_a_run_not_its_raw_data(tmp_path):
    folder = run_folder(tmp_path, raw_bytes=2 << 20)
    storing.push(folder, stores.FolderStore(tmp_path / "store"))
    kept = keeping.kept_in_git(folder)
    assert {name for name, _ in kept.files} == {"summary.json", "run.json", manifests.FILE_NAME}
    assert kept.over_budget() == ""


def test_a_run_over_the_git_budget_is_named_with_its_largest_files(tmp_path):
    folder = run_folder(tmp_path)
    (folder / "tables" / "meta.json").write_text(json.dumps(["x" * 100] * 12000))
    message = keeping.kept_in_git(folder).over_budget()
    assert "over the 1 MiB budget" in message and "tables/meta.json (1" in message


def test_git_keeps_the_small_tables_the_readme_blocks_read_and_leaves_the_large_ones_to_the_store(tmp_path):
    folder = run_folder(tmp_path)
    small_figures = ("capacity_steps", "faults", "invariants", "jobs_figures", "kueue_holds", "invariant_reads")
    # summary, kueue_evictions and load_history: kept only at the paths a block reads (named in results/.gitignore)
    for name in (*small_figures, "summary", "kueue_evictions", "load_history", "kueue_workloads", "jobs_jobs", "scrapes"):
        (folder / "tables" / f"{name}.parquet").write_bytes(b"PAR1")
        (folder / "tables" / f"{name}.csv").write_text("a\n1\n")
    kept = {name for name, _ in keeping.kept_in_git(folder).files}
    assert {name for name in kept if name.startswith("tables/")} == {f"tables/{name}.parquet" for name in small_figures}


def test_git_keeps_a_large_table_where_a_readme_block_reads_it():
    read = "results/large-scale/fair-100cq-paced/tables/kueue_evictions.parquet"
    unread = "results/peer/kueue-baseline-full-hold/tables/kueue_evictions.parquet"
    assert keeping.ignored(keeping.REPO, [read, unread]) == {unread}


def test_a_file_recorded_in_history_and_pushed_keeps_both_places():
    place = manifests.GitPlace("c" * 40, "results/x/c.log")
    pushed = manifests.Manifest((manifests.Entry("c.log", 3, SHA),))
    both = manifests.merged(pushed, [manifests.Entry("c.log", 3, SHA, False, place)], "/store")
    assert both.by_path["c.log"] == manifests.Entry("c.log", 3, SHA, True, place)
