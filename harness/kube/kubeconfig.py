"""Reading a kubeconfig for the harness's own clients, the way kubectl reads it.

The `kubernetes` client's loader does the reading (client certificates, tokens and token files,
exec plugins, auth providers, relative paths, several contexts): a well-kept implementation of
kubectl's rules rather than one of ours. What it resolves becomes the plain `Credentials` our
HTTP clients take; inline `*-data` fields become 0600 files in this process's private folder.
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import KqbenchError
from loadtests import loopback, settings as load_settings
from scheduler.kube import kubeconfig as reader

Credentials = reader.Credentials
_BEARER = "Bearer "


def _configuration(path: Path, context: str | None):
    # Imported here: the client package takes a while to import and most commands never read a kubeconfig.
    import yaml
    from kubernetes import client
    from kubernetes.config import config_exception, kube_config

    configuration = client.Configuration()
    try:
        kube_config.load_kube_config(config_file=str(path), context=context, client_configuration=configuration,
                                     persist_config=False, temp_file_path=str(reader.private_folder()))
    except (config_exception.ConfigException, yaml.YAMLError, KeyError, TypeError, ValueError) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise KqbenchError(f"kubeconfig {path} cannot be used (context {context or 'current-context'}): "
                           f"{first_line}") from None
    return configuration


def load(path: str | Path, context: str | None = None) -> Credentials:
    """Credentials of the current (or named) context; a bad file is a one-line KqbenchError."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise KqbenchError(f"kubeconfig {path} does not exist: pass --kubeconfig with an existing file")
    configuration = _configuration(path, context)
    authorization = configuration.api_key.get("BearerToken") or ""
    if authorization and not authorization.startswith(_BEARER):
        raise KqbenchError(f"kubeconfig {path}: only client certificates and bearer tokens are supported "
                           "(this user logs in with a password)")
    return Credentials(server=configuration.host.rstrip("/"), ca_file=configuration.ssl_ca_cert or None,
                       cert_file=configuration.cert_file or None, key_file=configuration.key_file or None,
                       token=authorization[len(_BEARER):] or None, insecure=not configuration.verify_ssl)


def server(path: str | Path, context: str | None = None) -> str:
    """The apiserver URL of the current (or named) context, read without logging in (no plugin runs)."""
    from kubernetes.config import config_exception, kube_config

    path = Path(path).expanduser()
    if not path.is_file():
        raise KqbenchError(f"kubeconfig {path} does not exist: pass --kubeconfig with an existing file")
    try:
        contexts, current = kube_config.list_kube_config_contexts(str(path))
        chosen = next(c for c in contexts if c["name"] == (context or current["name"]))
        clusters = kube_config.KubeConfigMerger(str(path)).config["clusters"]
        return str(clusters.get_with_name(chosen["context"]["cluster"])["cluster"]["server"]).rstrip("/")
    except (config_exception.ConfigException, StopIteration, KeyError, TypeError) as error:
        raise KqbenchError(f"kubeconfig {path}: context {context or 'current-context'} names no cluster "
                           f"server ({str(error).strip() or type(error).__name__})") from None


def load_target(path: str | Path, allow_remote: bool, context: str | None = None) -> load_settings.Target:
    """Where load goes and with which credentials; a remote apiserver is refused without the opt-in,
    before any credential plugin runs and before any request."""
    if why := loopback.refusal(server(path, context), allow_remote):
        raise KqbenchError(why)
    creds = load(path, context)
    return load_settings.Target(server=creds.server, ca_file=creds.ca_file, cert_file=creds.cert_file,
                                key_file=creds.key_file, token=creds.token, insecure=creds.insecure,
                                allow_remote=allow_remote)
