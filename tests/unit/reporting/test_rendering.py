"""The report renders from any run folder, also one where nothing was measured; exports are valid."""

from __future__ import annotations

import json
from xml.etree import ElementTree as ET

import pandas as pd

from harness.drivers import registry
from harness.reporting import exporting, rendering
from harness.results import runs, tables


def _run_folder(tmp_path, with_data: bool):
    record = runs.RunRecord("r1", "tiny", "tiny.yaml", {"scheduler": {"strategy": "aggregated-indexed"},
                                                         "phases": {"fill": {"kind": "fill", "pending": 100}}}, [],
                            cases=[runs.CaseRecord("c,r0", "c", {}, 0, status="ok")], status="ok")
    runs.write_run(tmp_path, record)
    if with_data:
        slo = pd.DataFrame([{"case": "c,r0", "phase": "churn", "verb": "GET", "group": "", "resource": "pods",
                             "subresource": "", "scope": "resource", "kind": "read-single", "count": 500.0,
                             "p99_seconds": 2.0, "threshold_seconds": 1.0, "passed": False, "metric": "m"}])
        census = pd.DataFrame([{"case": "c,r0", "resource": "configmaps", "count": 1, "total_bytes": 10,
                                "max_bytes": 2_000_000, "p50_bytes": 10, "p99_bytes": 10, "largest_key": "k"}])
        obs = tables.observations([("c,r0", "process", "rss_bytes", {"component": "etcd"}, "churn", t, 1e8 + t)
                                   for t in range(3)])
        tables.write(tmp_path, {"slo": slo, "census": census, "observations": obs})
    return tmp_path


def test_report_without_measurements_says_not_measured(tmp_path):
    out = rendering.render([_run_folder(tmp_path, with_data=False)], tmp_path / "report.html", registry.drivers())
    text = out.read_text()
    assert text.count("data:image/png;base64,") == 0  # no empty panels: the figures are named instead
    assert "Not measured in this run: apiserver writes/s per design;" in text
    assert json.loads((tmp_path / "perfdata.json").read_text())["dataItems"] == []
    ET.fromstring((tmp_path / "junit.xml").read_bytes())


def test_report_with_data_embeds_and_exports(tmp_path):
    out = rendering.render([_run_folder(tmp_path, with_data=True)], tmp_path / "report.html", registry.drivers())
    text = out.read_text()
    assert "FAIL" in text and "configmaps" in text and "<script" not in text
    perf = json.loads((tmp_path / "perfdata.json").read_text())
    assert perf["version"] == exporting.PERFDATA_VERSION
    assert perf["dataItems"][0]["data"]["Perc99"] == 2000.0 and perf["dataItems"][0]["unit"] == "ms"
    suite = ET.fromstring((tmp_path / "junit.xml").read_bytes())
    assert suite.get("tests") == "1" and suite.get("failures") == "1"


def test_text_from_the_run_is_escaped_not_markup(tmp_path):
    record = runs.RunRecord("r<b>1</b>", "tiny", "tiny.yaml", {"scheduler": {"strategy": "aggregated-indexed"},
                                                                "phases": {}}, [], status="failed",
                            cases=[runs.CaseRecord("c,r0", "c", {}, 0, status="failed",
                                                   error="<script>alert(1)</script>")])
    runs.write_run(tmp_path, record)
    text = rendering.render([tmp_path], tmp_path / "report.html", registry.drivers()).read_text()
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "r<b>1</b>" not in text and "r&lt;b&gt;1&lt;/b&gt;" in text


def test_a_report_opens_offline_and_puts_the_verdict_and_the_table_first(tmp_path):
    from tests.unit.reporting import builders

    folder = builders.RunBuilder().write(tmp_path / "run")
    text = rendering.render([folder], folder / "report.html", registry.drivers()).read_text()
    assert "<script" not in text and "http://" not in text and "https://" not in text and "<link" not in text
    assert text.count("data:image/png;base64,") == 5
    order = [text.index(marker) for marker in ('id="verdict"', 'id="pivot"', "<h2>Figures", 'id="slo"', "<h2>Cases")]
    assert order == sorted(order)
    verdict = text[text.index('id="verdict"'):text.index('id="pivot"')]
    assert "95% CI" in verdict and "n=1,000" in verdict and "1 repeat, no interval" in verdict
    # the 2-request check is named as insufficient, not as a failure
    slo = text[text.index('id="slo"'):text.index("<h2>Cases")]
    assert "Failures (0)" in slo and "queuepositions" in slo and "insufficient samples" in slo
