"""A local S3-compatible server for the object-storage tests (moto, in-process, 127.0.0.1)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

#: moto accepts any credentials while its auth checks are off (they are, by default)
ACCESS_KEY = "testing-access"
SECRET_KEY = "testing-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LocalS3:
    """A running moto server and a boto3 client on it."""

    endpoint: str
    client: Any
    #: every request the server received while :meth:`recording`: (method, path, query)
    _log: list[tuple[str, str, str]] | None = field(default=None, repr=False)
    _log_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @contextlib.contextmanager
    def recording(self) -> Iterator[list[tuple[str, str, str]]]:
        """The requests the server receives inside the block (from any client), as
        (method, path, query string), in arrival order."""
        log: list[tuple[str, str, str]] = []
        self._log = log
        try:
            yield log
        finally:
            self._log = None

    def _seen(self, environ: Mapping[str, Any]) -> None:
        log = self._log
        if log is not None:
            entry = (
                str(environ.get("REQUEST_METHOD", "")),
                str(environ.get("PATH_INFO", "")),
                str(environ.get("QUERY_STRING", "")),
            )
            with self._log_lock:
                log.append(entry)

    def put(self, bucket: str, key: str, body: bytes | str) -> None:
        data = body.encode() if isinstance(body, str) else body
        self.client.put_object(Bucket=bucket, Key=key, Body=data)

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        out: list[str] = []
        for page in self.client.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=prefix
        ):
            out.extend(o["Key"] for o in page.get("Contents", []))
        return sorted(out)

    def bucket(self, name: str) -> str:
        self.client.create_bucket(Bucket=name)
        return name

    def plugin(
        self, bucket: str, workspaces: Mapping[str, Any] | None = None, **extra: str
    ) -> dict[str, Any]:
        """A ``type = "file"`` plugin config on ``s3a://bucket`` with Hadoop-style keys."""
        config = {
            "fs.s3a.endpoint": self.endpoint,
            "fs.s3a.access.key": ACCESS_KEY,
            "fs.s3a.secret.key": SECRET_KEY,
            "fs.s3a.path.style.access": "true",
            **extra,
        }
        return {
            "type": "file",
            "connection": f"s3a://{bucket}",
            "config": config,
            "workspaces": dict(
                workspaces
                or {
                    "root": {"location": "/", "writable": False},
                    "tmp": {"location": "/tmp", "writable": True},
                }
            ),
        }


def start_local_s3() -> Iterator[LocalS3]:
    import boto3
    from moto.server import ThreadedMotoServer

    # port 0: the server binds a port the system picks (a port looked up free and bound later
    # may be taken in between, and then start() would wait forever for a server that failed)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{server.get_host_and_port()[1]}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        region_name="us-east-1",
    )
    local = LocalS3(endpoint, client)
    wsgi = server._server
    assert wsgi is not None
    wsgi.app = _counting(wsgi.app, local._seen)
    try:
        yield local
    finally:
        server.stop()


def _counting(app: Any, seen: Callable[[Mapping[str, Any]], None]) -> Any:
    """The server's WSGI application, telling ``seen`` of each request first."""

    def wrapped(environ: dict[str, Any], start_response: Any) -> Any:
        seen(environ)
        return app(environ, start_response)

    return wrapped
