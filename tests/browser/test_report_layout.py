"""report.html in real headless Chromium at 1400x900: the verdict and the side-by-side table are
what a reader sees first, without scrolling either way."""

from __future__ import annotations

import pytest

from harness.drivers import registry
from harness.reporting import rendering
from tests.browser import chromium
from tests.unit.reporting import builders

WIDTH, HEIGHT = 1400, 900
FIRST_ROWS = 3
"""The pivot's heading and this many rows must be on the first screen."""
SELECTORS = ["#verdict", "#verdict table", "#pivot table", "#pivot thead",
             *[f"#pivot tbody tr:nth-child({n})" for n in range(1, FIRST_ROWS + 1)]]

pytestmark = pytest.mark.browser


def above_the_fold(measured: dict) -> list[str]:
    """What a reader would have to scroll to see (empty when everything asked is on the first screen)."""
    problems = []
    for selector in SELECTORS:
        box = measured["boxes"].get(selector)
        if box is None or not box["shown"]:
            problems.append(f"{selector} is not on the page")
        elif box["bottom"] > HEIGHT or box["right"] > WIDTH or box["top"] < 0:
            problems.append(f"{selector} ends at ({box['right']:.0f}, {box['bottom']:.0f}), outside {WIDTH}x{HEIGHT}")
    if measured["scrollWidth"] > measured["innerWidth"]:
        problems.append(f"the page is {measured['scrollWidth']} px wide: it scrolls sideways")
    return problems


@pytest.fixture
def report(tmp_path):
    folder = builders.RunBuilder().write(tmp_path / "run")
    return rendering.render([folder], folder / "report.html", registry.drivers())


def test_verdict_and_pivot_are_visible_without_scrolling(report, tmp_path):
    measured = chromium.boxes(report, SELECTORS, WIDTH, HEIGHT, tmp_path)
    # the layout is WIDTH wide; boxes are measured from the page's top, so "on the first screen" is
    # bottom <= HEIGHT whatever height --dump-dom's window leaves to the page (its frame takes some)
    assert measured["innerWidth"] == WIDTH
    assert above_the_fold(measured) == []
    # the verdict comes first, the pivot right after it
    assert measured["boxes"]["#verdict"]["bottom"] <= measured["boxes"]["#pivot table"]["top"]
    shot = chromium.screenshot(report, tmp_path / "report.png", WIDTH, HEIGHT, tmp_path)
    assert chromium.png_size(shot) == (WIDTH, HEIGHT)


def test_the_check_catches_a_pivot_pushed_below_the_fold(report, tmp_path):
    # the same report with a tall block before the verdict: the measurement must say so
    pushed = report.with_name("pushed.html")
    pushed.write_text(report.read_text().replace('<section id="verdict">',
                                                 '<div style="height: 1200px">spacer</div><section id="verdict">'))
    problems = above_the_fold(chromium.boxes(pushed, SELECTORS, WIDTH, HEIGHT, tmp_path))
    assert any(p.startswith("#pivot table ") for p in problems) and any(p.startswith("#verdict ") for p in problems)


def test_a_wide_sweep_still_fits_the_width(tmp_path):
    # eight designs, some with long labels: headings wrap instead of pushing the page sideways
    designs = [builders.Design(name, query_p99_ms=10 + 7 * n, apiserver_rss=3e8 + 1e7 * n)
               for n, name in enumerate(["status-field", "single-object", "cq-status-topn", "aggregated-snapshot",
                                         "aggregated-indexed"])]
    designs += [builders.Design("status-field", query_p99_ms=50 + n, extra_params=params)
                for n, params in enumerate([{"scheduler.qps": 50, "scheduler.burst": 100},
                                            {"scheduler.no_client_limit": True},
                                            {"scheduler.qps": 500, "scheduler.burst": 1000}])]
    folder = builders.RunBuilder(designs=designs).write(tmp_path / "run")
    report = rendering.render([folder], folder / "report.html", registry.drivers())
    measured = chromium.boxes(report, SELECTORS, WIDTH, HEIGHT, tmp_path)
    assert above_the_fold(measured) == []
