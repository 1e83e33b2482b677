"""The pinned versions of every binary kqbench builds (read from harness/versions.toml)."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib import resources

from harness.errors import KqbenchError

_SEMVER = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")


class VersionError(KqbenchError, ValueError):
    """A version string that kqbench cannot build."""


@dataclass(frozen=True, slots=True)
class Pins:
    kubernetes_default: str
    kubernetes_known: tuple[str, ...]
    etcd: str
    kwok: str
    kueue: str
    """The default Kueue version."""
    kueue_known: tuple[str, ...]
    """Every Kueue version kqbench builds and a scenario may name."""
    kueue_reference_from: tuple[tuple[str, str], ...] = ()
    """(reference scheduler setting, first Kueue version whose default turns it on)."""
    kueue_defaults_from: tuple[tuple[str, str], ...] = ()
    """(Kueue Configuration default both implementations follow, first Kueue version that has it on)."""
    versitygw: str = ""
    """The results store's S3 server the integration tests start."""
    kueue_tas_placement_from: str = ""
    """The Kueue version the reference scheduler's topology-aware placement is ported from."""
    kueue_perf_configs: tuple[tuple[str, str], ...] = ()
    """(Kueue scheduler performance configuration, the Kueue version it was ported from)."""


def load_pins() -> Pins:
    """Read the pinned versions shipped with the package."""
    text = resources.files("harness").joinpath("versions.toml").read_text()
    data = tomllib.loads(text)
    return Pins(
        kubernetes_default=data["kubernetes"]["default"],
        kubernetes_known=tuple(data["kubernetes"]["known"]),
        etcd=data["etcd"]["version"],
        kwok=data["kwok"]["version"],
        kueue=data["kueue"]["default"],
        kueue_known=tuple(data["kueue"]["known"]),
        kueue_reference_from=tuple(data["kueue"].get("reference", {}).items()),
        kueue_defaults_from=tuple(data["kueue"].get("defaults", {}).items()),
        versitygw=data["versitygw"]["version"],
        kueue_tas_placement_from=data["kueue"]["tas_placement_from"],
        kueue_perf_configs=tuple(data["kueue"]["perf_configs"].items()),
    )


def kueue_version(version: str | None, pins: Pins | None = None) -> str:
    """`version` (None: the default) when versions.toml lists it; else a VersionError naming the known ones."""
    pins = pins or load_pins()
    version = (version or pins.kueue).strip()
    if version and not version.startswith("v"):
        version = "v" + version
    if version not in pins.kueue_known:
        raise VersionError(f"Kueue {version} is not in harness/versions.toml: known versions are "
                           f"{', '.join(pins.kueue_known)} (add one to [kueue] known to build and run it)")
    return version


def kueue_defaults(version: str | None, pins: Pins | None = None) -> dict[str, bool]:
    """The Kueue Configuration defaults (versions.toml [kueue.defaults]) on in Kueue `version` (None: the default)."""
    pins = pins or load_pins()
    version = kueue_version(version, pins)
    return {setting: parse_semver(version) >= parse_semver(first) for setting, first in pins.kueue_defaults_from}


def reference_settings(version: str | None, pins: Pins | None = None) -> dict[str, bool]:
    """The reference scheduler's settings that decide as Kueue `version` (None: the default) decides."""
    pins = pins or load_pins()
    version = kueue_version(version, pins)
    return {setting: parse_semver(version) >= parse_semver(first) for setting, first in pins.kueue_reference_from}


def parse_semver(version: str) -> tuple[int, int, int]:
    """Split 'v1.35.4' into (1, 35, 4); anything else is a VersionError."""
    match = _SEMVER.match(version)
    if not match:
        raise VersionError(
            f"version {version!r} is not of the form vMAJOR.MINOR.PATCH (e.g. v1.35.4)"
        )
    major, minor, patch = (int(g) for g in match.groups())
    return major, minor, patch


def normalise_k8s_version(version: str) -> str:
    """Accept '1.35.4' or 'v1.35.4'; return 'v1.35.4'."""
    version = version.strip()
    if version and not version.startswith("v"):
        version = "v" + version
    parse_semver(version)
    return version


def staging_version(k8s_version: str) -> str:
    """The published version of staging modules (k8s.io/api etc.) for a Kubernetes release: v1.35.4 -> v0.35.4."""
    major, minor, patch = parse_semver(k8s_version)
    if major != 1:
        raise VersionError(f"Kubernetes version {k8s_version} is not a 1.x release")
    return f"v0.{minor}.{patch}"
