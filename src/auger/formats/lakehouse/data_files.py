"""The data files of an Iceberg table that are not Parquet: Avro and ORC, read by field id.

Iceberg lets a writer choose the format of each data file (Parquet, Avro or ORC), so one
table, even one snapshot, may hold all three. The table is still one scan: its files are read
as the table format (``iceberg``), whose reader takes each file by its format as the table's
manifests give it: a Parquet file through the Parquet reader, an Avro file through the
``avro`` format plugin, an ORC file through pyarrow's ORC reader, its columns typed as the
Parquet reader types them.

Whatever the format, a file's columns are the table's by field id, as in a Parquet file
(:class:`auger.formats.parquet_columns.ColumnMapping`): Iceberg writes each column's id into
the file's schema, as the ``field-id`` attribute of an Avro field and the ``iceberg.id``
attribute of an ORC type (:mod:`auger.formats.field_ids`). A column renamed since the file
was written is read under its new name, a dropped one is not read, and one added since reads
NULL (the scan fills a column a file lacks). The rows the table deleted by position or by
key are left out, as from a Parquet file (:func:`auger.formats.parquet_deletes.without_deleted`),
whatever the format of the delete files.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.field_ids import avro_schema, open_file
from auger.formats.parquet import ROWS_ONLY, drill_array
from auger.formats.parquet_columns import ColumnMapping, column_mapping, rename_members
from auger.formats.parquet_deletes import row_deletes, without_deleted
from auger.formats.registry import get_format
from auger.storage.splits import FileSplit

__all__ = ["DATA_FILE_FORMATS", "read_data_file"]

#: The format option that carries the formats of a table's data files that are not Parquet
#: to its reader: ``{path the scan reads: "avro" or "orc"}``.
DATA_FILE_FORMATS = "data_file_formats"

#: A whole file's rows as one run from position 0 (position deletes count from there).
_WHOLE_FILE = [(0, sys.maxsize)]


def read_data_file(
    split: FileSplit,
    config: FormatConfig,
    options: Mapping[str, Any],
    columns: Sequence[str] | None,
    batch_rows: int,
) -> Iterator[pa.RecordBatch]:
    """The batches of one data file of a table whose files are not all Parquet, under the
    table's column names (``columns``: the lower-cased table columns wanted, None: all),
    without the rows the table deleted."""
    formats: Mapping[str, str] = config.options.get(DATA_FILE_FORMATS) or {}
    kind = formats.get(split.path, "parquet")
    if kind == "parquet":
        return get_format("parquet").read_arrow(split, config, options, columns, batch_rows)
    mapping = column_mapping(config.options)

    def read(wanted: Sequence[str] | None) -> Iterator[pa.RecordBatch]:
        if kind == "avro":
            return _read_avro(split, config, options, wanted, batch_rows, mapping)
        return _read_orc(split, wanted, mapping)

    deletes = row_deletes(config.options)
    return without_deleted(deletes, split.path, columns, read, lambda: _WHOLE_FILE)


class _FileColumns:
    """Which columns of one file to read for the table columns wanted, and how to name
    what was read as the table names it."""

    def __init__(
        self, schema: pa.Schema, mapping: ColumnMapping | None, columns: Sequence[str] | None
    ) -> None:
        if mapping is None:
            # the table never renamed a column: the file's names are the table's
            self.table_names = {n: n for n in schema.names}
            self.members: dict[str, str] = {}
        else:
            self.table_names = mapping.file_names(schema)
            self.members = mapping.member_names(schema)
        wanted = None if columns is None else set(columns)
        #: the file's columns to read, in the file's order
        self.read = [
            n
            for n in schema.names
            if n in self.table_names and (wanted is None or self.table_names[n].lower() in wanted)
        ]

    def renamed(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """A batch of the file's columns under the table's names."""
        names = batch.schema.names
        if not self.members and all(self.table_names.get(n, n) == n for n in names):
            return batch
        arrays = [
            rename_members(a, n, self.members) for a, n in zip(batch.columns, names, strict=True)
        ]
        return pa.RecordBatch.from_arrays(arrays, names=[self.table_names.get(n, n) for n in names])


# ---- Avro


def _read_avro(
    split: FileSplit,
    config: FormatConfig,
    options: Mapping[str, Any],
    columns: Sequence[str] | None,
    batch_rows: int,
    mapping: ColumnMapping | None,
) -> Iterator[pa.RecordBatch]:
    schema = avro_schema(split.path)
    chosen = _FileColumns(schema, mapping, columns)
    avro = get_format("avro")
    wanted = [n.lower() for n in chosen.read]
    maps = {f.name for f in schema if pa.types.is_map(f.type)}
    for batch in avro.read_arrow(split, config, options, wanted, batch_rows):
        if batch.schema.names == [ROWS_ONLY]:
            yield batch
            continue
        if maps:
            arrays = [
                _as_map(a) if n in maps else a
                for a, n in zip(batch.columns, batch.schema.names, strict=True)
            ]
            batch = pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)
        yield chosen.renamed(batch)


def _as_map(arr: pa.Array) -> pa.Array:
    """A map column the Avro reader read as an array of key-value records (Iceberg's Avro
    form of a map), as the map it is; a map read as one (string keys) as it is."""
    t = arr.type
    if not pa.types.is_list(t) or not pa.types.is_struct(t.value_type):
        return arr
    if t.value_type.num_fields != 2:
        return arr
    offsets = arr.offsets
    start, stop = offsets[0].as_py(), offsets[-1].as_py()
    keys, items = arr.values.slice(start, stop - start).flatten()
    return pa.MapArray.from_arrays(
        pc.subtract(offsets, offsets[0]),
        keys,
        items,
        mask=arr.is_null() if arr.null_count else None,
    )


# ---- ORC


def _micros(t: pa.DataType) -> pa.DataType:
    """``t`` with its timestamps in microseconds (ORC's are read as nanoseconds, which the
    Parquet reader's typing would leave as numbers)."""
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", t.tz) if t.unit == "ns" else t
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_micros(f.type)) for f in t])
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        field = t.value_field.with_type(_micros(t.value_type))
        return pa.list_(field) if pa.types.is_list(t) else pa.large_list(field)
    if pa.types.is_map(t):
        return pa.map_(
            t.key_field.with_type(_micros(t.key_type)),
            t.item_field.with_type(_micros(t.item_type)),
        )
    return t


def _read_orc(
    split: FileSplit, columns: Sequence[str] | None, mapping: ColumnMapping | None
) -> Iterator[pa.RecordBatch]:
    # deferred: only a table with ORC data files needs it
    import pyarrow.orc as orc

    path = split.path
    stripe: int | None = None  # None: the file's footer
    try:
        with open_file(path) as fo:
            reader = orc.ORCFile(fo)
            chosen = _FileColumns(reader.schema, mapping, columns)
            if not chosen.read:
                # nothing of the file is wanted: its row count, from its footer
                if reader.nrows:
                    yield pa.RecordBatch.from_arrays([pa.nulls(reader.nrows)], names=[ROWS_ONLY])
                return
            for stripe in range(reader.nstripes):
                batch = reader.read_stripe(stripe, columns=chosen.read)
                arrays = []
                for column in batch.columns:
                    micros = _micros(column.type)
                    if micros != column.type:
                        column = column.cast(micros)
                    arrays.append(drill_array(column))
                typed = pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)
                yield chosen.renamed(typed)
    except (pa.ArrowException, OSError) as exc:
        where = [f"File: {path}"] + ([] if stripe is None else [f"Stripe: {stripe}"])
        raise UserError.data_read("Error reading ORC data", [*where, f"Reason: {exc}"]) from exc
