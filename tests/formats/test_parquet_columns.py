"""A table that tracks columns by identity reads each file's columns under the table's names."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from auger.config import FormatConfig
from auger.formats.parquet import ParquetFormat
from auger.formats.parquet_columns import (
    COLUMN_MAPPING,
    PARTITION_VALUES,
    ColumnMapping,
    PartitionConstants,
    column_mapping,
    file_paths,
    partition_constants,
    rename_members,
)
from auger.storage.splits import FileSplit


def _field(name: str, t: pa.DataType, field_id: int | None) -> pa.Field:
    meta = None if field_id is None else {b"PARQUET:field_id": str(field_id).encode()}
    return pa.field(name, t, metadata=meta)


def test_ids_win_over_names_and_dropped_columns_are_left_out() -> None:
    # the file was written when id 2 was called `a` and `b` was id 3 (since dropped); the
    # table's `b` now is id 4
    schema = pa.schema([_field("a", pa.string(), 2), _field("b", pa.int64(), 3)])
    mapping = ColumnMapping(((2, "label", "label"), (4, "b", "b")))
    assert mapping.file_names(schema) == {"a": "label"}


def test_a_file_without_ids_is_matched_by_its_physical_names() -> None:
    schema = pa.schema([_field("col-1", pa.int64(), None), _field("col-2", pa.string(), None)])
    mapping = ColumnMapping(((None, "col-2", "name"), (None, "COL-1", "id")))
    assert mapping.file_names(schema) == {"col-2": "name", "col-1": "id"}
    view, physical = mapping.table_view(schema)
    assert view.names == ["id", "name"] and physical == {"id": "col-1", "name": "col-2"}


def test_the_reader_renames_the_columns_it_reads(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    schema = pa.schema([_field("col-x", pa.int64(), 1), _field("col-y", pa.string(), 2)])
    pq.write_table(pa.table({"col-x": [1, 2], "col-y": ["a", "b"]}, schema=schema), path)
    mapping = ColumnMapping(((2, "col-y", "Name"), (1, "col-x", "id")))
    config = FormatConfig("parquet", "parquet", ("parquet",), {COLUMN_MAPPING: mapping.to_option()})
    assert column_mapping(config.options) == mapping
    split = FileSplit(str(path), path.stat().st_size)
    batches = list(ParquetFormat().read_arrow(split, config, {}, ["name"], 100))
    got = pa.Table.from_batches(batches)
    assert got.column_names == ["Name"] and got.column("Name").to_pylist() == ["a", "b"]
    every = pa.Table.from_batches(list(ParquetFormat().read_arrow(split, config, {}, None, 100)))
    assert every.column_names == ["id", "Name"]


def test_partition_values_travel_as_an_option_and_come_back_typed() -> None:
    schema = pa.schema(
        [("y", pa.int32()), ("at", pa.timestamp("us", tz="UTC")), ("flag", pa.bool_())]
    )
    given = PartitionConstants(schema, {"/t/a.parquet": ["2024", "2024-01-01 10:00:00", None]})
    carried = partition_constants({PARTITION_VALUES: given.to_option()})
    assert carried is not None and carried.schema == schema
    got = dict(carried.arrays("/t/a.parquet", ["y", "at", "flag"], 2))
    assert got["y"].to_pylist() == [2024, 2024] and got["y"].type == pa.int32()
    assert str(got["at"][0]) == "2024-01-01 10:00:00+00:00"
    assert got["flag"].null_count == 2 and got["flag"].type == pa.bool_()
    assert [n for n, _ in carried.arrays("/t/a.parquet", ["flag"], 1)] == ["flag"]


def test_struct_members_are_renamed_by_id_nested_structs_and_nulls_kept() -> None:
    # the file names the column `s0` with members `a` (id 2) and `t` (id 3, holding `x`, id 4);
    # the table renamed `a` to `b` and `t.x` to `t.y`
    inner = pa.struct([_field("x", pa.int64(), 4)])
    struct = pa.struct([_field("a", pa.int64(), 2), _field("t", inner, 3)])
    schema = pa.schema([_field("s0", struct, 1)])
    mapping = ColumnMapping(
        ((1, "s", "s"), (2, "s.b", "s.b"), (3, "s.t", "s.t"), (4, "s.t.y", "s.t.y"))
    )
    members = mapping.member_names(schema)
    assert members == {"s0.a": "b", "s0.t": "t", "s0.t.x": "y"}
    view, physical = mapping.table_view(schema)
    assert [m.name for m in view.field("s").type] == ["b", "t"]
    assert file_paths(["s.b", "S.T.Y", "s"], physical) == ["s0.a", "s0.t.x", "s0"]
    data = pa.array([{"a": 1, "t": {"x": 5}}, None, {"a": 3, "t": None}], struct)
    got = rename_members(data, "s0", members)
    assert got.to_pylist() == [{"b": 1, "t": {"y": 5}}, None, {"b": 3, "t": None}]


def test_struct_members_without_ids_are_matched_by_physical_path() -> None:
    struct = pa.struct([_field("col-2", pa.string(), None)])
    schema = pa.schema([_field("col-1", struct, None)])
    mapping = ColumnMapping(((None, "col-1", "s"), (None, "col-1.col-2", "s.name")))
    view, physical = mapping.table_view(schema)
    assert view.field("s").type[0].name == "name"
    assert file_paths(["s.name"], physical) == ["col-1.col-2"]
