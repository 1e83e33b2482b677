"""Credentials travel to a worker as contents and become that worker's own private files."""

from __future__ import annotations

import stat
from pathlib import Path

from loadtests import credentials, settings as ls


def test_a_target_travels_as_contents_and_comes_back_as_private_files(tmp_path):
    for name, text in (("ca.crt", "CA PEM"), ("client.crt", "CERT PEM"), ("client.key", "KEY PEM")):
        (tmp_path / name).write_text(text)
    target = ls.Target(server="https://10.0.0.1:6443", ca_file=str(tmp_path / "ca.crt"),
                       cert_file=str(tmp_path / "client.crt"), key_file=str(tmp_path / "client.key"),
                       token="t0ken", allow_remote=True)

    sent = ls.LoadSettings.from_json(ls.LoadSettings(target=credentials.portable(target)).to_json()).target
    assert (sent.ca_file, sent.cert_file, sent.key_file) == (None, None, None)  # no path of the master's disk
    assert (sent.ca_pem, sent.cert_pem, sent.key_pem, sent.token) == ("CA PEM", "CERT PEM", "KEY PEM", "t0ken")

    for name in ("ca.crt", "client.crt", "client.key"):  # the worker's machine does not have them
        (tmp_path / name).unlink()
    here = credentials.materialised(sent)
    assert [Path(f).read_text() for f in (here.ca_file, here.cert_file, here.key_file)] == ["CA PEM", "CERT PEM", "KEY PEM"]
    assert stat.S_IMODE(Path(here.key_file).stat().st_mode) == 0o600
    assert (here.ca_pem, here.cert_pem, here.key_pem) == (None, None, None)
    assert here.server == target.server and here.allow_remote and here.token == "t0ken"


def test_a_target_with_paths_only_is_left_as_it_is():
    target = ls.Target(server="https://127.0.0.1:1", ca_file="/somewhere/ca.crt")
    assert credentials.materialised(target) is target
