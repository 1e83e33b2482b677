"""Putting Kueue's API on a cluster: its CRDs, certificates, Services, Secret and APIServices.

The manager runs on 127.0.0.1, outside any pod, so kqbench does what a kubelet and kustomize would:
it generates the certificates (harness.kube.pki), writes the webhook pair where the manager reads it, and
points ExternalName Services at localhost. Kueue's CRDs and the reference scheduler's carry the same
names with different schemas: a cluster holds one set or the other, never both
(`apiservice.apply_crds` labels them and refuses to mix).
"""

from __future__ import annotations

import fcntl
import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.clusters import state
from harness.errors import KqbenchError
from harness.implementations.kueue import manifests
from harness.kube import apiservice, pki, rest
from harness.kube.kubeconfig import Credentials
from harness.toolchain import layout

VISIBILITY_CERT_DIR = Path("/visibility")
"""Fixed in Kueue's visibility server (pkg/visibility/server.go); it reads apiserver.crt/.key there."""


@dataclass(frozen=True, slots=True)
class Files:
    """Where one cluster's Kueue files live."""

    folder: Path

    @property
    def config(self) -> Path:
        return self.folder / "config.yaml"

    @property
    def cert_dir(self) -> Path:
        return self.folder / "webhook-certs"

    @property
    def webhook_ca(self) -> tuple[Path, Path]:
        return self.folder / "webhook-ca.crt", self.folder / "webhook-ca.key"


def files_for(info: state.ClusterInfo) -> Files:
    """In the cluster's work folder when it has one (removed by `cluster down`), else in kqbench's state."""
    base = Path(info.workdir) if info.workdir else state.state_root() / "kueue-clusters" / info.name
    return Files(base / "kueue")


def read_documents(folder: Path) -> list[dict]:
    """Every YAML document of the *.yaml files in folder, in file order (empty documents dropped)."""
    docs: list[dict] = []
    for path in sorted(folder.glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
    return docs


def install_crds(creds: Credentials, kueue: layout.KueueBuild, webhook_port: int) -> None:
    """Apply Kueue's own CRDs (patched for a local manager) and wait until they are Established."""
    crds = [manifests.patch_crd(doc, webhook_port) for doc in read_documents(kueue.crd_dir)]
    apiservice.apply_crds(creds, crds, f"kueue-{kueue.version}")


def _webhook_pair(files: Files) -> tuple[pki.KeyPair, pki.KeyPair]:
    """CA and serving pair of the webhook, made once per cluster folder."""
    ca_cert, ca_key = files.webhook_ca
    tls_crt, tls_key = files.cert_dir / "tls.crt", files.cert_dir / "tls.key"
    if not (ca_cert.exists() and ca_key.exists() and tls_crt.exists() and tls_key.exists()):
        ca = pki.make_ca(manifests.CA_NAME, rsa_pkcs1=True)
        ca.write(ca_cert, ca_key)
        host = f"{manifests.WEBHOOK_SERVICE}.{manifests.NAMESPACE}.svc"
        pki.make_serving_cert(ca, [host, "localhost"]).write(tls_crt, tls_key)
        (files.cert_dir / "ca.crt").write_bytes(ca.cert_pem)
    return (pki.KeyPair(ca_cert.read_bytes(), ca_key.read_bytes()),
            pki.KeyPair(tls_crt.read_bytes(), tls_key.read_bytes()))


def visibility_ca(target: Path = VISIBILITY_CERT_DIR) -> bytes:
    """Make sure Kueue's visibility server will serve a kqbench certificate; return the CA to trust.

    The folder is machine-wide (every cluster, every kqbench state folder), so its CA lives there too
    and a pair it signed is kept: replacing it would change the certificate a running Kueue serves
    (it reloads the files). The lock keeps two starting runs from writing it at once.
    """
    ca_path, cert_path, key_path = target / "kqbench-ca.crt", target / "apiserver.crt", target / "apiserver.key"
    try:
        target.mkdir(parents=True, exist_ok=True)
        with (target / ".kqbench.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (ca_path.exists() and cert_path.exists() and key_path.exists()
                    and pki.is_signed_by(cert_path.read_bytes(), ca_path.read_bytes())):
                ca = pki.make_ca("kqbench-kueue-visibility-ca")
                host = f"{manifests.NAME_PREFIX}{manifests.VISIBILITY_SERVICE}.{manifests.NAMESPACE}.svc"
                pair = pki.make_serving_cert(ca, [host, "localhost"])
                staged_cert, staged_key = target / ".apiserver.crt.new", target / ".apiserver.key.new"
                pair.write(staged_cert, staged_key)
                staged_key.replace(key_path)
                staged_cert.replace(cert_path)
                ca_path.write_bytes(ca.cert_pem)
            return ca_path.read_bytes()
    except PermissionError:
        raise KqbenchError(
            f"Kueue's visibility server reads its certificate from the fixed folder {target}, which this user "
            f"cannot write: create it (sudo mkdir {target} && sudo chown $USER {target})") from None


def install_objects(creds: Credentials, kueue: layout.KueueBuild, files: Files, ports: manifests.Ports) -> None:
    """Namespace, webhook Secret and Service, visibility Service and APIServices (CRDs come first)."""
    ca, serving = _webhook_pair(files)
    objects = [manifests.namespace(),
               manifests.webhook_secret(ca.cert_pem, ca.key_pem, serving.cert_pem, serving.key_pem),
               manifests.external_service(manifests.WEBHOOK_SERVICE, ports.webhook)]
    objects += manifests.visibility_objects(read_documents(kueue.visibility_dir), visibility_ca(), ports.visibility)
    objects += manifests.metrics_reader_objects()
    for path, obj in objects:
        rest.apply(creds, path, obj)


def metrics_token(creds: Credentials, seconds: int = 86400) -> str:
    """A bearer token of the metrics reader (TokenRequest), for scraping Kueue's /metrics."""
    path = f"/api/v1/namespaces/{manifests.NAMESPACE}/serviceaccounts/{manifests.METRICS_READER}/token"
    status, body = rest.request(creds, "POST", path, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                                      "spec": {"expirationSeconds": seconds}})
    if status >= 300:
        raise KqbenchError(f"cannot get a token to read Kueue's metrics ({status}): {body[:200]!r}")
    return json.loads(body)["status"]["token"]


def shipped_client_limits(kueue: layout.KueueBuild) -> tuple[float, int]:
    """(qps, burst) of the clientConnection in the Configuration this Kueue version ships."""
    shipped = yaml.safe_load(kueue.manager_config.read_text()).get("clientConnection") or {}
    if "qps" not in shipped or "burst" not in shipped:
        raise KqbenchError(f"Kueue {kueue.version}'s {kueue.manager_config} names no clientConnection qps and burst: "
                           f"set scheduler.qps and scheduler.burst")
    return float(shipped["qps"]), int(shipped["burst"])


def write_config(kueue: layout.KueueBuild, files: Files, settings: manifests.ManagerSettings) -> Path:
    shipped = yaml.safe_load(kueue.manager_config.read_text())
    files.config.parent.mkdir(parents=True, exist_ok=True)
    files.config.write_text(yaml.safe_dump(manifests.configuration(shipped, settings), sort_keys=False))
    return files.config
