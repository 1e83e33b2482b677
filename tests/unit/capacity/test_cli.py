"""`kqbench capacity`: options become scenario overrides; the dry run estimates; progress lines read well."""

from __future__ import annotations

from click.testing import CliRunner

from harness.cli import capacity as cli
from harness.drivers.capacity import commanding, running, searching
from harness.scenarios import loading


def test_options_become_overrides_recorded_in_the_run():
    base = loading.load("capacity-positions").scenario
    items = commanding.overrides_for(base, "queue.pending", 500, 4000, ("single-object", "status-field"))
    loaded = loading.load("capacity-positions", items)
    assert [c.id for c in loaded.cases] == ["strategy=single-object,r0",
                                            "strategy=status-field,qps=50.0,burst=100,no_client_limit=False,r0",
                                            "strategy=status-field,no_client_limit=True,r0"]
    _, phase = commanding.capacity_phase(loaded.cases[0].scenario)
    assert (phase.start, phase.stop) == (500, 4000)


def test_dry_run_lists_designs_and_an_estimate_that_grows_with_the_range():
    result = CliRunner().invoke(cli.command, ["capacity-positions", "--strategies", "aggregated-indexed",
                                              "--to", "4000", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "strategy=aggregated-indexed,r0: geometric x4 from 1000 to 4000" in result.output
    small = commanding.estimate(c.scenario for c in loading.load("capacity-positions", ["phases.capacity.to=4000"]).cases)
    large = commanding.estimate(c.scenario for c in loading.load("capacity-positions").cases)
    assert small[0] < large[0] and large[0] <= large[1]


def test_bulk_fills_each_step_from_etcd_and_a_churn_share_above_the_first_load_is_refused():
    result = CliRunner().invoke(cli.command, ["capacity-positions", "--strategies", "aggregated-indexed",
                                              "--from", "20000", "--to", "160000", "--bulk", "--dry-run"])
    assert result.exit_code == 0, result.output
    bulk = commanding.estimate(c.scenario for c in loading.load(
        "capacity-positions", ["phases.capacity.from=20000", "phases.capacity.to=160000", "phases.capacity.bulk=true"]).cases)
    posted = commanding.estimate(c.scenario for c in loading.load(
        "capacity-positions", ["phases.capacity.from=20000", "phases.capacity.to=160000"]).cases)
    assert bulk[0] < posted[0]
    refused = CliRunner().invoke(cli.command, ["capacity-positions", "--from", "40", "--bulk", "--dry-run"])
    assert "churn_pending (50) must be below the search's first load (from: 40)" in str(refused.exception)


def test_bad_strategy_is_one_clear_error():
    result = CliRunner().invoke(cli.command, ["capacity-positions", "--strategies", "warp", "--dry-run"])
    assert result.exit_code != 0 and "warp is not a strategy" in result.output


def test_progress_names_the_break_and_the_figures_measured():
    step = searching.Step(2, 4000, searching.BISECTION,
                          searching.Verdict(("staleness_p99",), "position staleness p99 45.00 s > 30.00 s",
                                            {"admissions_per_second": 16.4, "staleness_p99_seconds": 45.0}))
    assert running.progress(step) == ("BROKE (position staleness p99 45.00 s > 30.00 s) "
                                      "[admissions/s 16, staleness p99 s 45.00]")
