"""Real headless Chromium for the report's layout tests: where elements land in a viewport, and a
screenshot. The report has no scripts; a copy of it gets one that writes element boxes into the
page, which Chromium's --dump-dom then prints."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

TIMEOUT_SECONDS = 120
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
"""Looked up on PATH in this order (the Makefile's `browser` target installs the first)."""
MEASURE = """<script>
window.addEventListener('load', () => {
  const boxes = {};
  for (const selector of %s) {
    const found = document.querySelector(selector);
    if (!found) { boxes[selector] = null; continue; }
    const r = found.getBoundingClientRect();
    const style = getComputedStyle(found);
    boxes[selector] = {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
                       shown: style.display !== 'none' && style.visibility !== 'hidden' && r.height > 0};
  }
  const out = document.createElement('pre');
  out.id = 'kqbench-boxes';
  out.textContent = JSON.stringify({boxes, scrollWidth: document.documentElement.scrollWidth,
                                    innerWidth: window.innerWidth, innerHeight: window.innerHeight});
  document.body.appendChild(out);
});
</script>"""


def binary() -> str:
    """The chromium on PATH; the test fails (never skips) without it, so CI cannot pass vacuously."""
    found = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if found is None:
        raise AssertionError("chromium is not installed: `make browser` installs it (apt-get install chromium)")
    return found


def _run(args: list[str], profile: Path) -> str:
    # its own session, so that a hung Chromium and every helper process it started are killed together
    command = [binary(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               f"--user-data-dir={profile}", *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               start_new_session=True)
    try:
        out, _ = process.communicate(timeout=TIMEOUT_SECONDS)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    if process.returncode != 0:
        raise AssertionError(f"chromium exited {process.returncode}: {' '.join(command)}")
    return out


def boxes(page: Path, selectors: list[str], width: int, height: int, work: Path) -> dict:
    """{boxes: {selector: {top, bottom, left, right, shown} | None}, scrollWidth, innerWidth, innerHeight}."""
    measured = work / f"measured-{page.name}"
    text = page.read_text()
    measured.write_text(text.replace("</body>", MEASURE % json.dumps(selectors) + "</body>"))
    dom = _run([f"--window-size={width},{height}", "--virtual-time-budget=5000", "--dump-dom",
                measured.resolve().as_uri()], work / "profile")
    found = re.search(r'<pre id="kqbench-boxes">(.*?)</pre>', dom, re.S)
    if found is None:
        raise AssertionError("the measuring script wrote nothing: did the page load?")
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def screenshot(page: Path, out: Path, width: int, height: int, work: Path) -> Path:
    _run([f"--window-size={width},{height}", f"--screenshot={out.resolve()}", page.resolve().as_uri()], work / "profile")
    return out


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk."""
    header = path.read_bytes()[:24]
    if header[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError(f"{path} is not a PNG")
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")
