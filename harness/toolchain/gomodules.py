"""Pure text work for the wrapper Go modules: replace lists and version-stamping ldflags.

`go install k8s.io/kubernetes/cmd/...@v` fails because k8s.io/kubernetes replaces its staging
modules with local paths (`k8s.io/api => ./staging/src/k8s.io/api`); a wrapper module that requires
k8s.io/kubernetes and replaces each of those with the published `v0.Y.Z` builds instead.
"""

from __future__ import annotations

import re

from harness.toolchain import versions

KUEUE_MODULE = "sigs.k8s.io/kueue"
KWOK_MODULE = "sigs.k8s.io/kwok"

# A staging replace line, inside or outside a `replace (...)` block.
_STAGING_REPLACE = re.compile(r"^\s*(?:replace\s+)?(k8s\.io/[\w.\-/]+)\s+=>\s+\./staging/\S+\s*$")


def staging_modules(upstream_go_mod: str) -> list[str]:
    """The module paths that k8s.io/kubernetes's own go.mod points at ./staging, in file order."""
    found = []
    for line in upstream_go_mod.splitlines():
        match = _STAGING_REPLACE.match(line)
        if match and match.group(1) not in found:
            found.append(match.group(1))
    return found


def go_directive(go_mod: str) -> str:
    """The `go` line's version of a go.mod (e.g. '1.25.0')."""
    match = re.search(r"^go\s+(\S+)\s*$", go_mod, re.MULTILINE)
    if not match:
        raise ValueError("go.mod has no 'go' directive")
    return match.group(1)


def kubernetes_wrapper_go_mod(k8s_version: str, upstream_go_mod: str) -> str:
    """go.mod text for a module that builds k8s.io/kubernetes commands at k8s_version."""
    modules = staging_modules(upstream_go_mod)
    if not modules:
        raise ValueError(
            f"k8s.io/kubernetes {k8s_version} go.mod has no './staging' replace lines; "
            "cannot derive the staging module list"
        )
    published = versions.staging_version(k8s_version)
    lines = [
        "module kqbench.local/k8sbuild",
        "",
        f"go {go_directive(upstream_go_mod)}",
        "",
        f"require k8s.io/kubernetes {k8s_version}",
        "",
        "replace (",
        *(f"\t{module} => {module} {published}" for module in modules),
        ")",
        "",
    ]
    return "\n".join(lines)


def plain_wrapper_go_mod(name: str, go_version: str) -> str:
    """go.mod text for a wrapper with no replaces (etcd, kwok); `go get` fills the requires."""
    return f"module kqbench.local/{name}\n\ngo {go_version}\n"


def kubernetes_ldflags(k8s_version: str, build_date: str) -> str:
    """-ldflags that make `kube-apiserver --version` and /version report the real release."""
    major, minor, _ = versions.parse_semver(k8s_version)
    stamps = {
        "gitVersion": k8s_version,
        "gitMajor": str(major),
        "gitMinor": str(minor),
        "gitTreeState": "clean",
        "buildDate": build_date,
        # No git checkout here: say where the source came from instead of a commit hash.
        "gitCommit": f"module-{k8s_version}",
    }
    flags = ["-s", "-w"]
    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        flags += [f"-X {package}.{key}={value}" for key, value in stamps.items()]
    return " ".join(flags)


def etcd_ldflags(etcd_version: str) -> str:
    """-ldflags for etcd: its version is a constant; stamp the source in place of a git sha."""
    return f"-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-{etcd_version}"


# kwok and kwokctl carry their version as a constant in pkg/consts: nothing to stamp.
KWOK_LDFLAGS = "-s -w"


def kueue_ldflags(kueue_version: str, build_date: str) -> str:
    """-ldflags that make Kueue's logged version and build info tell the release (as its Makefile does)."""
    package = f"{KUEUE_MODULE}/pkg/version"
    stamps = {"GitVersion": kueue_version, "GitCommit": f"module-{kueue_version}", "BuildDate": build_date}
    return " ".join(["-s", "-w", *(f"-X {package}.{key}={value}" for key, value in stamps.items())])
