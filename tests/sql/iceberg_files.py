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


def write_avro(table: Any, rows: pa.Table, out: str) -> None:
    """``rows`` (columns named as the table's current schema names them) as an Avro file
    whose schema carries the table's field ids."""
    schema = AvroSchemaConversion().iceberg_to_avro(table.schema(), schema_name="r")
    names = [f["name"] for f in schema["fields"]]
    records = [{n: r.get(n) for n in names} for r in rows.to_pylist()]
    with open(out, "wb") as fo:
        fastavro.writer(fo, schema, records)


def write_orc(table: Any, rows: pa.Table, out: str) -> None:
    """``rows`` as an ORC file whose types carry the table's field ids (``iceberg.id``)."""
    parquet_ids = schema_to_pyarrow(table.schema())

    def orc_ids(field: pa.Field) -> pa.Field:
        meta = {k: v for k, v in (field.metadata or {}).items() if k != b"PARQUET:field_id"}
        meta[b"iceberg.id"] = field.metadata[b"PARQUET:field_id"]
        t = field.type
        if pa.types.is_struct(t):
            t = pa.struct([orc_ids(m) for m in t])
        return pa.field(field.name, t, field.nullable, meta)

    schema = pa.schema([orc_ids(f) for f in parquet_ids if f.name in rows.column_names])
    orc.write_table(rows.select(schema.names).cast(schema), out)


def append_file(table: Any, rows: pa.Table, out: str) -> str:
    """Write ``rows`` as the data file ``out`` (Avro or ORC by its extension) and commit it
    to ``table`` by a fast append; the file's path as the table names it."""
    if out.endswith(".avro"):
        write_avro(table, rows, out)
        file_format = FileFormat.AVRO
    else:
        write_orc(table, rows, out)
        file_format = FileFormat.ORC
    path = "file://" + out
    data_file = DataFile.from_args(
        content=DataFileContent.DATA,
        file_path=path,
        file_format=file_format,
        partition=Record(),
        record_count=rows.num_rows,
        file_size_in_bytes=os.path.getsize(out),
        spec_id=table.spec().spec_id,
    )
    with table.transaction() as tx, tx.update_snapshot().fast_append() as append:
        append.append_data_file(data_file)
    return path
