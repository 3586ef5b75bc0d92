"""Schema discovery: cached per file list and modification time, a Spark job for many files,
and LIMIT push-down that opens only the files it needs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from auger.config import FormatConfig
from auger.errors import ErrorKind, UserError
from auger.formats.conflicts import check_read
from auger.formats.registry import get_format
from auger.spark import discovery
from auger.storage.selection import select_files

JSON = FormatConfig("json", "json", ("json",), {})


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts calls of the JSON plugin's own discovery (in this process)."""
    plugin = get_format("json")
    original = plugin.discover_schema
    calls: list[int] = []

    def counting(files: Any, config: Any, options: Any) -> Any:
        calls.append(len(files))
        return original(files, config, options)

    monkeypatch.setattr(plugin, "discover_schema", counting)
    return calls


def test_cache_hit_and_invalidation_when_a_file_changes(tmp_path: Path, counted: list[int]) -> None:
    discovery.clear_cache()
    path = tmp_path / "c.json"
    path.write_text('{"a": 1}\n')
    first = discovery.discover_schema(select_files(str(path)), JSON, {})
    again = discovery.discover_schema(select_files(str(path)), JSON, {})
    assert first.names() == again.names() == ["a"]
    assert len(counted) == 1  # second call answered from the cache
    path.write_text('{"a": 1, "b": "x"}\n')
    st = path.stat()
    os.utime(path, (st.st_atime, st.st_mtime + 5))
    changed = discovery.discover_schema(select_files(str(path)), JSON, {})
    assert changed.names() == ["a", "b"]
    assert len(counted) == 2
    # an option that changes what discovery finds is part of the key
    text = discovery.discover_schema(
        select_files(str(path)), JSON, {"store.json.all_text_mode": True}
    )
    assert text.column("a").type.value == "VARCHAR"


def test_json_sample_size_option(tmp_path: Path) -> None:
    discovery.clear_cache()
    path = tmp_path / "s.json"
    path.write_text("".join('{"a": 1}\n' for _ in range(20)) + '{"a": 1, "late": true}\n')
    few = discovery.discover_schema(
        select_files(str(path)), JSON, {"auger.scan.json_sample_rows": 5}
    )
    every = discovery.discover_schema(
        select_files(str(path)), JSON, {"auger.scan.json_sample_rows": 100}
    )
    assert few.names() == ["a"] and every.names() == ["a", "late"]


def _many(root: Path, n: int) -> None:
    root.mkdir()
    for i in range(n):
        row = {"id": i, f"c{i % 7}": i} if i % 10 else {"id": i, "m": {"k": i}}
        (root / f"f{i:03d}.json").write_text(json.dumps(row) + "\n")


def test_many_files_are_discovered_by_a_spark_job(
    spark: Any, tmp_path: Path, counted: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    discovery.clear_cache()
    root = tmp_path / "many"
    _many(root, 90)
    jobs: list[int] = []
    original = discovery._discover_in_spark

    def spy(spark_: Any, paths: list[str], fmt: Any, options: Any) -> Any:
        jobs.append(len(paths))
        return original(spark_, paths, fmt, options)

    monkeypatch.setattr(discovery, "_discover_in_spark", spy)
    parallel = discovery.discover_schema(select_files(str(root)), JSON, {})
    assert jobs == [90] and counted == []  # the work ran in Spark tasks, not here
    sequential = get_format("json").discover_schema(
        [f.path for f in select_files(str(root)).files], JSON, {}
    )
    assert parallel.to_text() == sequential.to_text()
    assert parallel.names()[:3] == ["id", "m", "c1"]


def test_conflicts_found_in_the_spark_job_are_data_read_errors(spark: Any, tmp_path: Path) -> None:
    discovery.clear_cache()
    root = tmp_path / "clash"
    _many(root, 80)
    (root / "f079.json").write_text('{"id": {"nested": 1}}\n')
    schema = discovery.discover_schema(select_files(str(root)), JSON, {})
    with pytest.raises(UserError) as info:
        check_read(schema.column("id"))  # kept for the query that reads id
    assert info.value.kind is ErrorKind.DATA_READ
    assert "id" in info.value.message
    assert any("f079.json" in line for line in info.value.context)


def test_limit_reads_only_the_first_files(conn: Any, data_dir: Path) -> None:
    root = data_dir / "limited"
    root.mkdir()
    for i in range(40):
        body = "".join(f"{i},{r}\n" for r in range(5)).encode()
        if i >= 3:  # unreadable: any query that opens these files fails
            body += b"\xff\xfe\n"
        (root / f"part-{i:02d}.csv").write_bytes(body)
    cur = conn.cursor()
    cur.execute("SELECT * FROM dfs.data.`limited` LIMIT 10")
    got = cur.fetchall()
    assert [tuple(r[0]) for r in got] == [(str(i // 5), str(i % 5)) for i in range(10)]
    from auger.dbapi import DataError

    with pytest.raises(DataError):
        cur.execute("SELECT COUNT(*) FROM dfs.data.`limited`").fetchall()
