"""Builds kube-apiserver & co, etcd, kwok and Kueue with `go build` into the per-user cache.

Each component is built once per version through a small wrapper module (see gomodules), with
CGO off, and installed atomically: the binaries and a stamp file appear together or not at all.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import shutil
import subprocess
import time
from collections import deque
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from harness.errors import KqbenchError
from harness.toolchain import components, gomodules, layout, versions

# Called with (component, what is happening now); the CLI turns it into a progress line.
Progress = Callable[[str, str], None]

LOG_TAIL_LINES = 30


class ToolchainError(KqbenchError):
    """A build that could not run or failed; the message says what to do."""


def find_go() -> str:
    """Path of the `go` command, or a ToolchainError saying how to get one."""
    go = shutil.which("go")
    if go is None:
        raise ToolchainError(
            "`go` is not on PATH: install Go >= 1.26 (Debian: apt-get install golang-go, "
            "or the official tarball) and put its bin folder on PATH"
        )
    return go


def module_dir(module: str, version: str) -> Path:
    """Where the Go module cache holds module@version (it may not be downloaded yet)."""
    cache = subprocess.run([find_go(), "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
    return Path(cache) / f"{module}@{version}"


def go_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for go commands: static binaries, module mode, our wrapper's go.mod decides."""
    env = dict(os.environ)
    env.update({"CGO_ENABLED": "0", "GOFLAGS": "-mod=mod", "GOWORK": "off"})
    env.update(extra or {})
    return env


def _tail(log: Path, lines: int = LOG_TAIL_LINES) -> str:
    with log.open(errors="replace") as handle:
        return "".join(deque(handle, maxlen=lines))


def run_go(args: list[str], cwd: Path, log: Path, component: str, progress: Progress) -> str:
    """Run one go command, appending its output to log; return its output. Raises with the log's tail."""
    go = find_go()
    started = time.monotonic()
    progress(component, f"go {' '.join(args[:2])} ... (log: {log})")
    with log.open("a") as sink:
        sink.write(f"\n$ go {' '.join(args)}\n")
        sink.flush()
        process = subprocess.Popen(
            [go, *args], cwd=cwd, env=go_env(), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, bufsize=1,
        )
        output = []
        assert process.stdout is not None
        for count, line in enumerate(process.stdout, start=1):
            sink.write(line)
            output.append(line)
            # `go build -v` prints a package per line: a cheap, honest progress signal.
            if count % 25 == 0:
                elapsed = time.monotonic() - started
                progress(component, f"{count} packages/lines, {elapsed:.0f}s (log: {log})")
        code = process.wait()
    if code != 0:
        raise ToolchainError(
            f"{component}: `go {' '.join(args)}` failed with exit code {code}; "
            f"full log: {log}\n--- last lines ---\n{_tail(log)}"
        )
    return "".join(output)


@contextmanager
def _locked(directory: Path):
    """Serialise builds of one component version across processes (tests and benches may race)."""
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _install(built: Path, target: Path, names: tuple[str, ...], stamp: dict) -> None:
    """Move freshly built commands (and copied folders) into target with a stamp, replacing an older partial folder."""
    staging = target.with_name(target.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name in names:
        shutil.move(built / name, staging / name)
    (staging / layout.STAMP).write_text(json.dumps(stamp, indent=2))
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)


def _module_download(go_env_dir: Path, module_at_version: str, component: str, progress: Progress) -> dict:
    """Download a module; return go's JSON record of it (GoMod: its go.mod file, Dir: its source)."""
    log = go_env_dir / "build.log"
    out = run_go(["mod", "download", "-json", module_at_version], go_env_dir, log, component, progress)
    info = json.loads(out[out.index("{"):])
    if info.get("Error"):
        raise ToolchainError(f"{component}: cannot download {module_at_version}: {info['Error']}")
    return info


def _module_go_mod(go_env_dir: Path, module_at_version: str, component: str, progress: Progress) -> str:
    """Download a module and return the text of its go.mod."""
    return Path(_module_download(go_env_dir, module_at_version, component, progress)["GoMod"]).read_text()


def _copy_yaml(source: Path, destination: Path) -> None:
    """Copy the YAML files of one module folder (the module cache is read-only: copies are writable)."""
    files = sorted(source.glob("*.yaml"))
    if not files:
        raise ToolchainError(f"no YAML files in {source}: the module's layout changed; update layout.KUEUE_MANIFESTS")
    destination.mkdir(parents=True)
    for file in files:
        (destination / file.name).write_bytes(file.read_bytes())


def _stamp(component: str, version: str, seconds: float) -> dict:
    return {
        "component": component,
        "version": version,
        "built_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "build_seconds": round(seconds, 1),
        "go": subprocess.run([find_go(), "version"], capture_output=True, text=True).stdout.strip(),
    }


def published_versions(module: str, work: Path, component: str, progress: Progress) -> list[str]:
    """Versions of a module that the Go module proxy lists."""
    out = run_go(["list", "-m", "-versions", module], work, work / "build.log", component, progress)
    fields = out.split()
    return fields[fields.index(module) + 1:] if module in fields else []


def build_kubernetes(version: str, progress: Progress, root: Path | None = None) -> Path:
    """Build kube-apiserver, kube-controller-manager, kube-scheduler and kubectl at version."""
    version = versions.normalise_k8s_version(version)
    target = layout.component_dir("kubernetes", version, root)
    work = layout.build_dir("kubernetes", version, root)
    with _locked(work):
        if layout.is_built(target, layout.KUBERNETES_COMMANDS):
            return target
        started = time.monotonic()
        (work / "build.log").write_text("")
        (work / "go.mod").write_text(gomodules.plain_wrapper_go_mod("k8sbuild", "1.25"))
        known = published_versions("k8s.io/kubernetes", work, "kubernetes", progress)
        if known and version not in known:
            raise ToolchainError(
                f"Kubernetes {version} is not published as a Go module; recent ones: {', '.join(known[-6:])}"
            )
        # The scratch module above downloads the upstream go.mod, from which the wrapper is made.
        upstream = _module_go_mod(work, f"k8s.io/kubernetes@{version}", "kubernetes", progress)
        (work / "go.mod").write_text(gomodules.kubernetes_wrapper_go_mod(version, upstream))
        log = work / "build.log"
        run_go(["get", f"k8s.io/kubernetes/cmd/kube-apiserver@{version}"], work, log, "kubernetes", progress)
        date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        out = work / "out"
        shutil.rmtree(out, ignore_errors=True)
        packages = [f"k8s.io/kubernetes/cmd/{c}" for c in layout.KUBERNETES_COMMANDS]
        run_go(
            ["build", "-v", "-trimpath", "-ldflags", gomodules.kubernetes_ldflags(version, date),
             "-o", str(out) + "/", *packages],
            work, log, "kubernetes", progress,
        )
        _install(out, target, layout.KUBERNETES_COMMANDS,
                 _stamp("kubernetes", version, time.monotonic() - started))
    return target


def _build_plain(component: str, version: str, modules: list[str], commands: dict[str, str], ldflags: str,
                 progress: Progress, root: Path | None, source_folders: dict[str, str] | None = None) -> Path:
    """Build commands {binary name: package} from modules required by a replace-free wrapper module.

    source_folders {name: folder in the first module} are copied from its source beside the binaries.
    """
    versions.parse_semver(version)
    target = layout.component_dir(component, version, root)
    work = layout.build_dir(component, version, root)
    folders = source_folders or {}
    with _locked(work):
        if layout.is_built(target, tuple(commands), tuple(folders)):
            return target
        started = time.monotonic()
        log = work / "build.log"
        log.write_text("")
        (work / "go.mod").write_text(gomodules.plain_wrapper_go_mod(f"{component}build", "1.25"))
        run_go(["get", *modules], work, log, component, progress)
        out = work / "out"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        for binary, package in commands.items():
            run_go(["build", "-v", "-trimpath", "-ldflags", ldflags, "-o", str(out / binary), package],
                   work, log, component, progress)
        if folders:
            source = Path(_module_download(work, modules[0], component, progress)["Dir"])
            for name, folder in folders.items():
                _copy_yaml(source / folder, out / name)
        _install(out, target, (*commands, *folders), _stamp(component, version, time.monotonic() - started))
    return target


def build_etcd(version: str, progress: Progress, root: Path | None = None) -> Path:
    """Build etcd (from go.etcd.io/etcd/server/v3) and etcdctl at version.

    server/v3's own go.mod replaces its siblings with ../ paths, which do not apply to a
    dependency: requiring it from a wrapper resolves the published sibling modules.
    """
    commands = {"etcd": "go.etcd.io/etcd/server/v3", "etcdctl": "go.etcd.io/etcd/etcdctl/v3"}
    modules = [f"{package}@{version}" for package in commands.values()]
    return _build_plain("etcd", version, modules, commands, gomodules.etcd_ldflags(version), progress, root)


def build_kwok(version: str, progress: Progress, root: Path | None = None) -> Path:
    """Build kwok (the controller) and kwokctl at version."""
    commands = {c: f"{gomodules.KWOK_MODULE}/cmd/{c}" for c in layout.KWOK_COMMANDS}
    return _build_plain("kwok", version, [f"{gomodules.KWOK_MODULE}@{version}"], commands, gomodules.KWOK_LDFLAGS,
                        progress, root)


def build_kueue(version: str, progress: Progress, root: Path | None = None) -> Path:
    """Build Kueue's manager and kubectl plugin at version, and copy its CRDs and visibility manifests."""
    commands = {"kueue": f"{gomodules.KUEUE_MODULE}/cmd/kueue", "kubectl-kueue": f"{gomodules.KUEUE_MODULE}/cmd/kueuectl"}
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return _build_plain("kueue", version, [f"{gomodules.KUEUE_MODULE}@{version}"], commands,
                        gomodules.kueue_ldflags(version, date), progress, root, layout.KUEUE_MANIFESTS)


def build_versitygw(version: str, progress: Progress, root: Path | None = None) -> Path:
    """Build versitygw (the results store's S3 server) at version; return its folder."""
    commands = {"versitygw": "github.com/versity/versitygw/cmd/versitygw"}
    return _build_plain("versitygw", version, [f"github.com/versity/versitygw@{version}"], commands, "-s -w",
                        progress, root)


def ensure_versitygw(progress: Progress, root: Path | None = None) -> Path:
    """The pinned versitygw binary, built when missing."""
    version = versions.load_pins().versitygw
    return ensure((components.Component("versitygw", version),), progress, root)[0] / "versitygw"


def ensure_kueue(progress: Progress, root: Path | None = None, version: str | None = None) -> layout.KueueBuild:
    """Build a Kueue version of versions.toml (None: the default) when missing; return its paths."""
    version = versions.kueue_version(version)
    ensure((components.kueue(version),), progress, root)
    kueue = layout.KueueBuild.in_cache(version, root)
    if missing := kueue.missing():
        raise ToolchainError(f"build finished but Kueue files are missing: {', '.join(map(str, missing))}")
    return kueue


def locate_kueue(root: Path | None = None, version: str | None = None) -> layout.KueueBuild:
    """Paths of an already-built Kueue of versions.toml (None: the default); a ToolchainError says to build."""
    kueue = layout.KueueBuild.in_cache(versions.kueue_version(version), root)
    if kueue.missing():
        raise ToolchainError(f"Kueue {kueue.version} is not built yet: run `kqbench toolchain build --kueue-version {kueue.version}` "
                             "(`kqbench run` builds what its scenario names before it starts)")
    return kueue


def ensure_binaries(k8s_version: str | None, progress: Progress, root: Path | None = None) -> layout.Binaries:
    """Build whatever is missing for this Kubernetes version and the pinned etcd/kwok; return paths."""
    pins = versions.load_pins()
    k8s = versions.normalise_k8s_version(k8s_version or pins.kubernetes_default)
    ensure(components.control_plane(k8s, pins), progress, root)
    binaries = layout.Binaries.in_cache(k8s, pins.etcd, pins.kwok, root)
    if missing := binaries.missing():
        raise ToolchainError(f"build finished but binaries are missing: {', '.join(map(str, missing))}")
    return binaries


def locate_binaries(k8s_version: str | None, root: Path | None = None) -> layout.Binaries:
    """Paths of already-built binaries; a ToolchainError says to build when any is missing."""
    pins = versions.load_pins()
    k8s = versions.normalise_k8s_version(k8s_version or pins.kubernetes_default)
    binaries = layout.Binaries.in_cache(k8s, pins.etcd, pins.kwok, root)
    if binaries.missing():
        raise ToolchainError(
            f"binaries for Kubernetes {k8s} are not built yet: run `kqbench toolchain build --k8s-version {k8s}`"
        )
    return binaries


_BUILDERS: dict[str, Callable[[str, Progress, Path | None], Path]] = {
    "kubernetes": build_kubernetes, "etcd": build_etcd, "kwok": build_kwok, "kueue": build_kueue,
    "versitygw": build_versitygw,
}
_COMMANDS = {"kubernetes": layout.KUBERNETES_COMMANDS, "etcd": layout.ETCD_COMMANDS, "kwok": layout.KWOK_COMMANDS,
             "kueue": layout.KUEUE_COMMANDS, "versitygw": layout.VERSITYGW_COMMANDS}
_FOLDERS = {"kueue": tuple(layout.KUEUE_MANIFESTS)}


def is_built(component: components.Component, root: Path | None = None) -> bool:
    """Whether a finished build of component is in the cache."""
    return layout.is_built(layout.component_dir(component.name, component.version, root), _COMMANDS[component.name],
                           _FOLDERS.get(component.name, ()))


def ensure(wanted: tuple[components.Component, ...], progress: Progress, root: Path | None = None) -> list[Path]:
    """Build each wanted component the cache lacks, saying so first (a Kueue takes 5-8 min here); return their
    folders. Every component is tried: one that does not build keeps none of the others from building."""
    folders, failures = [], []
    for component in wanted:
        if not is_built(component, root):
            progress(component.name, f"{component} is not built yet: building it now (first use)")
        try:
            folders.append(_BUILDERS[component.name](component.version, progress, root))
        except ToolchainError as error:
            failures.append(str(error))
    if failures:
        raise ToolchainError("\n\n".join(failures))
    return folders
