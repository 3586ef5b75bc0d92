"""A result past the server's limit (``auger.result.max_rows``/``max_bytes``) ends with a
RESOURCE error after the rows within it, through the DB-API's streamed fetch; the bound itself
is checked on plain Arrow batches."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from auger.errors import UserError
from auger.spark.jobs import ResultLimit


def _batches(*sizes: int) -> list[pa.RecordBatch]:
    start = 0
    out = []
    for n in sizes:
        out.append(pa.record_batch({"x": pa.array(range(start, start + n), pa.int64())}))
        start += n
    return out


def test_rows_within_the_limit_come_first_then_the_error() -> None:
    limit = ResultLimit(rows=25)
    got: list[int] = []
    with pytest.raises(UserError) as info:
        for batch in limit.batches(iter(_batches(10, 10, 10, 10))):
            got.extend(batch.column(0).to_pylist())
    assert got == list(range(25))
    assert info.value.kind.value == "RESOURCE"
    assert "25 rows" in info.value.message and "auger.result.max_rows" in info.value.message


def test_a_result_that_fits_exactly_is_complete() -> None:
    limit = ResultLimit(rows=20, bytes=10_000)
    assert sum(b.num_rows for b in limit.batches(iter(_batches(10, 10)))) == 20


def test_bytes_stop_before_the_batch_that_passes_them() -> None:
    limit = ResultLimit(bytes=200)  # one batch of 10 int64 is 80 bytes
    got = []
    with pytest.raises(UserError) as info:
        for batch in limit.batches(iter(_batches(10, 10, 10))):
            got.append(batch.num_rows)
    assert got == [10, 10]
    assert "200 bytes" in info.value.message and "auger.result.max_bytes" in info.value.message


def test_dbapi_stream_ends_with_the_limit_error(make_conn: Any, tmp_path: Any) -> None:
    path = tmp_path / "n.csv"
    path.write_text("".join(f"{i}\n" for i in range(5000)))
    conn = make_conn()
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET `auger.result.max_rows` = 1200")
    cur.execute("ALTER SESSION SET `auger.scan.local_bytes` = 0")  # Spark's tasks, streamed
    cur.execute(f"SELECT columns[0] AS x FROM dfs.`{path}`")
    got = cur.fetchmany(1000)
    assert len(got) == 1000
    with pytest.raises(Exception) as info:
        cur.fetchall()
    assert str(info.value).startswith("RESOURCE ERROR:")
    assert "1,200 rows" in str(info.value)
    cur.execute(f"SELECT COUNT(*) FROM dfs.`{path}`")  # the connection goes on
    assert cur.fetchall() == [(5000,)]


def test_a_batch_cut_at_the_limit_is_followed_by_the_error() -> None:
    stream = ResultLimit(rows=5).batches(iter(_batches(8)))
    assert next(stream).num_rows == 5
    with pytest.raises(UserError):
        next(stream)


def test_dbapi_fetchall_in_bulk_meets_the_limit_too(make_conn: Any, tmp_path: Any) -> None:
    path = tmp_path / "m.csv"
    path.write_text("".join(f"{i}\n" for i in range(3000)))
    conn = make_conn()
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET `auger.result.max_rows` = 2000")
    cur.execute("ALTER SESSION SET `auger.scan.local_bytes` = 0")
    cur.execute(f"SELECT columns[0] AS x FROM dfs.`{path}`")
    with pytest.raises(Exception) as info:
        cur.fetchall()
    assert str(info.value).startswith("RESOURCE ERROR:") and "2,000 rows" in str(info.value)
    cur.execute(f"SELECT columns[0] AS x FROM dfs.`{path}` LIMIT 2000")
    assert len(cur.fetchall()) == 2000
