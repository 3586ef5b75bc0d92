"""A scan over files whose NOT NULL maps differ, given the table schema discovery merged from
them: each file's map is conformed to the table's (members cast, taken to its modes, members the
file lacks null), where the tracker used to refuse it as a "Scan and Reader column type
conflict". Parquet (REQUIRED groups) and Avro (record fields that are not unions) alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats import get_format
from auger.scan import FileDescrip, ScanOperator, ScanSchemaTracker
from auger.scan.file_scan import ArrowFileScan
from auger.types.schema_text import parse_schema

_ARROW = {"int": pa.int32(), "long": pa.int64(), "string": pa.string(), "double": pa.float64()}


def _parquet(path: Path, members: list[tuple[str, str]], record: dict[str, Any]) -> str:
    m = pa.struct([pa.field(n, _ARROW[t], nullable=False) for n, t in members])
    schema = pa.schema([pa.field("id", pa.int64(), False), pa.field("m", m, False)])
    pq.write_table(pa.Table.from_pylist([record], schema=schema), path.with_suffix(".parquet"))
    return str(path.with_suffix(".parquet"))


def _avro(path: Path, members: list[tuple[str, str]], record: dict[str, Any]) -> str:
    m = {"type": "record", "name": "M", "fields": [{"name": n, "type": t} for n, t in members]}
    fields = [{"name": "id", "type": "long"}, {"name": "m", "type": m}]
    with path.with_suffix(".avro").open("wb") as out:
        fastavro.writer(out, {"type": "record", "name": "R", "fields": fields}, [record])
    return str(path.with_suffix(".avro"))


def _scan(kind: str, files: list[str]) -> list[dict[str, Any]]:
    plugin, config = get_format(kind), FormatConfig(kind, kind, (kind,), {})
    table = plugin.discover_schema(files, config, {})
    op = ScanOperator(plugin, files, ["*"], config=config, defined_schema=table)
    return [r for b in op for r in b.to_pylist()]


@pytest.mark.parametrize(("kind", "write"), [("parquet", _parquet), ("avro", _avro)])
def test_each_file_meets_the_merged_map(kind: str, write: Any, tmp_path: Path) -> None:
    one = {"id": 1, "m": {"a": 1, "b": "x"}}
    two = {"id": 2, "m": {"a": 2**40, "c": 0.5}}
    files = [
        write(tmp_path / "1", [("a", "int"), ("b", "string")], one),
        write(tmp_path / "2", [("a", "long"), ("c", "double")], two),
        write(tmp_path / "3", [("a", "int")], {"id": 3, "m": {"a": 3}}),
    ]
    assert _scan(kind, files) == [
        {"id": 1, "m": {"a": 1, "b": "x", "c": None}},
        {"id": 2, "m": {"a": 2**40, "b": None, "c": 0.5}},
        {"id": 3, "m": {"a": 3, "b": None, "c": None}},
    ]


def test_parquet_maps_in_arrays_and_maps_one_file_lacks(tmp_path: Path) -> None:
    def struct(fields: list[tuple[str, pa.DataType]]) -> pa.DataType:
        return pa.struct([pa.field(n, t, nullable=False) for n, t in fields])

    def write(name: str, fields: list[pa.Field], record: dict[str, Any]) -> str:
        path = tmp_path / f"{name}.parquet"
        pq.write_table(pa.Table.from_pylist([record], schema=pa.schema(fields)), path)
        return str(path)

    items = pa.field("items", pa.list_(pa.field("item", struct([("k", pa.int32())]), False)), False)
    items2 = pa.field(
        "items",
        pa.list_(pa.field("item", struct([("k", pa.int32()), ("v", pa.string())]), False)),
        False,
    )
    m = pa.field("m", struct([("a", pa.int32())]), False)
    files = [
        write("1", [items, m], {"items": [{"k": 1}], "m": {"a": 1}}),
        write("2", [items2], {"items": [{"k": 2, "v": "w"}]}),
    ]
    assert _scan("parquet", files) == [
        {"items": [{"k": 1, "v": None}], "m": {"a": 1}},
        {"items": [{"k": 2, "v": "w"}], "m": {"a": None}},
    ]


def test_a_sliced_batch_of_maps_and_arrays_of_maps_is_conformed() -> None:
    defined = parse_schema(
        "items STRUCT<k BIGINT, v VARCHAR> ARRAY, m STRUCT<a BIGINT NOT NULL, b VARCHAR>"
    )
    scan = ArrowFileScan(ScanSchemaTracker.build(["*"], defined_schema=defined))
    element = pa.struct([pa.field("k", pa.int32(), False)])
    items = pa.array(
        [[{"k": 1}], [{"k": 2}, {"k": 3}], [{"k": 4}]], pa.list_(pa.field("item", element, False))
    )
    m = pa.array([{"a": 1}, {"a": 2}, {"a": 3}], pa.struct([pa.field("a", pa.int32(), False)]))
    batch = pa.RecordBatch.from_arrays([items, m], names=["items", "m"]).slice(1, 2)
    out = scan.scan_batch(FileDescrip("/d/f.parquet"), batch)
    assert out.schema.field("m").type.field("a").type == pa.int64()
    assert out.to_pylist() == [
        {"items": [{"k": 2, "v": None}, {"k": 3, "v": None}], "m": {"a": 2, "b": None}},
        {"items": [{"k": 4, "v": None}], "m": {"a": 3, "b": None}},
    ]


def test_a_null_in_a_member_the_schema_declares_not_null_names_it() -> None:
    defined = parse_schema("m STRUCT<a BIGINT NOT NULL>")
    scan = ArrowFileScan(ScanSchemaTracker.build(["*"], defined_schema=defined))
    m = pa.array([{"a": 1}, {"a": None}], pa.struct([pa.field("a", pa.int32())]))
    batch = pa.RecordBatch.from_arrays([m], names=["m"])
    with pytest.raises(UserError, match=r"Column \[a\] is declared NOT NULL") as info:
        scan.scan_batch(FileDescrip("/d/f.parquet"), batch)
    assert "File: /d/f.parquet" in info.value.context
