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
    partition_constants,
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
