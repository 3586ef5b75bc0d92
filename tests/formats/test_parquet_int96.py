"""Parquet timestamps as Drill reads them: INT96 (Impala's and Hive's) as its 12 stored bytes
unless ``store.parquet.reader.int96_as_timestamp`` is true, and INT64 nanosecond timestamps as
BIGINT, every digit kept."""

from __future__ import annotations

import datetime as dt
import struct
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from auger.config import FormatConfig
from auger.formats.parquet import ParquetFormat

from .helpers import read_file, rows_of

CFG = FormatConfig("parquet", "parquet", ("parquet",), {})
AS_TS = {"store.parquet.reader.int96_as_timestamp": True}
TS = dt.datetime(2021, 3, 4, 5, 6, 7, 123456)
OLD = dt.datetime(1969, 12, 31, 23, 59, 59, 999999)  # before the epoch: a negative day


def impala(value: dt.datetime) -> bytes:
    """INT96 as Impala writes it: nanoseconds of the day, then the Julian day."""
    day = (value.date() - dt.date(1970, 1, 1)).days + 2_440_588
    of_day = (value - dt.datetime.combine(value.date(), dt.time())) // dt.timedelta(microseconds=1)
    return struct.pack("<qi", of_day * 1000, day)


def int96_file(tmp_path: Path) -> Path:
    t = pa.table(
        {
            "ts": pa.array([TS, None, OLD], pa.timestamp("us")),
            "m": pa.array([{"x": TS}, None, {"x": None}], pa.struct([("x", pa.timestamp("us"))])),
            "l": pa.array([[TS, None], None, [OLD]], pa.list_(pa.timestamp("us"))),
            "n": [1, 2, 3],
        }
    )
    path = tmp_path / "i96.parquet"
    pq.write_table(t, path, use_deprecated_int96_timestamps=True)
    return path


def test_int96_is_varbinary_by_default(tmp_path: Path) -> None:
    path = int96_file(tmp_path)
    schema = ParquetFormat().discover_schema([str(path)], CFG, {}).to_text()
    assert schema == "`ts` VARBINARY, `m` STRUCT<`x` VARBINARY>, `l` ARRAY<VARBINARY>, `n` BIGINT"
    rows = rows_of(read_file(path, "parquet"))
    assert [r["ts"] for r in rows] == [impala(TS), None, impala(OLD)]
    assert rows[0]["m"] == {"x": impala(TS)} and rows[2]["m"] == {"x": None}
    assert rows[0]["l"] == [impala(TS), None] and rows[2]["l"] == [impala(OLD)]
    assert [r["n"] for r in rows] == [1, 2, 3]
    # a member projection reads the same bytes
    got = rows_of(read_file(path, "parquet", options={"__projection__": ["m.x"]}, columns=["m"]))
    assert got[0]["m"] == {"x": impala(TS)}


def test_int96_bytes_keep_nanoseconds_and_any_year(tmp_path: Path) -> None:
    # Impala writes nanoseconds; years before 1677 do not fit a count of nanoseconds
    nanos = 1_614_834_367_123_456_789  # 2021-03-04 05:06:07.123456789
    path = tmp_path / "ns96.parquet"
    pq.write_table(
        pa.table({"t": pa.array([nanos], pa.timestamp("ns"))}),
        path,
        use_deprecated_int96_timestamps=True,
    )
    day, of_day = divmod(nanos, 86_400 * 10**9)
    got = rows_of(read_file(path, "parquet"))[0]["t"]
    assert got == struct.pack("<qi", of_day, day + 2_440_588)
    old = dt.datetime(1500, 1, 1, 12, 0, 0, 5)
    pq.write_table(
        pa.table({"t": pa.array([old], pa.timestamp("us"))}),
        path,
        use_deprecated_int96_timestamps=True,
    )
    assert rows_of(read_file(path, "parquet"))[0]["t"] == impala(old)


def test_int96_as_timestamp_when_asked(tmp_path: Path) -> None:
    path = int96_file(tmp_path)
    schema = ParquetFormat().discover_schema([str(path)], CFG, AS_TS).to_text()
    assert schema == "`ts` TIMESTAMP, `m` STRUCT<`x` TIMESTAMP>, `l` ARRAY<TIMESTAMP>, `n` BIGINT"
    rows = rows_of(read_file(path, "parquet", options=AS_TS))
    assert [r["ts"] for r in rows] == [TS, None, OLD]
    assert rows[0]["l"] == [TS, None]


def test_nanosecond_timestamps_are_bigint_with_every_digit(tmp_path: Path) -> None:
    path = tmp_path / "ns.parquet"
    nanos = 1_614_834_367_123_456_789
    t = pa.table({"t": pa.array([nanos, None], pa.timestamp("ns"))})
    pq.write_table(t, path)  # the default format version keeps nanoseconds
    assert ParquetFormat().discover_schema([str(path)], CFG, {}).to_text() == "`t` BIGINT"
    assert [r["t"] for r in rows_of(read_file(path, "parquet"))] == [nanos, None]


def test_int96_through_sql(conn: Any, tmp_path: Path) -> None:
    path = int96_file(tmp_path)
    cur = conn.cursor()
    sql = f"SELECT ts, typeof(ts) AS k FROM dfs.`{path}` WHERE n = 1"
    assert [tuple(r) for r in cur.execute(sql).fetchall()] == [(impala(TS), "VARBINARY")]
    cur.execute("ALTER SESSION SET `store.parquet.reader.int96_as_timestamp` = true")
    assert [tuple(r) for r in cur.execute(sql).fetchall()] == [(TS, "TIMESTAMP")]
    count = f"SELECT COUNT(*) FROM dfs.`{path}` WHERE ts > TIMESTAMP '2000-01-01 00:00:00'"
    assert cur.execute(count).fetchall()[0][0] == 1
