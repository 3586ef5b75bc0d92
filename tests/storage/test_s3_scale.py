"""Large prefixes on an object store: listing sub-prefixes in parallel, Parquet footers read by
several threads, and the per-file schema cache that a changed object invalidates (a few objects
against a local S3-compatible server; benchmarks/bench_s3.py times 10,000)."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.config import build_config
from auger.errors import UserError
from auger.formats import parquet as parquet_format
from auger.spark import discovery
from auger.storage import filesystem as fs
from auger.storage.selection import select_files
from auger.storage.workspace import Workspace
from tests.storage.s3_helpers import LocalS3


def _register(local_s3: LocalS3, bucket: str) -> None:
    cfg = build_config({"storage": {"s3": local_s3.plugin(bucket)}})
    plugin = cfg.plugins["s3"]
    Workspace(plugin, plugin.workspaces["root"])  # registers the bucket's settings


def _parquet(columns: dict[str, list[Any]]) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.table(columns), buf)
    return buf.getvalue()


@pytest.fixture
def listed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, bool, str]]]:
    """Every listing request made: (prefix, recursive, thread name)."""
    calls: list[tuple[str, bool, str]] = []
    real = fs._children

    def spy(path: str, recursive: bool) -> list[fs.FileInfo]:
        calls.append((path, recursive, threading.current_thread().name))
        return real(path, recursive)

    monkeypatch.setattr(fs, "_children", spy)
    yield calls


def test_sub_prefixes_are_listed_in_parallel(
    local_s3: LocalS3, listed: list[tuple[str, bool, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = local_s3.bucket("wide")
    keys = [f"t/{d}/{s}/f{i}.csv" for d in ("a", "b", "c") for s in ("x", "y") for i in range(3)]
    for key in [*keys, "t/top.csv", "t/_tmp/z/hidden.csv", "t/a/.crc/h.csv", "t/a/x/_SUCCESS"]:
        local_s3.put(bucket, key, "1\n")
    _register(local_s3, bucket)
    monkeypatch.setattr(fs, "IO_THREADS", 4)
    got = [f.path for f in fs.walk_files("s3a://wide/t", lambda n: n[0] in "._")]
    assert got == sorted(f"s3a://wide/{k}" for k in [*keys, "t/top.csv"])
    # level one, then the three sub-prefixes a level at a time, then six whole, by the pool
    whole = sorted(p for p, recursive, _ in listed if recursive)
    assert whole == [f"s3a://wide/t/{d}/{s}" for d in ("a", "b", "c") for s in ("x", "y")]
    assert all(name.startswith("auger-io") for _, recursive, name in listed if recursive)
    # a hidden sub-prefix is never asked for
    assert not [p for p, _, _ in listed if "_tmp" in p or ".crc" in p]


def test_a_level_of_many_sub_prefixes_is_listed_whole(
    local_s3: LocalS3, listed: list[tuple[str, bool, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = local_s3.bucket("days")
    keys = [f"t/day={d:02d}/p.csv" for d in range(1, 7)]
    for key in keys:
        local_s3.put(bucket, key, "1\n")
    _register(local_s3, bucket)
    monkeypatch.setattr(fs, "_MAX_PREFIXES", 4)  # six partitions are "many" here
    got = [f.path for f in select_files("s3a://days/t").files]
    assert got == [f"s3a://days/{k}" for k in keys]
    assert [(p, r) for p, r, _ in listed] == [("s3a://days/t", False), ("s3a://days/t", True)]


def test_parallel_map_keeps_order_and_raises_the_first_failure() -> None:
    paths = [f"s3a://b/{i}" for i in range(40)]
    names: set[str] = set()

    def name(p: str) -> str:
        names.add(threading.current_thread().name)
        time.sleep(0.001 * (40 - int(p.rsplit("/", 1)[1])))  # later items finish first
        return p

    assert list(fs.parallel_map(name, paths)) == paths
    assert names and all(n.startswith("auger-io") for n in names)
    local = list(fs.parallel_map(lambda p: threading.current_thread().name, ["/a", "/b"]))
    assert local == [threading.current_thread().name] * 2

    def fail(p: str) -> str:
        if p.endswith(("/7", "/30")):
            raise ValueError(p)
        return p

    with pytest.raises(ValueError, match=r"^s3a://b/7$"):
        list(fs.parallel_map(fail, paths))


@pytest.fixture
def footer_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """Every Parquet footer planning reads: (path, thread name)."""
    discovery.clear_cache()
    reads: list[tuple[str, str]] = []
    real = parquet_format.read_parquet_footer

    def spy(path: str, size: int | None = None, int96_unit: str = "us") -> Any:
        reads.append((path, threading.current_thread().name))
        return real(path, size, int96_unit)

    monkeypatch.setattr(parquet_format, "read_parquet_footer", spy)
    yield reads
    discovery.clear_cache()


def _schema(path: str) -> list[str]:
    fmt = build_config({}).plugins["dfs"].formats["parquet"]
    return [c.name for c in discovery.discover_schema(select_files(path), fmt, {})]


def test_footers_are_read_in_parallel_and_cached_until_an_object_changes(
    local_s3: LocalS3, footer_reads: list[tuple[str, str]]
) -> None:
    bucket = local_s3.bucket("footer-cache")
    for i in range(4):
        local_s3.put(bucket, f"t/p{i}.parquet", _parquet({"id": [i], "name": ["n"]}))
    _register(local_s3, bucket)
    assert _schema("s3a://footer-cache/t") == ["id", "name"]
    assert sorted(p for p, _ in footer_reads) == [
        f"s3a://footer-cache/t/p{i}.parquet" for i in range(4)
    ]
    assert all(name.startswith("auger-io") for _, name in footer_reads)

    footer_reads.clear()
    assert _schema("s3a://footer-cache/t") == ["id", "name"]
    assert footer_reads == []  # a second query reads no footer

    # another size: only that object's footer is read again, and its new column is seen
    local_s3.put(bucket, "t/p2.parquet", _parquet({"id": [2], "name": ["n"], "extra": [1.5]}))
    assert _schema("s3a://footer-cache/t") == ["id", "name", "extra"]
    assert [p for p, _ in footer_reads] == ["s3a://footer-cache/t/p2.parquet"]

    # the same size, written later: the modification time tells the change
    footer_reads.clear()
    time.sleep(1.1)
    local_s3.put(bucket, "t/p3.parquet", _parquet({"ix": [3], "name": ["n"]}))
    assert _schema("s3a://footer-cache/t") == ["id", "name", "extra", "ix"]
    assert [p for p, _ in footer_reads] == ["s3a://footer-cache/t/p3.parquet"]

    # an added object: only it is read
    footer_reads.clear()
    local_s3.put(bucket, "t/p4.parquet", _parquet({"id": [4], "name": ["n"]}))
    assert _schema("s3a://footer-cache/t") == ["id", "name", "extra", "ix"]
    assert [p for p, _ in footer_reads] == ["s3a://footer-cache/t/p4.parquet"]


def test_discovery_and_the_native_check_share_one_footer_cache(
    local_s3: LocalS3, footer_reads: list[tuple[str, str]]
) -> None:
    from auger.scan.spec import FileSplit
    from auger.spark import native_parquet

    bucket = local_s3.bucket("footer-shared")
    for i in range(3):
        local_s3.put(bucket, f"t/p{i}.parquet", _parquet({"id": list(range(i + 1))}))
    _register(local_s3, bucket)

    def splits() -> list[FileSplit]:
        return [
            FileSplit(f.path, f.size, f.mtime) for f in select_files("s3a://footer-shared/t").files
        ]

    assert _schema("s3a://footer-shared/t") == ["id"]
    assert len(footer_reads) == 3
    footer_reads.clear()
    # the native reader's check (here its row count) takes the footers discovery read
    assert native_parquet.footer_row_count(splits()) == 1 + 2 + 3
    assert footer_reads == []

    # and the other way round
    discovery.clear_cache()
    assert native_parquet.footer_row_count(splits()) == 1 + 2 + 3
    assert len(footer_reads) == 3
    footer_reads.clear()
    assert _schema("s3a://footer-shared/t") == ["id"]
    assert footer_reads == []


def test_the_first_unreadable_object_in_file_order_is_named(
    local_s3: LocalS3, footer_reads: list[tuple[str, str]]
) -> None:
    bucket = local_s3.bucket("footer-broken")
    local_s3.put(bucket, "t/a.parquet", _parquet({"v": [1]}))
    for name in ("b", "c", "d"):
        local_s3.put(bucket, f"t/{name}.parquet", b"not parquet")
    _register(local_s3, bucket)
    with pytest.raises(UserError) as info:
        _schema("s3a://footer-broken/t")
    assert info.value.message.startswith("Error reading the Parquet footer")
    assert "File: s3a://footer-broken/t/b.parquet" in str(info.value)
    # the readable footer was kept: fixing the broken objects reads only them
    for name in ("b", "c", "d"):
        local_s3.put(bucket, f"t/{name}.parquet", _parquet({"v": [2]}))
    footer_reads.clear()
    assert _schema("s3a://footer-broken/t") == ["v"]
    assert sorted(p for p, _ in footer_reads) == [
        f"s3a://footer-broken/t/{n}.parquet" for n in ("b", "c", "d")
    ]


def test_footers_for_cutting_splits_are_read_in_parallel(local_s3: LocalS3) -> None:
    from auger.scan.spec import FileSplit, ScanSpec
    from auger.spark.partitions import expand_splits

    bucket = local_s3.bucket("split-footers")
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": list(range(4))}), buf, row_group_size=2)
    for i in range(5):
        local_s3.put(bucket, f"t/p{i}.parquet", buf.getvalue())
    _register(local_s3, bucket)
    files = tuple(
        FileSplit(f"s3a://split-footers/t/p{i}.parquet", len(buf.getvalue())) for i in range(5)
    )
    spec = ScanSpec("parquet", "parquet", {}, "s3a://split-footers/t", files, "", {})
    threads: list[str] = []

    def second_group_only(path: str, meta: Any) -> list[int]:
        threads.append(threading.current_thread().name)
        assert meta.num_row_groups == 2
        return [1] if not path.endswith("p3.parquet") else []

    pieces = expand_splits(spec, 1 << 20, second_group_only)
    assert [(p.path.rsplit("/", 1)[1], p.row_groups) for p in pieces] == [
        (f"p{i}.parquet", (1,)) for i in (0, 1, 2, 4)
    ]
    assert len(threads) == 5 and all(n.startswith("auger-io") for n in threads)


def test_count_from_footers_reads_them_in_parallel(
    local_s3: LocalS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    from auger.scan.spec import FileSplit
    from auger.spark import native_parquet

    bucket = local_s3.bucket("count-footers")
    for i in range(6):
        local_s3.put(bucket, f"t/p{i}.parquet", _parquet({"id": list(range(i + 1))}))
    _register(local_s3, bucket)
    native_parquet.clear_cache()
    threads: list[str] = []
    real = native_parquet._footer

    def spy(split: FileSplit) -> Any:
        threads.append(threading.current_thread().name)
        return real(split)

    monkeypatch.setattr(native_parquet, "_footer", spy)
    splits = [FileSplit(f"s3a://count-footers/t/p{i}.parquet") for i in range(6)]
    assert native_parquet.footer_row_count(splits) == sum(range(1, 7))
    assert len(threads) == 6 and all(n.startswith("auger-io") for n in threads)
    native_parquet.clear_cache()
