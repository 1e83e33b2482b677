"""Which machine a run ran on, and how fast it was that day: fingerprint and calibration (pure but for /proc).

A baseline is only a baseline for the machine that recorded it: the same code's absolute latencies
differ by factors between a laptop and a CI runner, and even a within-run ratio moves when the
cores or the kernel change. So `summary.json` records:
- the **fingerprint**: CPU model, logical CPUs, memory and kernel, read from /proc (no tool, no
  network); `differences` says in a few words which of them two summaries do not share;
- the **calibration**: the p50 of a fixed load on the apiserver's own path (GETs of one object it
  always has, `harness.running.calibrating`), measured at the start of every case and summarised as the
  median over the cases. It tells a slow or busy day on one machine from a slow change of code, and
  it is what a calibrated comparison across machines would scale by.
"""

from __future__ import annotations

import hashlib
import os
import statistics
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import pandas as pd

PROC = Path("/proc")
MEMORY_TOLERANCE = 0.05
"""Memory totals within 5% are the same machine: MemTotal moves by a few MiB between kernels and boots."""
CALIBRATION_TABLE = "calibration"
CALIBRATION_COLUMNS = ["path", "requests", "p50_ms", "p90_ms", "mean_ms", "seconds", "histogram"]
"""`histogram`: the latencies as JSON {ms at CALIBRATION_STEP_MS: requests}, what an interval of the p50 is drawn from."""
CALIBRATION_STEP_MS = 0.001
"""Calibration latencies are kept to the microsecond: about 0.1% of a sub-millisecond GET."""


@dataclass(frozen=True, slots=True)
class Fingerprint:
    cpu_model: str
    """`model name` of /proc/cpuinfo (the first processor's)."""
    cpus: int
    """Logical processors listed in /proc/cpuinfo."""
    memory_bytes: int
    """MemTotal of /proc/meminfo."""
    kernel: str
    """/proc/sys/kernel/osrelease."""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: object) -> "Fingerprint | None":
        """A fingerprint from summary.json or run.json; None when absent or incomplete (an older file)."""
        if not isinstance(data, dict):
            return None
        try:
            return cls(**{f.name: data[f.name] for f in fields(cls)})
        except (KeyError, TypeError):
            return None

    def key(self) -> str:
        """A folder name for this machine's baselines: readable, and different whenever a field differs."""
        digest = hashlib.sha1(repr(sorted(asdict(self).items())).encode()).hexdigest()[:8]
        model = "".join(c if c.isalnum() else "-" for c in self.cpu_model.lower()).strip("-")
        while "--" in model:
            model = model.replace("--", "-")
        return f"{model[:48].strip('-') or 'cpu'}-{self.cpus}c-{digest}"


def parse(cpuinfo: str, meminfo: str, osrelease: str) -> Fingerprint:
    """The fingerprint from the text of /proc/cpuinfo, /proc/meminfo and /proc/sys/kernel/osrelease."""
    models = [line.split(":", 1)[1].strip() for line in cpuinfo.splitlines()
              if line.split(":", 1)[0].strip() in ("model name", "Model", "cpu model")]
    processors = sum(1 for line in cpuinfo.splitlines() if line.split(":", 1)[0].strip() == "processor")
    memory_kib = next((int(line.split()[1]) for line in meminfo.splitlines() if line.startswith("MemTotal:")), 0)
    return Fingerprint(cpu_model=models[0] if models else "unknown", cpus=processors or (os.cpu_count() or 0),
                       memory_bytes=memory_kib * 1024, kernel=osrelease.strip())


def read(proc: Path = PROC) -> Fingerprint:
    """This machine's fingerprint, from /proc."""
    def text(relative: str) -> str:
        try:
            return (proc / relative).read_text()
        except OSError:
            return ""

    return parse(text("cpuinfo"), text("meminfo"), text("sys/kernel/osrelease"))


def differences(base: Fingerprint, new: Fingerprint) -> list[str]:
    """`field: base -> new` for every field the two machines do not share (memory within MEMORY_TOLERANCE)."""
    out = []
    if base.cpu_model != new.cpu_model:
        out.append(f"cpu_model: {base.cpu_model} -> {new.cpu_model}")
    if base.cpus != new.cpus:
        out.append(f"cpus: {base.cpus} -> {new.cpus}")
    largest = max(base.memory_bytes, new.memory_bytes, 1)
    if abs(base.memory_bytes - new.memory_bytes) / largest > MEMORY_TOLERANCE:
        out.append(f"memory: {base.memory_bytes / 2 ** 30:.1f} -> {new.memory_bytes / 2 ** 30:.1f} GiB")
    if base.kernel != new.kernel:
        out.append(f"kernel: {base.kernel} -> {new.kernel}")
    return out


@dataclass(frozen=True, slots=True)
class Calibration:
    """The p50 of a fixed load on the apiserver's own path, at the start of each case."""

    p50_ms: float
    """Median over the cases of each case's p50."""
    cases: tuple[float, ...]
    """Each case's p50 (ms), in case order."""
    requests: int
    """Requests per case."""
    path: str

    def to_dict(self) -> dict:
        return {"p50_ms": self.p50_ms, "cases": list(self.cases), "requests": self.requests, "path": self.path}

    @classmethod
    def from_dict(cls, data: object) -> "Calibration | None":
        if not isinstance(data, dict):
            return None
        try:
            return cls(float(data["p50_ms"]), tuple(float(v) for v in data["cases"]), int(data["requests"]),
                       str(data["path"]))
        except (KeyError, TypeError, ValueError):
            return None


def calibration_of(frame: pd.DataFrame | None) -> Calibration | None:
    """The run's calibration from its `calibration` table (one row per case); None when it has none."""
    if frame is None or frame.empty or "p50_ms" not in frame.columns:
        return None
    cases = tuple(float(v) for v in frame["p50_ms"] if pd.notna(v) and v > 0)
    if not cases:
        return None
    return Calibration(statistics.median(cases), cases, int(frame["requests"].max()), str(frame["path"].iloc[0]))
