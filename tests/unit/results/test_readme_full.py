"""`kqbench readme --check --full`: a block whose raw input went to the results store renders after a pull."""

from __future__ import annotations

from click.testing import CliRunner

from harness.cli import readme
from harness.results import stores, storing

BLOCK = """# a topic

<!-- table: rows
file: run/figures.json
columns:
  case: "{case}"
  seconds: "{seconds:.1f}"
-->
<!-- end table -->
"""


def test_full_pulls_a_pushed_runs_raw_data_before_rendering(tmp_path, monkeypatch):
    monkeypatch.setenv(stores.ADDRESS_VARIABLE, str(tmp_path / "store"))
    topic = tmp_path / "results" / "topic"
    (topic / "run").mkdir(parents=True)
    (topic / "run" / "figures.json").write_text('[{"case": "r0", "seconds": 12.34}]')
    (topic / "README.md").write_text(BLOCK)
    runner = CliRunner()
    assert runner.invoke(readme.command, ["--root", str(tmp_path)]).exit_code == 0
    assert "| r0 | 12.3 |" in (topic / "README.md").read_text()
    storing.push(topic / "run", stores.open_store())
    (topic / "run" / "figures.json").unlink()  # as a clone has it: the raw file is in the store only

    without = runner.invoke(readme.command, ["--root", str(tmp_path), "--check"])
    assert without.exit_code != 0 and "kqbench results pull" in str(without.exception)
    full = runner.invoke(readme.command, ["--root", str(tmp_path), "--check", "--full"])
    assert full.exit_code == 0, full.output
    assert (topic / "run" / "figures.json").is_file()
