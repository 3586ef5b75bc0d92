"""Parquet (and compressed) inputs off the beaten path, through SQL, answered as Drill answers.

Drill types a Parquet column by its physical and converted type (``ParquetToDrillTypeConverter``):
INT_8/INT_16 are INT, bytes without a converted type it knows (UUID, FLOAT16, JSON) VARBINARY.
Compressed text and JSON are read by the suffix Hadoop's codecs register.
"""

from __future__ import annotations

import bz2
import datetime as dt
import decimal
import gzip
import uuid
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.dbapi import Error
from auger.errors import ErrorKind
from auger.formats.parquet import _conform, _drill_type


def rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    return list(conn.cursor().execute(sql).fetchall())


def described(conn: Any, sql: str) -> list[tuple[str, str]]:
    cur = conn.cursor().execute(sql)
    cur.fetchall()
    return [(d[0], d[1]) for d in cur.description]


def failure(conn: Any, sql: str) -> Error:
    with pytest.raises(Error) as info:
        conn.cursor().execute(sql).fetchall()
    return info.value


def native(conn: Any, on: str) -> None:
    conn.cursor().execute(f"ALTER SESSION SET `auger.scan.native_parquet` = {on}")


# ------------------------------------------------------------------------------ empty files
def test_file_of_no_rows_alone_and_beside_others(conn: Any, tmp_path: Path) -> None:
    empty = tmp_path / "0.parquet"
    pq.write_table(pa.table({"a": pa.array([], pa.int32()), "b": pa.array([], pa.string())}), empty)
    assert rows(conn, f"SELECT * FROM dfs.`{empty}`") == []
    assert described(conn, f"SELECT * FROM dfs.`{empty}`") == [
        ("a", "INTEGER"),
        ("b", "CHARACTER VARYING"),
    ]
    assert rows(conn, f"SELECT COUNT(*) FROM dfs.`{empty}`") == [(0,)]
    pq.write_table(
        pa.table({"a": pa.array([1, 2], pa.int32()), "b": ["x", "y"]}), tmp_path / "1.parquet"
    )
    # an empty file's columns still count: its BIGINT widens `a`, its `c` is a column
    pq.write_table(
        pa.table({"a": pa.array([], pa.int64()), "c": pa.array([], pa.float64())}),
        tmp_path / "2.parquet",
    )
    sql = f"SELECT * FROM dfs.`{tmp_path}` ORDER BY a"
    assert rows(conn, sql) == [(1, "x", None), (2, "y", None)]
    assert described(conn, sql) == [("a", "BIGINT"), ("b", "CHARACTER VARYING"), ("c", "DOUBLE")]
    assert rows(conn, f"SELECT COUNT(*), SUM(a) FROM dfs.`{tmp_path}`") == [(2, 3)]


# ------------------------------------------------------------------------------ scalar types
@pytest.mark.parametrize("on", ["true", "false"])
def test_int8_and_int16_are_int(conn: Any, tmp_path: Path, on: str) -> None:
    # Drill: INT32 with INT_8/INT_16 converted type -> INT, not TINYINT/SMALLINT
    path = tmp_path / "i.parquet"
    pq.write_table(
        pa.table(
            {
                "i8": pa.array([-128, 127, None], pa.int8()),
                "i16": pa.array([-32768, 32767, None], pa.int16()),
            }
        ),
        path,
    )
    native(conn, on)
    sql = f"SELECT i8, i16, i8 + 1 AS n, typeof(i16) AS t FROM dfs.`{path}` ORDER BY i8"
    assert rows(conn, sql) == [
        (-128, -32768, -127, "INT"),
        (127, 32767, 128, "INT"),
        (None, None, None, "NULL"),
    ]
    assert [t for _, t in described(conn, sql)][:2] == ["INTEGER", "INTEGER"]


def test_times_of_every_unit_are_times_in_milliseconds(conn: Any, tmp_path: Path) -> None:
    # TIME_MILLIS, TIME_MICROS and a nanosecond TIME all read as Drill's TIME (milliseconds)
    path = tmp_path / "t.parquet"
    t = dt.time(1, 2, 3, 456789)
    pq.write_table(
        pa.table(
            {
                "id": [1, 2],
                "ms": pa.array([dt.time(1, 2, 3, 456000), None], pa.time32("ms")),
                "us": pa.array([t, None], pa.time64("us")),
                "ns": pa.array([t, None], pa.time64("ns")),
            }
        ),
        path,
    )
    sql = (
        "SELECT CAST(ms AS VARCHAR), CAST(us AS VARCHAR), CAST(ns AS VARCHAR), "
        f"ns < TIME '02:00:00' FROM dfs.`{path}` ORDER BY id"
    )
    assert rows(conn, sql) == [
        ("01:02:03.456", "01:02:03.456", "01:02:03.456", True),
        (None, None, None, None),
    ]


@pytest.mark.parametrize("on", ["true", "false"])
def test_dates_and_timestamps_with_and_without_utc_adjustment(
    conn: Any, tmp_path: Path, on: str
) -> None:
    path = tmp_path / "ts.parquet"
    ts = dt.datetime(2021, 3, 4, 5, 6, 7, 123456)
    pq.write_table(
        pa.table(
            {
                "id": [1, 2],
                "d": pa.array([dt.date(2020, 2, 29), dt.date(1, 1, 1)], pa.date32()),
                "ms": pa.array([ts, None], pa.timestamp("ms")),
                "us": pa.array([ts, None], pa.timestamp("us")),
                # isAdjustedToUTC=true: the instant's UTC wall clock, whatever zone wrote it
                "utc": pa.array([ts, None], pa.timestamp("us", tz="UTC")),
                "ny": pa.array([ts, None], pa.timestamp("ms", tz="America/New_York")),
            }
        ),
        path,
    )
    native(conn, on)
    sql = f"SELECT d, ms, us, utc, ny FROM dfs.`{path}` ORDER BY id"
    millis = ts.replace(microsecond=123000)
    assert rows(conn, sql) == [
        (dt.date(2020, 2, 29), millis, ts, ts, millis),
        (dt.date(1, 1, 1), None, None, None, None),
    ]
    assert [t for _, t in described(conn, sql)] == ["DATE", *["TIMESTAMP"] * 4]
    where = f"SELECT id FROM dfs.`{path}` WHERE utc = TIMESTAMP '2021-03-04 05:06:07.123456'"
    assert rows(conn, where) == [(1,)]


@pytest.mark.parametrize("on", ["true", "false"])
def test_decimals_fixed_bytes_uuid_half_floats_and_strings(
    conn: Any, tmp_path: Path, on: str
) -> None:
    path = tmp_path / "misc.parquet"
    u = uuid.UUID("12345678-1234-5678-1234-567812345678")
    table = pa.table(
        {
            "id": [1, 2],
            "d32": pa.array([decimal.Decimal("12.34"), None], pa.decimal128(7, 2)),
            "d64": pa.array([decimal.Decimal("123456789.1234"), None], pa.decimal128(15, 4)),
            "dfix": pa.array(
                [decimal.Decimal("1234567890123456789.12"), decimal.Decimal("-1.50")],
                pa.decimal128(30, 2),
            ),
            "fixed": pa.array([b"abcd", None], pa.binary(4)),
            "uid": pa.array([u.bytes, None], pa.uuid()),
            "half": pa.array([1.5, None], pa.float16()),
            "dict": pa.array(["x", "y"]).dictionary_encode(),
            "big": pa.array(["large", None], pa.large_string()),
        }
    )
    pq.write_table(table, path, store_decimal_as_integer=True)
    leaves = pq.ParquetFile(path).schema
    assert [leaves.column(i).physical_type for i in (1, 2, 3)] == [
        "INT32",
        "INT64",
        "FIXED_LEN_BYTE_ARRAY",
    ]
    native(conn, on)
    sql = f"SELECT * FROM dfs.`{path}` ORDER BY id"
    assert rows(conn, sql) == [
        (
            1,
            decimal.Decimal("12.34"),
            decimal.Decimal("123456789.1234"),
            decimal.Decimal("1234567890123456789.12"),
            b"abcd",
            u.bytes,
            b"\x00\x3e",  # the stored IEEE half float 1.5, little-endian: Drill's VARBINARY
            "x",
            "large",
        ),
        (2, None, None, decimal.Decimal("-1.50"), None, None, None, "y", None),
    ]
    assert [t for _, t in described(conn, sql)] == [
        "BIGINT",
        *["DECIMAL"] * 3,
        *["BINARY VARYING"] * 3,
        *["CHARACTER VARYING"] * 2,
    ]
    assert rows(conn, f"SELECT d32 * 2, big FROM dfs.`{path}` WHERE dict = 'x'") == [
        (decimal.Decimal("24.68"), "large")
    ]


def test_unknown_annotations_inside_nested_columns_are_bytes_too() -> None:
    # the rebuild keeps the nulls and slicing of structs, lists and maps
    uids = pa.ExtensionArray.from_storage(
        pa.uuid(), pa.array([b"\x00" * 16, b"\x01" * 16, None], pa.binary(16))
    )
    halves = pa.array([3.0, 1.0, None], pa.float16())
    mask = pa.array([True, False, False])
    s = pa.StructArray.from_arrays([halves, uids], names=["h", "u"], mask=mask).slice(1)
    lists = pa.array([[1.0], None, [2.0, None]], pa.list_(pa.float16())).slice(1)
    maps = pa.array([[("k", 1.0)], None], pa.map_(pa.string(), pa.float16()))
    got = [_conform(a, _drill_type(a.type)).to_pylist() for a in (s, lists, maps)]
    assert got == [
        [{"h": b"\x00\x3c", "u": b"\x01" * 16}, {"h": None, "u": None}],
        [None, [b"\x00\x40", None]],
        [[("k", b"\x00\x3c")], None],
    ]


# ------------------------------------------------------------------------------ nested
def test_nested_lists_structs_and_maps(conn: Any, tmp_path: Path) -> None:
    path = tmp_path / "nested.parquet"
    item = pa.struct([("b", pa.int64()), ("c", pa.string())])
    table = pa.table(
        {
            "id": [1, 2],
            "los": pa.array([[{"b": 1, "c": "x"}, {"b": 2, "c": "y"}], []], pa.list_(item)),
            "sol": pa.array(
                [{"xs": [1, 2], "n": "a"}, {"xs": None, "n": "b"}],
                pa.struct([("xs", pa.list_(pa.int64())), ("n", pa.string())]),
            ),
            "m": pa.array([[("k", 1), ("j", 2)], None], pa.map_(pa.string(), pa.int64())),
            "lol": pa.array([[[1, 2], [3]], [[]]], pa.list_(pa.list_(pa.int64()))),
        }
    )
    pq.write_table(table, path)
    star = rows(conn, f"SELECT * FROM dfs.`{path}` ORDER BY id")
    assert star[0][:3] == (1, [{"b": 1, "c": "x"}, {"b": 2, "c": "y"}], {"xs": [1, 2], "n": "a"})
    assert star[0][4] == [[1, 2], [3]]
    # a null LIST is an empty array, as Drill's repeated vectors hold it; a null MAP stays
    assert star[1][:3] == (2, [], {"xs": [], "n": "b"}) and star[1][3] is None
    sql = (
        "SELECT t.los[0].b, t.los[1].c, t.sol.xs[1], t.sol.n, t.m.k, t.m['j'], t.lol[0][1] "
        f"FROM dfs.`{path}` t ORDER BY t.id"
    )
    assert rows(conn, sql) == [(1, "y", 2, "a", 1, 2, 2), (None, None, None, "b", None, None, None)]
    # past the end, at any depth of a chain of indexes: NULL, not an error
    sql = f"SELECT t.los[5].b, t.m.zz, t.lol[3][0], t.lol[0][9] FROM dfs.`{path}` t ORDER BY t.id"
    assert rows(conn, sql) == [(None, None, None, None)] * 2
    assert rows(conn, f"SELECT id FROM dfs.`{path}` t WHERE t.lol[3][0] IS NULL ORDER BY id") == [
        (1,),
        (2,),
    ]
    assert rows(conn, f"SELECT id FROM dfs.`{path}` t WHERE t.los[0].b = 1") == [(1,)]


# ------------------------------------------------------------------------------ directories
def test_files_whose_schemas_differ(conn: Any, tmp_path: Path) -> None:
    merge = tmp_path / "merge"
    merge.mkdir()
    pq.write_table(pa.table({"id": pa.array([1], pa.int32()), "a": ["x"]}), merge / "1.parquet")
    pq.write_table(pa.table({"id": pa.array([2], pa.int64())}), merge / "2.parquet")
    sql = f"SELECT * FROM dfs.`{merge}` ORDER BY id"
    assert rows(conn, sql) == [(1, "x"), (2, None)]
    assert described(conn, sql) == [("id", "BIGINT"), ("a", "CHARACTER VARYING")]
    clash = tmp_path / "clash"
    clash.mkdir()
    pq.write_table(pa.table({"a": pa.array([1], pa.int32())}), clash / "1.parquet")
    pq.write_table(pa.table({"a": ["x"]}), clash / "2.parquet")
    err = failure(conn, f"SELECT * FROM dfs.`{clash}`")
    assert err.kind is ErrorKind.DATA_READ
    assert "INT" in str(err) and "VARCHAR" in str(err)
    assert f"File: {clash}/1.parquet" in err.context and f"File: {clash}/2.parquet" in err.context


# ------------------------------------------------------------------------------ bad files
def test_unreadable_parquet_files_name_the_file(conn: Any, tmp_path: Path) -> None:
    good = tmp_path / "good.parquet"
    pq.write_table(
        pa.table({"id": list(range(1000)), "s": [str(i) * 20 for i in range(1000)]}), good
    )
    data = good.read_bytes()
    truncated = tmp_path / "truncated.parquet"
    truncated.write_bytes(data[: len(data) // 2])
    footer = tmp_path / "footer.parquet"
    footer.write_bytes(data[:-12] + b"garbage!PAR1")
    text = tmp_path / "text.parquet"
    text.write_text("id,name\n1,a\n")
    for bad in (truncated, footer, text):
        for sql in (f"SELECT * FROM dfs.`{bad}`", f"SELECT COUNT(*) FROM dfs.`{bad}`"):
            err = failure(conn, sql)
            assert err.kind is ErrorKind.DATA_READ, sql
            assert f"File: {bad}" in err.context, sql
    # one bad file among good ones fails the query, naming it
    err = failure(conn, f"SELECT * FROM dfs.`{tmp_path}`")
    assert err.kind is ErrorKind.DATA_READ and "File: " in "\n".join(err.context)
    pages = bytearray(data)
    for i in range(100, 2000):
        pages[i] ^= 0x5A
    corrupt = tmp_path / "pages" / "corrupt.parquet"
    corrupt.parent.mkdir()
    corrupt.write_bytes(bytes(pages))
    for on in ("true", "false"):
        native(conn, on)
        err = failure(conn, f"SELECT SUM(id), MAX(s) FROM dfs.`{corrupt}`")
        assert err.kind is ErrorKind.DATA_READ and f"File: {corrupt}" in err.context


# ------------------------------------------------------------------------------ compression
JSON = b'{"a": 1, "b": "x"}\n{"a": 2, "b": "y"}\n'
CSV = b"id,name\n1,Fred\n2,Wilma\n"


def _hadoop_blocks(codec: str, payload: bytes, block: int = 16) -> bytes:
    """Hadoop's BlockCompressorStream framing: raw length, compressed length, raw block."""
    c = pa.Codec(codec)
    out = b""
    for i in range(0, len(payload), block):
        piece = payload[i : i + block]
        comp = c.compress(piece, asbytes=True)
        out += len(piece).to_bytes(4, "big") + len(comp).to_bytes(4, "big") + comp
    return out


def _zip(payload: bytes) -> bytes:
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("first", payload)
        z.writestr("second", b"ignored\n")
    return buf.getvalue()


CODECS = {
    "deflate": zlib.compress,
    "snappy": lambda b: _hadoop_blocks("snappy", b),
    "lz4": lambda b: _hadoop_blocks("lz4_raw", b),
    "zip": _zip,
}


@pytest.mark.parametrize("suffix", sorted(CODECS))
def test_hadoop_codec_suffixes(conn: Any, tmp_path: Path, suffix: str) -> None:
    (tmp_path / f"a.json.{suffix}").write_bytes(CODECS[suffix](JSON))
    (tmp_path / f"c.csvh.{suffix}").write_bytes(CODECS[suffix](CSV))
    assert rows(conn, f"SELECT * FROM dfs.`{tmp_path}/a.json.{suffix}` ORDER BY a") == [
        (1, "x"),
        (2, "y"),
    ]
    assert rows(conn, f"SELECT * FROM dfs.`{tmp_path}/c.csvh.{suffix}`") == [
        ("1", "Fred"),
        ("2", "Wilma"),
    ]


def test_corrupt_compressed_inputs_are_data_read_errors(conn: Any, tmp_path: Path) -> None:
    cases = {
        "cut.json.gz": gzip.compress(JSON)[:20],
        "junk.json.gz": b"not gzip at all\n",
        "cut.csvh.gz": gzip.compress(CSV)[:-10],
        "junk.csvh.gz": b"not gzip\n",
        "junk.json.bz2": bz2.compress(JSON)[:-5] + b"xxxxx",
        "junk.json.zst": b"not zstd",
        "junk.json.deflate": b"not zlib",
        "junk.csvh.snappy": b"\x00\x00\x00\x10\x00\x00\x00\x05hello",
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        err = failure(conn, f"SELECT * FROM dfs.`{tmp_path}/{name}`")
        assert err.kind is ErrorKind.DATA_READ, name
        assert f"File: {tmp_path}/{name}" in err.context, name


@pytest.mark.parametrize("codec", ["brotli", "zstd"])
def test_page_codecs_spark_lacks_are_still_read(conn: Any, tmp_path: Path, codec: str) -> None:
    # Spark's own Parquet reader has no Brotli: such files stay on auger's pyarrow reader
    path = tmp_path / f"{codec}.parquet"
    pq.write_table(pa.table({"x": [1, 2, 3], "s": ["a", "b", "c"]}), path, compression=codec)
    native(conn, "true")
    assert rows(conn, f"SELECT SUM(x), MAX(s) FROM dfs.`{path}`") == [(6, "c")]
