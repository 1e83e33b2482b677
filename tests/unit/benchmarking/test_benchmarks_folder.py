"""benchmarks/ holds two kinds only (benchmarks/README.md): micro-benchmarks of pure code in micro/, benchmarks of
kqbench's own machinery in tooling/, beside scripts/ (README tables from run data). An experiment on a queueing
design is a driver under harness/drivers/ that `kqbench run` runs, never a script here."""

from __future__ import annotations

from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"

FOLDERS = {"micro", "tooling", "scripts"}
"""The folders benchmarks/ has (besides caches)."""

def test_benchmarks_has_its_three_folders_and_no_other():
    folders = {p.name for p in BENCHMARKS.iterdir() if p.is_dir() and p.name != "__pycache__" and not p.name.startswith(".")}
    assert folders == FOLDERS, (f"benchmarks/ has {sorted(folders)}, expected {sorted(FOLDERS)}: a benchmark goes in "
                                "micro/ or tooling/, an experiment is a driver")


def test_no_new_script_at_the_top_of_benchmarks():
    strays = sorted(p.name for p in BENCHMARKS.glob("*.py"))
    assert not strays, (f"{strays} directly under benchmarks/: a micro-benchmark of pure code goes in micro/, one of "
                        "kqbench's own machinery in tooling/, an experiment on a queueing design is a driver "
                        "(harness/drivers/, run by `kqbench run`)")

