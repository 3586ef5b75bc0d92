"""The object-store settings of a lakehouse table, in the words of the library that reads its
metadata: a workspace on ``s3a://bucket`` carries Hadoop-style keys (``fs.s3a.endpoint`` ...);
pyiceberg takes ``s3.*`` properties and deltalake ``AWS_*`` storage options."""

from __future__ import annotations

from auger.storage import filesystem as fs

__all__ = ["delta_storage_options", "iceberg_properties", "same_store_path"]

_S3 = ("s3", "s3a", "s3n")


def _settings(location: str) -> dict[str, str]:
    if not fs.is_uri(location):
        return {}
    return dict(fs.settings_of(location).options)


def _endpoint(settings: dict[str, str]) -> str | None:
    endpoint = settings.get("fs.s3a.endpoint")
    if not endpoint:
        return None
    if "://" in endpoint:
        return endpoint.rstrip("/")
    ssl = settings.get("fs.s3a.connection.ssl.enabled", "true").lower() in ("true", "1", "yes")
    return f"{'https' if ssl else 'http'}://{endpoint.rstrip('/')}"


#: Our Hadoop-style keys, then each library's name for the same setting.
_ICEBERG = {
    "endpoint": "s3.endpoint",
    "fs.s3a.access.key": "s3.access-key-id",
    "fs.s3a.secret.key": "s3.secret-access-key",
    "fs.s3a.session.token": "s3.session-token",
    "region": "s3.region",
}
_DELTA = {
    "endpoint": "AWS_ENDPOINT_URL",
    "fs.s3a.access.key": "AWS_ACCESS_KEY_ID",
    "fs.s3a.secret.key": "AWS_SECRET_ACCESS_KEY",
    "fs.s3a.session.token": "AWS_SESSION_TOKEN",
    "region": "AWS_REGION",
}


def _translated(location: str, names: dict[str, str]) -> dict[str, str]:
    """The workspace's store settings under the names one library reads."""
    settings = _settings(location)
    out: dict[str, str] = {}
    endpoint = _endpoint(settings)
    if endpoint:
        out[names["endpoint"]] = endpoint
    for ours in ("fs.s3a.access.key", "fs.s3a.secret.key", "fs.s3a.session.token"):
        if settings.get(ours):
            out[names[ours]] = settings[ours]
    region = settings.get("fs.s3a.endpoint.region") or settings.get("fs.s3a.region")
    if region or endpoint:
        out[names["region"]] = region or "us-east-1"  # a custom endpoint has no region
    return out


def iceberg_properties(location: str) -> dict[str, str]:
    return _translated(location, _ICEBERG)


def delta_storage_options(location: str) -> dict[str, str]:
    out = _translated(location, _DELTA)
    if out.get("AWS_ENDPOINT_URL", "").startswith("http://"):
        out["AWS_ALLOW_HTTP"] = "true"
    return out


def same_store_path(path: str, location: str) -> str:
    """A data file's path as the table's workspace names its store: a table written through
    ``s3://bucket`` and read through an ``s3a://bucket`` workspace names the same objects."""
    if path.startswith("file://"):
        return path[len("file://") :]
    scheme, sep, rest = path.partition("://")
    ours, osep, _ = location.partition("://")
    if sep and osep and scheme.lower() in _S3 and ours.lower() in _S3:
        return f"{ours}://{rest}"
    return path
