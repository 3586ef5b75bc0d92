"""The file-system seam without Spark: paths, plugin settings, listing, opening and errors
against a local S3-compatible server."""

from __future__ import annotations

import array
import gc
import gzip
import io
import os
import socket
import threading
import time
import weakref
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.config import build_config
from auger.errors import ErrorKind, UserError
from auger.formats.base import open_input
from auger.scan.spec import FileSplit, ScanSpec, open_split
from auger.storage import filesystem as fs
from auger.storage.selection import select_files
from auger.storage.workspace import Workspace
from tests.storage.s3_helpers import LocalS3, free_port


def _workspace(local_s3: LocalS3, bucket: str, ws: str = "root", **extra: str) -> Workspace:
    cfg = build_config({"storage": {"s3": local_s3.plugin(bucket, **extra)}})
    plugin = cfg.plugins["s3"]
    return Workspace(plugin, plugin.workspaces[ws])


@pytest.mark.parametrize(
    ("path", "norm", "parent", "base"),
    [
        ("s3a://b/x/../y/a.csv", "s3a://b/y/a.csv", "s3a://b/y", "a.csv"),
        ("s3a://b/", "s3a://b", "s3a://b", ""),
        ("s3://b/d/", "s3://b/d", "s3://b", "d"),
        ("/local/d/a.csv", "/local/d/a.csv", "/local/d", "a.csv"),
    ],
)
def test_uri_path_arithmetic_keeps_scheme_and_bucket(
    path: str, norm: str, parent: str, base: str
) -> None:
    assert fs.normpath(path) == norm
    assert fs.dirname(fs.normpath(path)) == parent
    assert fs.basename(path) == base


def test_join_and_relpath_stay_inside_the_bucket() -> None:
    assert fs.join("s3a://b/tmp", "/t1", "x.csv") == "s3a://b/tmp/t1/x.csv"
    assert fs.relpath("s3a://b/tmp/t1/x.csv", "s3a://b/tmp") == "t1/x.csv"
    assert fs.is_uri("s3a://b/k") and not fs.is_uri("/tmp/x") and not fs.is_uri("file:///x")
    with pytest.raises(ValueError):
        fs.relpath("s3a://other/x", "s3a://b")


def test_plugin_workspaces_lie_below_the_connection() -> None:
    cfg = build_config(
        {
            "storage": {
                "s3": {
                    "type": "file",
                    "connection": "s3a://my-bucket",
                    "config": {"fs.s3a.endpoint": "http://127.0.0.1:1"},
                    "workspaces": {
                        "root": {"location": "/"},
                        "logs": {"location": "/logs/2024"},
                        "tmp": {"location": "tmp", "writable": True},
                    },
                }
            }
        }
    )
    ws = cfg.plugins["s3"].workspaces
    assert ws["root"].location == "s3a://my-bucket"
    assert ws["logs"].location == "s3a://my-bucket/logs/2024"
    assert ws["tmp"].location == "s3a://my-bucket/tmp"
    assert ws["default"].location == "s3a://my-bucket"


def test_workspace_resolution_refuses_escapes_from_the_prefix(local_s3: LocalS3) -> None:
    ws = _workspace(local_s3, local_s3.bucket("resolve"), "tmp")
    assert ws.resolve("t1/a.csv") == "s3a://resolve/tmp/t1/a.csv"
    assert ws.resolve("") == "s3a://resolve/tmp"
    with pytest.raises(UserError) as info:
        ws.resolve("../secret.csv")
    assert info.value.kind is ErrorKind.PERMISSION


def test_selection_lists_a_prefix_skipping_hidden_objects(local_s3: LocalS3) -> None:
    bucket = local_s3.bucket("listing")
    for key in ("t/1994/a.csv", "t/1995/q1/b.csv", "t/_SUCCESS", "t/.hidden/c.csv", "u.csv"):
        local_s3.put(bucket, key, "x\n")
    _workspace(local_s3, bucket)  # registers the bucket's settings
    sel = select_files("s3a://listing/t")
    assert sel.is_directory and sel.root == "s3a://listing/t"
    assert [f.path for f in sel.files] == [
        "s3a://listing/t/1994/a.csv",
        "s3a://listing/t/1995/q1/b.csv",
    ]
    assert sel.max_depth == 2 and all(f.size == 2 and f.mtime > 0 for f in sel.files)
    one = select_files("s3a://listing/u.csv")
    assert not one.is_directory and one.root == "s3a://listing"
    globbed = select_files("s3a://listing/t/199?/*.csv")
    assert [f.path for f in globbed.files] == ["s3a://listing/t/1994/a.csv"]
    with pytest.raises(UserError) as info:
        select_files("s3a://listing/nothing-here")
    assert info.value.kind is ErrorKind.VALIDATION


def test_open_input_decompresses_objects_and_reads_byte_ranges(local_s3: LocalS3) -> None:
    bucket = local_s3.bucket("opening")
    text = "".join(f"line {i}\n" for i in range(1000))
    local_s3.put(bucket, "a.csv.gz", gzip.compress(text.encode()))
    local_s3.put(bucket, "a.csv", text)
    _workspace(local_s3, bucket)
    with open_input("s3a://opening/a.csv.gz") as fh:
        assert fh.read().decode() == text
    size = len(text)
    halves = [
        FileSplit("s3a://opening/a.csv", size, 0.0, 0, size // 2),
        FileSplit("s3a://opening/a.csv", size, 0.0, size // 2, size - size // 2),
    ]
    pieces = []
    for split in halves:
        with open_split(split) as fh:
            pieces.append(fh.read().decode())
    assert pieces[0] + pieces[1] == text  # every line once, split at a line boundary
    assert pieces[0].endswith("\n") and pieces[1].startswith("line ")


def test_parquet_footer_is_read_without_downloading_the_object(local_s3: LocalS3) -> None:
    bucket = local_s3.bucket("footers")
    table = pa.table({"a": list(range(200_000)), "b": ["x" * 20] * 200_000})
    buf = io.BytesIO()
    pq.write_table(table, buf, row_group_size=50_000)
    local_s3.put(bucket, "big.parquet", buf.getvalue())
    _workspace(local_s3, bucket)
    source = fs.open_random("s3a://footers/big.parquet")
    pf = pq.ParquetFile(source)
    assert pf.metadata.num_rows == 200_000 and pf.metadata.num_row_groups == 4
    assert pf.read_row_group(3, columns=["a"]).column("a")[0].as_py() == 150_000
    # ranged reads: the footer and one column chunk, not the whole object
    assert source.tell() < len(buf.getvalue())


def test_settings_travel_with_the_scan_spec(local_s3: LocalS3) -> None:
    bucket = local_s3.bucket("shipped")
    _workspace(local_s3, bucket)
    spec = ScanSpec("csv", "text", {}, "s3a://shipped", (FileSplit("s3a://shipped/a.csv"),), "", {})
    text = spec.to_json()
    assert local_s3.endpoint in text  # an executor has no config file
    fs._REGISTRY.pop("s3a://shipped")  # as in a fresh worker process
    assert ScanSpec.from_json(text) == spec
    assert fs._config_of("s3a://shipped/a.csv").option("fs.s3a.endpoint") == local_s3.endpoint


def test_local_spec_carries_no_settings() -> None:
    spec = ScanSpec("csv", "text", {}, "/tmp", (FileSplit("/tmp/a.csv"),), "", {})
    assert "filesystems" not in spec.to_json()


def test_missing_object_is_not_found_naming_the_path(local_s3: LocalS3) -> None:
    _workspace(local_s3, local_s3.bucket("missing-object"))
    with pytest.raises(UserError) as info:
        open_input("s3a://missing-object/nope.csv")
    assert info.value.kind is ErrorKind.VALIDATION
    assert "s3a://missing-object/nope.csv" in str(info.value)


def test_missing_bucket_is_a_resource_error(local_s3: LocalS3) -> None:
    ws = _workspace(local_s3, "no-such-bucket")
    with pytest.raises(UserError) as info:
        select_files(ws.resolve("x.csv"))
    assert info.value.kind is ErrorKind.RESOURCE
    assert "no-such-bucket" in info.value.message and "Traceback" not in str(info.value)


def test_endpoint_down_answers_within_the_timeout() -> None:
    port = free_port()  # nothing listens there
    cfg = build_config(
        {
            "storage": {
                "s3": {
                    "type": "file",
                    "connection": "s3a://down",
                    "config": {
                        "fs.s3a.endpoint": f"http://127.0.0.1:{port}",
                        "fs.s3a.access.key": "k",
                        "fs.s3a.secret.key": "s",
                        "fs.s3a.connection.establish.timeout": "1000",
                        "fs.s3a.connection.timeout": "2000",
                        "fs.s3a.attempts.maximum": "1",
                    },
                }
            }
        }
    )
    plugin = cfg.plugins["s3"]
    ws = Workspace(plugin, plugin.workspaces["default"])
    started = time.monotonic()
    with pytest.raises(UserError) as info:
        select_files(ws.resolve("x.csv"))
    assert time.monotonic() - started < 20
    assert info.value.kind is ErrorKind.DATA_READ
    assert f"127.0.0.1:{port}" in info.value.message


def test_wrong_credentials_are_a_permission_error() -> None:
    """A second server whose signature checks are on: keys it never issued are refused."""
    import requests

    from tests.storage.s3_helpers import start_local_s3

    servers = start_local_s3()
    server = next(servers)
    try:
        server.bucket("locked")
        server.put("locked", "a.csv", "x\n")
        requests.post(
            f"{server.endpoint}/moto-api/reset-auth",
            data=b"0",
            headers={"Content-Type": "text/plain"},
            timeout=10,
        ).raise_for_status()
        ws = _workspace(server, "locked")
        with pytest.raises(UserError) as info:
            select_files(ws.resolve("a.csv"))
        assert info.value.kind is ErrorKind.PERMISSION
        assert "s3a://locked/a.csv" in str(info.value)
    finally:
        requests.post(
            f"{server.endpoint}/moto-api/reset-auth",
            data=b"inf",
            headers={"Content-Type": "text/plain"},
            timeout=10,
        )
        servers.close()


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """An endpoint that accepts connections and never answers (a hung service)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(5)
    for conn in held:
        conn.close()
    server.close()


def _plugin_on(endpoint: str, bucket: str, **extra: str) -> Workspace:
    cfg = build_config(
        {
            "storage": {
                "s3": {
                    "type": "file",
                    "connection": f"s3a://{bucket}",
                    "config": {
                        "fs.s3a.endpoint": endpoint,
                        "fs.s3a.access.key": "k",
                        "fs.s3a.secret.key": "s",
                        **extra,
                    },
                }
            }
        }
    )
    plugin = cfg.plugins["s3"]
    return Workspace(plugin, plugin.workspaces["default"])


def test_a_silent_endpoint_answers_within_the_request_timeout(silent_endpoint: str) -> None:
    ws = _plugin_on(
        silent_endpoint,
        "silent",
        **{"fs.s3a.connection.timeout": "1000", "fs.s3a.attempts.maximum": "1"},
    )
    started = time.monotonic()
    with pytest.raises(UserError) as info:
        select_files(ws.resolve("x.csv"))
    assert time.monotonic() - started < 15  # one attempt of a second, not the SDK's minutes
    assert info.value.kind is ErrorKind.DATA_READ
    assert silent_endpoint in info.value.message
    assert "fs.s3a.connection.timeout" in str(info.value)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("fs.s3a.attempts.maximum", "three"),
        ("fs.s3a.connection.timeout", "soon"),
        ("fs.s3a.connection.establish.timeout", "-"),
    ],
)
def test_unreadable_timeout_settings_are_validation_errors(key: str, value: str) -> None:
    ws = _plugin_on("http://127.0.0.1:1", f"settings-{len(value)}", **{key: value})
    with pytest.raises(UserError) as info:
        select_files(ws.resolve("x.csv"))
    assert info.value.kind is ErrorKind.VALIDATION
    assert key in str(info.value) and value in info.value.message


@pytest.mark.parametrize(
    ("path", "start"),
    [
        ("/a/b/c", "/a"),
        ("/a", "/a"),
        ("/a/b", "/"),
        ("/a/b/", "/a"),
        ("/a/./b", "/a"),
        ("/ab/c", "/a"),
        ("/a/.h/x", "/a"),
        ("/a/b", "/a/"),
        ("/a/../b", "/a"),
        ("/x/y", "/a/b"),
    ],
)
def test_relpath_by_text_agrees_with_the_general_one(path: str, start: str) -> None:
    assert fs.relpath(path, start) == os.path.relpath(path, start)


def test_owned_reads_hold_no_python_object_and_close_the_source() -> None:
    """pyarrow's streaming readers drop blocks on their own threads, where a block still
    holding what a Python source returned needs the GIL (fatal while the interpreter exits):
    a block read through ``arrow_owned_reads`` is a copy, and closing the stream closes the
    source and lets it go."""
    given: list[weakref.ref[array.array[int]]] = []

    class Source(io.RawIOBase):
        def __init__(self) -> None:
            super().__init__()
            self._data = io.BytesIO(bytes(range(256)) * 4096)

        def readable(self) -> bool:
            return True

        def read(self, n: int = -1) -> array.array[int]:  # type: ignore[override]
            out = array.array("B", self._data.read(n))
            given.append(weakref.ref(out))
            return out

    source = Source()
    stream = fs.arrow_owned_reads(source)
    blocks = [stream.read_buffer(1 << 18) for _ in range(5)]
    gc.collect()
    assert [b.size for b in blocks] == [1 << 18] * 4 + [0]
    assert b"".join(b.to_pybytes() for b in blocks) == bytes(range(256)) * 4096
    assert len(given) == 5
    assert [w() for w in given] == [None] * 5  # each block holds a copy
    held = weakref.ref(source)
    del source
    gc.collect()
    assert held() is not None  # the stream reads from it until closed
    stream.close()
    gc.collect()
    assert held() is None
