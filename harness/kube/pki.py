"""Certificates for the aggregation layer: a CA, serving certs with SANs, client certs (pure; PEM out)."""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from scheduler import listening

VALIDITY = dt.timedelta(days=365)


@dataclass(frozen=True, slots=True)
class KeyPair:
    cert_pem: bytes
    key_pem: bytes

    def write(self, cert_path: Path, key_path: Path) -> None:
        cert_path.parent.mkdir(parents=True, exist_ok=True)
        cert_path.write_bytes(self.cert_pem)
        key_path.write_bytes(self.key_pem)
        key_path.chmod(0o600)


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def make_ca(common_name: str, now: dt.datetime | None = None, rsa_pkcs1: bool = False) -> KeyPair:
    """A self-signed CA.

    rsa_pkcs1: an RSA key in PKCS#1 PEM and the CN repeated as a DNS name, the only CA that Kueue's
    certificate rotator (open-policy-agent/cert-controller) accepts in its Secret instead of replacing it.
    """
    now = now or dt.datetime.now(dt.timezone.utc)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048) if rsa_pkcs1 else _key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    builder = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                     content_commitment=False, key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
    )
    if rsa_pkcs1:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(common_name)]), critical=False)
        key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                    serialization.NoEncryption())
    else:
        key_pem = _key_pem(key)
    cert = builder.sign(key, hashes.SHA256())
    return KeyPair(cert.public_bytes(serialization.Encoding.PEM), key_pem)


def _sign(ca: KeyPair, common_name: str, usage, sans: list[x509.GeneralName], organisations: tuple[str, ...] = (),
          now: dt.datetime | None = None) -> KeyPair:
    now = now or dt.datetime.now(dt.timezone.utc)
    ca_cert = x509.load_pem_x509_certificate(ca.cert_pem)
    ca_key = serialization.load_pem_private_key(ca.key_pem, password=None)
    key = _key()
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organisations]
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    builder = (
        x509.CertificateBuilder().subject_name(x509.Name(attributes)).issuer_name(ca_cert.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def make_serving_cert(ca: KeyPair, dns_names: list[str], ips: list[str] = (listening.LOOPBACK,)) -> KeyPair:
    """A TLS server certificate for dns_names (first one is the CN) and loopback IPs."""
    sans: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
    return _sign(ca, dns_names[0], ExtendedKeyUsageOID.SERVER_AUTH, sans)


def make_client_cert(ca: KeyPair, common_name: str, organisations: tuple[str, ...] = ()) -> KeyPair:
    """A TLS client certificate; Kubernetes reads CN as the user and O as groups."""
    return _sign(ca, common_name, ExtendedKeyUsageOID.CLIENT_AUTH, [], organisations)


def common_name(cert_pem: bytes) -> str:
    cert = x509.load_pem_x509_certificate(cert_pem)
    return cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value


def dns_names(cert_pem: bytes) -> list[str]:
    cert = x509.load_pem_x509_certificate(cert_pem)
    return cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName)


def is_signed_by(cert_pem: bytes, ca_pem: bytes) -> bool:
    """Whether cert_pem was issued and signed by the CA in ca_pem."""
    try:
        cert = x509.load_pem_x509_certificate(cert_pem)
        cert.verify_directly_issued_by(x509.load_pem_x509_certificate(ca_pem))
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True
