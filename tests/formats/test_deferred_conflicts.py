"""Type conflicts found by discovery wait for the query that reads the column or member."""

from __future__ import annotations

import decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.config import FormatConfig
from auger.errors import ErrorKind, UserError
from auger.formats.conflicts import check_read, conflict_of, defer_conflict, merge_deferring
from auger.formats.json import JsonFormat
from auger.formats.parquet import ParquetFormat
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.schema_text import parse_schema

JSON = FormatConfig("json", "json", ("json",), {})
PARQUET = FormatConfig("parquet", "parquet", ("parquet",), {})


def _error(column: str) -> UserError:
    return UserError.data_read(f'Column [{column}] "quoted" it\'s \\ odd', ["File: /d/a b.json"])


def _never(path: str, first: ColumnMetadata, second: ColumnMetadata) -> UserError:
    raise AssertionError(f"no conflict expected in {path}")


def _json_schema(tmp_path: Path, text: str) -> TupleSchema:
    path = tmp_path / "f.json"
    path.write_text(text)
    return JsonFormat().discover_schema([str(path)], JSON, {})


def test_reading_a_member_checks_only_that_member() -> None:
    b = defer_conflict(ColumnMetadata("b", MinorType.BIGINT), _error("m.b"))
    m = ColumnMetadata.map("m", [ColumnMetadata("a", MinorType.BIGINT), b])
    check_read(m, [["a"]])
    for members in (None, [], [["b"]], [["a"], ["B"]]):
        with pytest.raises(UserError, match=r"Column \[m.b\]"):
            check_read(m, members)


def test_reading_a_member_of_a_member() -> None:
    deep = defer_conflict(ColumnMetadata("y", MinorType.VARCHAR), _error("m.n.y"))
    n = ColumnMetadata.map("n", [ColumnMetadata("x", MinorType.BIGINT), deep])
    m = ColumnMetadata.map("m", [n])
    check_read(m, [["n", "x"]])
    with pytest.raises(UserError, match=r"m\.n\.y"):
        check_read(m, [["n"]])  # all of n
    with pytest.raises(UserError, match=r"m\.n\.y"):
        check_read(m, [["n", "x"], ["n"]])


def test_a_conflict_survives_the_schema_text_and_later_widening() -> None:
    marked = defer_conflict(ColumnMetadata("a", MinorType.BIGINT), _error("a"))
    parsed = parse_schema(TupleSchema([marked]).to_text())
    assert str(conflict_of(parsed.column("a"))) == str(_error("a"))
    widened = merge_deferring(parsed, [ColumnMetadata("a", MinorType.FLOAT8)], _never)
    assert widened.column("a").type is MinorType.FLOAT8
    with pytest.raises(UserError) as info:
        check_read(widened.column("a"))
    assert info.value.message == _error("a").message
    assert info.value.context == ["File: /d/a b.json"]


def test_the_first_conflict_is_the_one_reported() -> None:
    first = defer_conflict(ColumnMetadata("a", MinorType.BIGINT), _error("first"))
    again = defer_conflict(first, _error("second"))
    assert str(conflict_of(again)) == str(_error("first"))


def test_merge_keeps_the_first_type_and_order() -> None:
    one = parse_schema("a BIGINT, b VARCHAR")
    two = parse_schema("b BIGINT, c BIT NOT NULL")

    def error_for(path: str, first: ColumnMetadata, second: ColumnMetadata) -> UserError:
        return UserError.data_read(f"{path}: {first.type.value} vs {second.type.value}")

    merged = merge_deferring(one, two, error_for)
    assert [(c.name, c.type, c.mode) for c in merged] == [
        ("a", MinorType.BIGINT, DataMode.OPTIONAL),
        ("b", MinorType.VARCHAR, DataMode.OPTIONAL),
        ("c", MinorType.BIT, DataMode.OPTIONAL),  # new in the second: may be absent
    ]
    with pytest.raises(UserError, match="b: VARCHAR vs BIGINT"):
        check_read(merged.column("b"))
    check_read(merged.column("a"))
    check_read(merged.column("c"))


def test_json_column_conflict_is_kept_for_that_column(tmp_path: Path) -> None:
    schema = _json_schema(tmp_path, '{"id": 1, "x": 1}\n{"id": 2, "x": "s"}\n')
    check_read(schema.column("id"))
    with pytest.raises(UserError) as info:
        check_read(schema.column("x"))
    assert info.value.kind is ErrorKind.DATA_READ
    assert "BIGINT" in info.value.message and "VARCHAR" in info.value.message
    assert "Line: 2" in info.value.context and "Column: x" in info.value.context


def test_json_member_conflict_stays_on_the_member(tmp_path: Path) -> None:
    text = '{"m": {"a": 1, "b": 1}}\n{"m": {"a": 2, "b": {"z": 1}}}\n{"m": {"a": 3, "c": true}}\n'
    schema = _json_schema(tmp_path, text)
    m = schema.column("m")
    assert [c.name for c in m.children or ()] == ["a", "b", "c"]  # later members still merge
    check_read(m, [["a"]])
    check_read(m, [["c"]])
    with pytest.raises(UserError, match=r"JSON column \[m\.b\]") as info:
        check_read(m, [["b"]])
    assert "Line: 2" in info.value.context


def test_json_conflict_in_a_sample_names_the_record(tmp_path: Path) -> None:
    # 300 records: the sample is merged in bulk first; the conflict still names its line
    lines = [f'{{"id": {i}, "v": {i}}}' for i in range(300)]
    lines[217] = '{"id": 217, "v": [1]}'
    schema = _json_schema(tmp_path, "\n".join(lines) + "\n")
    check_read(schema.column("id"))
    with pytest.raises(UserError) as info:
        check_read(schema.column("v"))
    assert "Line: 218" in info.value.context


def test_parquet_files_that_disagree_on_an_unread_column(tmp_path: Path) -> None:
    one, two = tmp_path / "1.parquet", tmp_path / "2.parquet"
    decimals = pa.array([decimal.Decimal("1.50")], pa.decimal128(10, 2))
    pq.write_table(pa.table({"id": [1], "contributions": decimals}), one)
    pq.write_table(pa.table({"id": [2], "contributions": [2.5]}), two)
    schema = ParquetFormat().discover_schema([str(one), str(two)], PARQUET, {})
    check_read(schema.column("id"))
    with pytest.raises(UserError) as info:
        check_read(schema.column("contributions"))
    assert "DECIMAL(10, 2)" in info.value.message and "DOUBLE" in info.value.message
    assert f"File: {one}" in info.value.context and f"File: {two}" in info.value.context


def test_parquet_member_conflict(tmp_path: Path) -> None:
    one, two = tmp_path / "1.parquet", tmp_path / "2.parquet"
    pq.write_table(pa.table({"m": [{"a": 1, "b": 1}]}), one)
    pq.write_table(pa.table({"m": [{"a": 2, "b": "x"}]}), two)
    m = ParquetFormat().discover_schema([str(one), str(two)], PARQUET, {}).column("m")
    check_read(m, [["a"]])
    with pytest.raises(UserError, match=r"Column \[m\.b\]"):
        check_read(m, [["b"]])


def _not_null_struct(fields: list[tuple[str, pa.DataType]]) -> pa.DataType:
    return pa.struct([pa.field(n, t, nullable=False) for n, t in fields])


def _write_not_null_map(path: Path, m: pa.DataType, value: dict[str, object]) -> str:
    schema = pa.schema([pa.field("m", m, nullable=False)])
    pq.write_table(pa.Table.from_pylist([{"m": value}], schema=schema), path)
    return str(path)


def test_parquet_not_null_maps_merge_members(tmp_path: Path) -> None:
    one = _write_not_null_map(
        tmp_path / "1.parquet",
        _not_null_struct([("a", pa.int32()), ("b", pa.string())]),
        {"a": 1, "b": "x"},
    )
    two = _write_not_null_map(
        tmp_path / "2.parquet",
        _not_null_struct([("a", pa.int64()), ("c", pa.float64())]),
        {"a": 2, "c": 2.5},
    )
    m = ParquetFormat().discover_schema([one, two], PARQUET, {}).column("m")
    # both files have `a` (widened) and the map; each lacks one of `b` and `c`: nullable
    assert m.mode is DataMode.REQUIRED
    assert [(c.name, c.type, c.mode) for c in m.children] == [
        ("a", MinorType.BIGINT, DataMode.REQUIRED),
        ("b", MinorType.VARCHAR, DataMode.OPTIONAL),
        ("c", MinorType.FLOAT8, DataMode.OPTIONAL),
    ]
    check_read(m)


def test_parquet_map_one_file_lacks_is_nullable_to_its_leaves(tmp_path: Path) -> None:
    inner = _not_null_struct([("x", pa.int32())])
    one = _write_not_null_map(
        tmp_path / "1.parquet", _not_null_struct([("n", inner)]), {"n": {"x": 1}}
    )
    two = tmp_path / "2.parquet"
    pq.write_table(pa.table({"id": [1]}), two)
    schema = ParquetFormat().discover_schema([one, str(two)], PARQUET, {})
    m = schema.column("m")
    n = m.member("n")
    assert (m.mode, n.mode, n.member("x").mode) == (DataMode.OPTIONAL,) * 3
    # a scalar column one Parquet file lacks keeps its mode (Drill's Parquet schema)
    assert ParquetFormat().discover_schema([str(two), one], PARQUET, {}).column("id").mode is (
        schema.column("id").mode
    )


def test_a_map_nullable_in_one_file_makes_its_members_nullable() -> None:
    required = ColumnMetadata.map("m", [ColumnMetadata("a", MinorType.INT, DataMode.REQUIRED)])
    optional = required.with_mode(DataMode.OPTIONAL)
    merged = merge_deferring(TupleSchema([required]), [optional], _never).column("m")
    assert merged.mode is DataMode.OPTIONAL
    assert merged.member("a").mode is DataMode.OPTIONAL


def test_member_conflict_of_not_null_maps_names_both_files_and_types(tmp_path: Path) -> None:
    one = _write_not_null_map(
        tmp_path / "1.parquet", _not_null_struct([("a", pa.int32())]), {"a": 1}
    )
    two = _write_not_null_map(
        tmp_path / "2.parquet", _not_null_struct([("a", pa.string())]), {"a": "x"}
    )
    m = ParquetFormat().discover_schema([one, two], PARQUET, {}).column("m")
    with pytest.raises(UserError) as info:
        check_read(m, [["a"]])
    assert (
        info.value.message
        == "Column [m.a] has type INT NOT NULL in one file and VARCHAR NOT NULL in another"
    )
    assert info.value.context[:4] == [
        f"File: {one}",
        "Type: INT NOT NULL",
        f"File: {two}",
        "Type: VARCHAR NOT NULL",
    ]
