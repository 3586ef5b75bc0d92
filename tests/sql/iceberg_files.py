"""Avro and ORC data files committed to an Iceberg table, for tests.

pyiceberg writes its data files in Parquet only, so these are written here as engines that
write Avro or ORC data files write them (the table's field ids in the file's schema: Avro's
``field-id`` field attribute, ORC's ``iceberg.id`` type attribute) and committed by a fast
append of their ``DataFile`` entries, through pyiceberg's own snapshot producer.
"""

from __future__ import annotations

import os
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.orc as orc
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.typedef import Record
from pyiceberg.utils.schema_conversion import AvroSchemaConversion


def write_avro(table: Any, rows: pa.Table, out: str, maps_as_arrays: bool = False) -> None:
    """``rows`` (columns named as the table's current schema names them) as an Avro file
    whose schema carries the table's field ids; maps of string keys as Avro maps, unless
    ``maps_as_arrays``."""
    avro = AvroSchemaConversion().iceberg_to_avro(table.schema(), schema_name="r")
    schema = _named(avro, maps_as_arrays, [0])
    names = [f["name"] for f in schema["fields"]]
    maps = {f.name for f in rows.schema if pa.types.is_map(f.type)}

    def value(name: str, v: Any) -> Any:
        if name not in maps or v is None:
            return v
        return [{"key": k, "value": x} for k, x in v] if maps_as_arrays else dict(v)

    records = [{n: value(n, r.get(n)) for n in names} for r in rows.to_pylist()]
    with open(out, "wb") as fo:
        fastavro.writer(fo, schema, records)


def _named(schema: Any, maps_as_arrays: bool, seen: list[int]) -> Any:
    """``schema`` with a name for each record that has none (pyiceberg leaves a map value's
    record unnamed, which an Avro writer refuses), and (unless ``maps_as_arrays``) each map of
    string keys as an Avro map, as Iceberg's Java writer writes it, not as pyiceberg's array
    of key-value records."""
    if isinstance(schema, list):
        return [_named(s, maps_as_arrays, seen) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        k: _named(v, maps_as_arrays, seen) if k in ("type", "items", "values") else v
        for k, v in schema.items()
    }
    if out.get("logicalType") == "map" and not maps_as_arrays:
        key, value = out["items"]["fields"]
        if key["type"] == "string":
            return {
                "type": "map",
                "values": value["type"],
                "key-id": key["field-id"],
                "value-id": value["field-id"],
            }
    if out.get("type") == "record":
        seen[0] += 1
        out.setdefault("name", f"r_{seen[0]}")
        out["fields"] = [
            {**f, "type": _named(f["type"], maps_as_arrays, seen)} for f in out["fields"]
        ]
    return out


def write_orc(table: Any, rows: pa.Table, out: str) -> None:
    """``rows`` as an ORC file whose types carry the table's field ids (``iceberg.id``)."""
    parquet_ids = schema_to_pyarrow(table.schema())

    def orc_ids(field: pa.Field) -> pa.Field:
        meta = {k: v for k, v in (field.metadata or {}).items() if k != b"PARQUET:field_id"}
        meta[b"iceberg.id"] = field.metadata[b"PARQUET:field_id"]
        t = field.type
        if pa.types.is_struct(t):
            t = pa.struct([orc_ids(m) for m in t])
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            t = pa.list_(orc_ids(t.value_field))
        elif pa.types.is_map(t):
            t = pa.map_(orc_ids(t.key_field), orc_ids(t.item_field))
        return pa.field(field.name, t, field.nullable, meta)

    schema = pa.schema([orc_ids(f) for f in parquet_ids if f.name in rows.column_names])
    orc.write_table(rows.select(schema.names).cast(schema), out)


def _metrics(table: Any, rows: pa.Table) -> dict[str, Any]:
    """The column statistics of a data file's manifest entry: value and null counts of its
    top-level columns, by field id."""
    ids = {f.name: f.field_id for f in table.schema().fields}
    present = [c for c in rows.column_names if c in ids]
    return {
        "column_sizes": {},
        "value_counts": {ids[c]: rows.num_rows for c in present},
        "null_value_counts": {ids[c]: rows.column(c).null_count for c in present},
        "nan_value_counts": {},
        "lower_bounds": {},
        "upper_bounds": {},
    }


def append_file(
    table: Any,
    rows: pa.Table,
    out: str,
    maps_as_arrays: bool = False,
    store_path: str | None = None,
    metrics: bool = True,
) -> str:
    """Write ``rows`` as the data file ``out`` (Avro or ORC by its extension) and commit it
    to ``table`` by a fast append; the file's path as the table names it (``store_path``, where
    the caller puts the file, say an object store; by default ``out`` itself). With
    ``metrics`` the manifest keeps its top-level columns' value and null counts, as writers
    do by default; without, no column statistics at all, which Iceberg allows too."""
    if out.endswith(".avro"):
        write_avro(table, rows, out, maps_as_arrays)
        file_format = FileFormat.AVRO
    else:
        write_orc(table, rows, out)
        file_format = FileFormat.ORC
    path = store_path or "file://" + out
    data_file = DataFile.from_args(
        content=DataFileContent.DATA,
        file_path=path,
        file_format=file_format,
        partition=Record(),
        record_count=rows.num_rows,
        file_size_in_bytes=os.path.getsize(out),
        spec_id=table.spec().spec_id,
        **(_metrics(table, rows) if metrics else {}),
    )
    with table.transaction() as tx, tx.update_snapshot().fast_append() as append:
        append.append_data_file(data_file)
    return path


_AVRO_TYPES = {pa.int64(): "long", pa.int32(): "int", pa.string(): "string"}


def write_delete_rows(rows: pa.Table, ids: list[int], out: str) -> FileFormat:
    """``rows`` (flat columns of longs, ints and strings) as an Avro or ORC delete file (by
    ``out``'s extension) whose columns carry the field ``ids``; its format."""
    if out.endswith(".avro"):
        fields = [
            {"name": f.name, "type": _AVRO_TYPES[f.type], "field-id": i}
            for f, i in zip(rows.schema, ids, strict=True)
        ]
        with open(out, "wb") as fo:
            fastavro.writer(fo, {"type": "record", "name": "d", "fields": fields}, rows.to_pylist())
        return FileFormat.AVRO
    schema = pa.schema(
        [
            f.with_metadata({b"iceberg.id": str(i).encode()})
            for f, i in zip(rows.schema, ids, strict=True)
        ]
    )
    orc.write_table(rows.cast(schema), out)
    return FileFormat.ORC
