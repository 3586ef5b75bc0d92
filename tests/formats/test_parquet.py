"""Parquet reader: nested push-down, row groups, footer counts, Drill's types, merges, errors."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.config import FormatConfig
from auger.errors import ErrorKind, UserError
from auger.formats.conflicts import check_read
from auger.formats.parquet import ParquetFormat, nested_selection
from auger.scan.spec import FileSplit

from .helpers import read_file, rows_of

CFG = FormatConfig("parquet", "parquet", ("parquet",), {})


def table() -> pa.Table:
    return pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int32()),
            "m": [{"a": 1, "b": {"c": "x", "d": 2}}, None, {"a": 3, "b": None}],
            "name": ["a", "b", "c"],
        }
    )


def discover(*paths: Path) -> str:
    return ParquetFormat().discover_schema([str(p) for p in paths], CFG, {}).to_text()


def test_reads_all_columns(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(table(), path)
    # a null group reads as a map of nulls (Drill's maps are never null)
    expect = table().to_pylist()
    expect[1]["m"] = {"a": None, "b": {"c": None, "d": None}}
    expect[2]["m"]["b"] = {"c": None, "d": None}
    assert rows_of(read_file(path, "parquet")) == expect
    assert discover(path) == (
        "`id` INT, `m` STRUCT<`a` BIGINT, `b` STRUCT<`c` VARCHAR, `d` BIGINT>>, `name` VARCHAR"
    )


def test_projection_of_nested_members(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(table(), path)
    opts = {"__projection__": ["M.b.c", "id"]}
    batches = read_file(path, "parquet", {}, opts, columns=["m", "id"])
    assert batches[0].schema.names == ["id", "m"]
    assert batches[0].schema.field("m").type == pa.struct(
        [pa.field("b", pa.struct([pa.field("c", pa.string())]))]
    )
    assert rows_of(batches)[0] == {"id": 1, "m": {"b": {"c": "x"}}}


def test_nested_selection_rules() -> None:
    schema = table().schema
    assert nested_selection(schema, None, ["*"]) is None
    assert nested_selection(schema, ["name"], ["NAME"]) == ["name"]
    assert nested_selection(schema, ["m"], ["m.a", "m"]) == ["m"]
    assert nested_selection(schema, ["m"], ["m.a", "m.b.zz", "m.q"]) == ["m.a"]


def test_row_groups_are_units_of_work(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": list(range(100))}), path, row_group_size=30)
    split = FileSplit(str(path), row_groups=(1, 3))
    got = list(ParquetFormat().read_arrow(split, CFG, {}, None, 1000))
    assert [v for b in got for v in b.column(0).to_pylist()] == [*range(30, 60), *range(90, 100)]


def test_count_only_reads_footer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": list(range(100))}), path, row_group_size=30)

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("data pages were read")

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", refuse)
    batches = read_file(path, "parquet", {}, {}, columns=[], batch_rows=25)
    assert sum(b.num_rows for b in batches) == 100
    assert max(b.num_rows for b in batches) <= 25


def test_batch_rows_limit(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": list(range(1000))}), path)
    batches = read_file(path, "parquet", batch_rows=128)
    assert max(b.num_rows for b in batches) == 128
    assert sum(b.num_rows for b in batches) == 1000


def test_drill_type_mapping(tmp_path: Path) -> None:
    path = tmp_path / "types.parquet"
    ts = dt.datetime(2021, 3, 4, 5, 6, 7, 123456)
    t = pa.table(
        {
            "dec": pa.array([decimal.Decimal("12.34")], pa.decimal128(6, 2)),
            "d": pa.array([dt.date(2020, 1, 2)], pa.date32()),
            "ts": pa.array([ts], pa.timestamp("us")),
            "i96": pa.array([ts], pa.timestamp("us")),
            "ns": pa.array([1_000_000_001], pa.timestamp("ns")),
            "u": pa.array([7], pa.uint32()),
            "f": pa.array([1.5], pa.float32()),
            "bin": pa.array([b"\x00\x01"], pa.binary()),
            "flag": [True],
            "l": [[1, 2]],
        }
    )
    pq.write_table(t.drop_columns(["i96"]), tmp_path / "plain.parquet")
    pq.write_table(t.select(["i96"]), path, use_deprecated_int96_timestamps=True)
    assert discover(tmp_path / "plain.parquet") == (
        "`dec` DECIMAL(6, 2), `d` DATE, `ts` TIMESTAMP, `ns` BIGINT, `u` INT, `f` FLOAT, "
        "`bin` VARBINARY, `flag` BOOLEAN, `l` ARRAY<BIGINT>"
    )
    assert discover(path) == "`i96` VARBINARY"  # TIMESTAMP with int96_as_timestamp
    as_ts = {"store.parquet.reader.int96_as_timestamp": True}
    row = rows_of(read_file(path, "parquet", options=as_ts))[0]
    assert row["i96"] == ts
    plain = read_file(tmp_path / "plain.parquet", "parquet")[0]
    assert plain.schema.field("ns").type == pa.int64()  # the stored nanoseconds, as Drill
    assert plain.column("ns").to_pylist()[0] == 1_000_000_001


def test_different_schemas_merge(tmp_path: Path) -> None:
    pq.write_table(pa.table({"a": pa.array([1], pa.int32()), "b": ["x"]}), tmp_path / "1.parquet")
    pq.write_table(pa.table({"a": pa.array([2], pa.int64()), "c": [1.5]}), tmp_path / "2.parquet")
    assert discover(tmp_path / "1.parquet", tmp_path / "2.parquet") == (
        "`a` BIGINT, `b` VARCHAR, `c` DOUBLE"
    )


def test_schema_conflict_names_both_files(tmp_path: Path) -> None:
    one, two = tmp_path / "1.parquet", tmp_path / "2.parquet"
    pq.write_table(pa.table({"a": [1]}), one)
    pq.write_table(pa.table({"a": ["x"]}), two)
    schema = ParquetFormat().discover_schema([str(one), str(two)], CFG, {})
    assert schema.to_text().startswith("`a` BIGINT")  # the first file's type, until read
    with pytest.raises(UserError) as info:
        check_read(schema.column("a"))
    err = info.value
    assert err.kind is ErrorKind.DATA_READ
    assert "BIGINT" in err.message and "VARCHAR" in err.message
    assert f"File: {one}" in err.context and f"File: {two}" in err.context


def test_corrupt_footer(tmp_path: Path) -> None:
    path = tmp_path / "bad.parquet"
    pq.write_table(table(), path)
    path.write_bytes(path.read_bytes()[:-12] + b"garbage!PAR1")
    for call in (lambda: discover(path), lambda: read_file(path, "parquet")):
        with pytest.raises(UserError) as info:
            call()
        assert info.value.kind is ErrorKind.DATA_READ
        assert f"File: {path}" in info.value.context


def test_not_parquet_at_all(tmp_path: Path) -> None:
    path = tmp_path / "text.parquet"
    path.write_text("hello")
    with pytest.raises(UserError, match="Parquet footer"):
        discover(path)


def test_data_error_names_the_row_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": list(range(90))}), path, row_group_size=30)

    def broken_batches(self: Any, *args: Any, **kwargs: Any) -> Any:
        yield from ()
        raise pa.ArrowInvalid("bad page")

    real = pq.ParquetFile.read_row_group

    def broken_group(self: Any, i: int, *args: Any, **kwargs: Any) -> Any:
        if i == 1:
            raise pa.ArrowInvalid("bad page")
        return real(self, i, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", broken_batches)
    monkeypatch.setattr(pq.ParquetFile, "read_row_group", broken_group)
    with pytest.raises(UserError) as info:
        read_file(path, "parquet")
    assert info.value.kind is ErrorKind.DATA_READ
    assert "Row group: 1" in info.value.context and f"File: {path}" in info.value.context


def test_columns_differing_only_in_case_are_a_data_read_error(tmp_path: Path) -> None:
    path = tmp_path / "dupcase.parquet"
    pq.write_table(pa.table({"A": [1], "a": [2]}), path)
    with pytest.raises(UserError) as err:
        discover(path)
    assert err.value.kind is ErrorKind.DATA_READ
    assert f"File: {path}" in err.value.context
    assert "Columns: A, a" in err.value.context
