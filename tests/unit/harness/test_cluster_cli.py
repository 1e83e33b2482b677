"""`kqbench cluster up` refuses a node count it cannot honour before anything starts."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from harness.cli import cluster


@pytest.mark.parametrize("args", [["--nodes", "0"], ["--nodes", "-1"], ["--nodes", "-1", "--backend", "existing"]])
def test_a_node_count_below_one_is_refused_unless_a_cluster_is_adopted(args, tmp_path):
    result = CliRunner().invoke(cluster.group, ["up", "--name", "never-started", *args])
    assert result.exit_code == 2
    assert "0 only with --backend existing" in result.output
