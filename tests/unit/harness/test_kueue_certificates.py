"""The machine-wide certificate folder of Kueue's visibility server (a temporary folder here)."""

from harness.implementations.kueue import installing
from harness.kube import pki


def test_visibility_pair_is_made_once_and_kept_for_every_later_start(tmp_path):
    ca = installing.visibility_ca(tmp_path)
    cert = (tmp_path / "apiserver.crt").read_bytes()
    assert pki.is_signed_by(cert, ca)
    assert "kueue-visibility-server.kueue-system.svc" in pki.dns_names(cert)
    # A second start (another cluster, another kqbench state folder) trusts the same CA, and the
    # files a running Kueue reloads are left alone.
    assert installing.visibility_ca(tmp_path) == ca
    assert (tmp_path / "apiserver.crt").read_bytes() == cert


def test_a_pair_kqbench_did_not_sign_is_replaced(tmp_path):
    foreign = pki.make_ca("kueue-self-signed")
    pki.make_serving_cert(foreign, ["localhost"]).write(tmp_path / "apiserver.crt", tmp_path / "apiserver.key")
    ca = installing.visibility_ca(tmp_path)
    assert ca != foreign.cert_pem
    assert pki.is_signed_by((tmp_path / "apiserver.crt").read_bytes(), ca)
    assert not pki.is_signed_by((tmp_path / "apiserver.crt").read_bytes(), foreign.cert_pem)
