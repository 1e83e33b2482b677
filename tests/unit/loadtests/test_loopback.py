"""Which apiserver URLs count as this machine, and the opt-in every refusal names."""

from __future__ import annotations

import pytest

from loadtests import loopback, settings as ls


@pytest.mark.parametrize("url, local", [
    ("https://127.0.0.1:6443", True),
    ("https://127.0.0.2:6443", True),
    ("http://127.255.0.9", True),
    ("https://localhost:6443", True),
    ("https://[::1]:6443", True),
    ("https://10.0.0.1:6443", False),
    ("https://[2001:db8::1]:6443", False),
    ("https://127.evil.example:6443", False),  # a name that starts like loopback is still a name
    ("https://localhost.example:6443", False),
    ("https://api.cluster.example", False),
    ("not a url", False),
    ("https://:6443", False),
])
def test_loopback_is_read_from_the_host_only(url, local):
    assert loopback.is_loopback(url) is local


def test_a_remote_url_is_refused_without_the_opt_in_and_the_refusal_names_it():
    why = loopback.refusal("https://10.0.0.1:6443", allow_remote=False)
    assert "--allow-remote" in why and "cluster.allow_remote: true" in why and "10.0.0.1" in why
    assert loopback.refusal("https://10.0.0.1:6443", allow_remote=True) == ""
    assert loopback.refusal("https://127.0.0.1:6443", allow_remote=False) == ""


def test_load_settings_refuse_a_remote_target_unless_it_carries_the_opt_in():
    remote = ls.Target(server="https://10.0.0.1:6443")
    with pytest.raises(ls.SettingsError, match="--allow-remote"):
        ls.LoadSettings(target=remote).validate()
    allowed = ls.LoadSettings(target=ls.Target(server="https://10.0.0.1:6443", allow_remote=True)).validate()
    # the opt-in travels with the settings to workers on other hosts
    assert ls.LoadSettings.from_json(allowed.to_json()).validate().target.allow_remote


@pytest.mark.parametrize("text, expected", [
    ("0.0.0.0:5557", ("0.0.0.0", 5557)), ("127.0.0.2:6000", ("127.0.0.2", 6000)), ("[::]:5557", ("::", 5557)),
    ("master.example:1", ("master.example", 1)),
])
def test_master_bind_spellings(text, expected):
    assert ls.host_port(text) == expected


@pytest.mark.parametrize("text", ["5557", ":5557", "host:", "host:0", "host:70000", "host:port"])
def test_bad_master_binds_are_refused(text):
    with pytest.raises(ls.SettingsError, match="HOST:PORT"):
        ls.host_port(text)


def test_remote_workers_need_a_port_they_can_be_told():
    plan = ls.RunPlan(settings=ls.LoadSettings(target=ls.Target(server="https://127.0.0.1:1")), locustfile="x",
                      remote_workers=2)
    with pytest.raises(ls.SettingsError, match="fixed master port"):
        plan.validate()
    assert ls.RunPlan(settings=plan.settings, locustfile="x", remote_workers=2, master_port=5557).validate().expected_workers == 2
