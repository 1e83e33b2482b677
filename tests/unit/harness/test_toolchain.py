"""Pure parts of the toolchain: version pins, the wrapper go.mod, ldflags, cache layout."""

from pathlib import Path

import pytest

from harness.toolchain import building, gomodules, layout, versions

FIXTURES = Path(__file__).parents[2] / "fixtures"
UPSTREAM = (FIXTURES / "kubernetes-v1.35.4.go.mod").read_text()  # recorded from the Go module proxy


def test_pins_name_a_default_that_is_also_known():
    pins = versions.load_pins()
    assert pins.kubernetes_default in pins.kubernetes_known
    for version in (pins.kubernetes_default, pins.etcd, pins.kwok, pins.kueue):
        versions.parse_semver(version)


@pytest.mark.parametrize("given, expected", [("1.35.4", "v1.35.4"), ("v1.37.2", "v1.37.2"), (" v1.35.4 ", "v1.35.4")])
def test_normalise_k8s_version(given, expected):
    assert versions.normalise_k8s_version(given) == expected


@pytest.mark.parametrize("bad", ["", "latest", "v1.35", "1.35.4-rc.0", "vv1.2.3"])
def test_bad_versions_are_rejected_with_the_expected_form(bad):
    with pytest.raises(versions.VersionError, match="vMAJOR.MINOR.PATCH"):
        versions.normalise_k8s_version(bad)


def test_staging_version_maps_minor_and_patch():
    assert versions.staging_version("v1.35.4") == "v0.35.4"
    assert versions.staging_version("v1.37.2") == "v0.37.2"
    with pytest.raises(versions.VersionError):
        versions.staging_version("v2.0.0")


def test_staging_modules_come_from_the_upstream_replace_block():
    modules = gomodules.staging_modules(UPSTREAM)
    # v1.35.4 replaces 31 staging modules (counted in the recorded file).
    assert len(modules) == UPSTREAM.count("=> ./staging/")
    assert modules[0] == "k8s.io/api"
    assert {"k8s.io/apiserver", "k8s.io/client-go", "k8s.io/component-base", "k8s.io/kubectl"} <= set(modules)
    assert "k8s.io/kubernetes" not in modules
    assert "k8s.io/klog/v2" not in modules  # a normal requirement, not a staging module


def test_wrapper_go_mod_requires_kubernetes_and_pins_every_staging_module():
    text = gomodules.kubernetes_wrapper_go_mod("v1.35.4", UPSTREAM)
    assert "require k8s.io/kubernetes v1.35.4" in text
    assert "go 1.25.0" in text
    assert "\tk8s.io/api => k8s.io/api v0.35.4" in text
    assert text.count(" v0.35.4") == len(gomodules.staging_modules(UPSTREAM))
    assert "./staging" not in text


def test_wrapper_refuses_a_go_mod_without_staging_lines():
    with pytest.raises(ValueError, match="staging"):
        gomodules.kubernetes_wrapper_go_mod("v1.35.4", "module k8s.io/kubernetes\n\ngo 1.25.0\n")


def test_replace_lines_outside_a_block_are_found_too():
    text = "module x\n\ngo 1.25\n\nreplace k8s.io/api => ./staging/src/k8s.io/api\n"
    assert gomodules.staging_modules(text) == ["k8s.io/api"]


def test_ldflags_stamp_the_release_into_component_base():
    flags = gomodules.kubernetes_ldflags("v1.37.2", "2026-01-02T03:04:05Z")
    assert "-X k8s.io/component-base/version.gitVersion=v1.37.2" in flags
    assert "-X k8s.io/component-base/version.gitMajor=1" in flags
    assert "-X k8s.io/component-base/version.gitMinor=37" in flags
    assert "-X k8s.io/component-base/version.buildDate=2026-01-02T03:04:05Z" in flags


def test_cache_layout_is_keyed_by_component_and_version(tmp_path):
    binaries = layout.Binaries.in_cache("v1.35.4", "v3.6.16", "v0.7.0", root=tmp_path)
    assert binaries.kube_apiserver == tmp_path / "bin" / "kubernetes-v1.35.4" / "kube-apiserver"
    assert binaries.etcd == tmp_path / "bin" / "etcd-v3.6.16" / "etcd"
    assert len(binaries.missing()) == 8
    folder = layout.component_dir("etcd", "v3.6.16", tmp_path)
    folder.mkdir(parents=True)
    for command in layout.ETCD_COMMANDS:
        (folder / command).write_text("")
    assert not layout.is_built(folder, layout.ETCD_COMMANDS), "no stamp yet: a half-finished build"
    (folder / layout.STAMP).write_text("{}")
    assert layout.is_built(folder, layout.ETCD_COMMANDS)
    assert len(binaries.missing()) == 6


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("KQBENCH_CACHE", str(tmp_path))
    assert layout.cache_root() == tmp_path


def test_kueue_ldflags_stamp_its_version_package():
    flags = gomodules.kueue_ldflags("v0.17.0", "2026-01-02T03:04:05Z")
    assert "-X sigs.k8s.io/kueue/pkg/version.GitVersion=v0.17.0" in flags
    assert "-X sigs.k8s.io/kueue/pkg/version.BuildDate=2026-01-02T03:04:05Z" in flags


def test_kueue_build_is_complete_only_with_its_manifest_folders(tmp_path):
    kueue = layout.KueueBuild.in_cache("v0.17.0", root=tmp_path)
    folder = kueue.manager.parent
    assert folder == tmp_path / "bin" / "kueue-v0.17.0"
    folder.mkdir(parents=True)
    for command in layout.KUEUE_COMMANDS:
        (folder / command).write_text("")
    (folder / layout.STAMP).write_text("{}")
    assert not layout.is_built(folder, layout.KUEUE_COMMANDS, tuple(layout.KUEUE_MANIFESTS)), \
        "a cache from before the manifests were copied must be rebuilt"
    assert kueue.missing() == [kueue.crd_dir, kueue.visibility_dir, kueue.manager_config]
    for name in layout.KUEUE_MANIFESTS:
        (folder / name).mkdir()
    assert layout.is_built(folder, layout.KUEUE_COMMANDS, tuple(layout.KUEUE_MANIFESTS))
    kueue.manager_config.write_text("kind: Configuration\n")
    assert kueue.missing() == []


def test_copying_manifests_takes_yaml_only_and_refuses_an_empty_folder(tmp_path):
    source = tmp_path / "module" / "bases"
    source.mkdir(parents=True)
    (source / "kueue.x-k8s.io_workloads.yaml").write_text("kind: CustomResourceDefinition\n")
    (source / "README.md").write_text("not a manifest")
    building._copy_yaml(source, tmp_path / "out" / "crd")
    assert [p.name for p in (tmp_path / "out" / "crd").iterdir()] == ["kueue.x-k8s.io_workloads.yaml"]
    with pytest.raises(building.ToolchainError, match="no YAML files"):
        building._copy_yaml(tmp_path / "module", tmp_path / "out" / "other")


def test_every_known_kueue_version_is_a_version_and_the_default_is_one_of_them():
    pins = versions.load_pins()
    assert pins.kueue in pins.kueue_known and len(set(pins.kueue_known)) == len(pins.kueue_known) >= 2
    for version in pins.kueue_known:
        versions.parse_semver(version)
    assert versions.kueue_version(None) == pins.kueue
    assert versions.kueue_version(pins.kueue_known[-1].lstrip("v")) == pins.kueue_known[-1]


def test_what_was_ported_from_kueue_names_a_known_version_and_every_config_the_driver_accepts():
    # the versions are read where they are used (a rangespec at the end of a run, the agreement's default):
    # a version dropped from `known`, or a config the phase accepts but versions.toml does not name, would
    # fail only there
    from typing import get_args

    from harness.drivers.kueuebaseline import phases, rangespecs

    pins = versions.load_pins()
    assert pins.kueue_tas_placement_from in pins.kueue_known
    configs = dict(pins.kueue_perf_configs)
    assert set(configs.values()) <= set(pins.kueue_known)
    accepted = get_args(phases.KueueBaselinePhase.model_fields["kueue_config"].annotation)
    assert set(accepted) == set(configs)
    assert {config: rangespecs.config_version(config) for config in accepted} == configs
    assert configs == {"baseline": "v0.17.0", "tas": "v0.17.0", "large-scale": "v0.19.2"}


def test_a_kueue_version_not_in_versions_toml_is_refused_with_the_known_ones():
    pins = versions.load_pins()
    with pytest.raises(versions.VersionError) as error:
        versions.kueue_version("v0.18.0")
    assert all(v in str(error.value) for v in pins.kueue_known) and "v0.18.0" in str(error.value)
    # the CLI refuses before it builds anything
    from click.testing import CliRunner

    from harness.cli import toolchain

    result = CliRunner().invoke(toolchain.group, ["build", "--kueue-version", "v0.18.0"])
    assert result.exit_code != 0 and isinstance(result.exception, versions.VersionError)


def _module_zip(path: Path, prefix: str, files: dict[str, str]) -> None:
    import zipfile

    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(f"{prefix}/{name}", text)


def test_the_reference_scheduler_follows_the_defaults_of_the_kueue_it_is_compared_with():
    # FlavorFungibilityPreserveScanProgress is on by default from Kueue v0.19 (beta), absent in v0.17.
    # v0.19's preemption search reads the request without `pods`. SchedulingEquivalenceHashing: on from v0.18.
    # TASRecomputeAssignmentWithinSchedulingCycle: on from v0.19.
    assert versions.reference_settings("v0.17.0") == {"preserve_scan_progress": False, "preemption_ignores_pods": False,
                                                      "scheduling_equivalence_hashing": False,
                                                      "tas_recompute_in_cycle": False,
                                                      "tas_hostname_prefix_encoding": False}
    assert versions.reference_settings("v0.19.2") == {"preserve_scan_progress": True, "preemption_ignores_pods": True,
                                                      "scheduling_equivalence_hashing": True,
                                                      "tas_recompute_in_cycle": True,
                                                      "tas_hostname_prefix_encoding": True}
    assert versions.reference_settings(None) == versions.reference_settings(versions.load_pins().kueue)
    with pytest.raises(versions.VersionError, match="not in harness/versions.toml"):
        versions.reference_settings("v0.18.0")


def test_a_kueue_module_that_does_not_build_says_so_with_gos_output(tmp_path, monkeypatch):
    # A Kueue version served by a local file proxy (no network) whose manager does not compile.
    version = "v0.99.0"
    proxy = tmp_path / "proxy" / "sigs.k8s.io" / "kueue" / "@v"
    proxy.mkdir(parents=True)
    go_mod = "module sigs.k8s.io/kueue\n\ngo 1.25\n"
    (proxy / "list").write_text(version + "\n")
    (proxy / f"{version}.info").write_text(f'{{"Version":"{version}","Time":"2026-01-01T00:00:00Z"}}')
    (proxy / f"{version}.mod").write_text(go_mod)
    _module_zip(proxy / f"{version}.zip", f"sigs.k8s.io/kueue@{version}", {
        "go.mod": go_mod,
        "cmd/kueue/main.go": "package main\n\nfunc main() { undefinedManagerEntry() }\n",
        "cmd/kueuectl/main.go": "package main\n\nfunc main() {}\n"})
    monkeypatch.setenv("GOPROXY", f"file://{tmp_path / 'proxy'}")
    monkeypatch.setenv("GOSUMDB", "off")
    monkeypatch.setenv("GOTOOLCHAIN", "local")
    monkeypatch.setenv("GOMODCACHE", str(tmp_path / "modcache"))
    with pytest.raises(building.ToolchainError) as error:
        building.build_kueue(version, lambda component, what: None, root=tmp_path / "cache")
    message = str(error.value)
    assert "kueue: `go build" in message and "last lines" in message
    assert "undefined: undefinedManagerEntry" in message, message
    assert not layout.KueueBuild.in_cache(version, tmp_path / "cache").manager.exists()
