"""Parquet files through pyarrow: footers give the schema, row groups the units of work.

* Projection push-down reaches nested members: a query naming only ``m.b.c`` reads that leaf
  (``__projection__`` paths), and the scan casts the partial map to the table's map type.
* Nothing projected (``COUNT(*)``): row counts come from the footer, no data page is read.
* Drill's type mapping: INT96 reads as TIMESTAMP (microseconds), decimals as DECIMAL(p, s),
  nanosecond timestamps and times are truncated to Drill's precision (Drill keeps milliseconds;
  auger keeps microseconds) rather than failing the cast.
* Unsigned integers keep their stored bits, as Drill's readers do: UINT_8/16/32 are INT and
  UINT_64 is BIGINT, so a value above the signed maximum wraps (UINT_32 4294967295 is -1,
  UINT_64 2**64-1 is -1) instead of failing the scan. INT_8/INT_16 are INT too.
* Fixed or variable bytes whose annotation Drill's converter does not know (UUID, FLOAT16,
  JSON) are VARBINARY, the stored bytes (:func:`_drill_type`).
* Files of one directory may differ: ``discover_schema`` merges them (missing columns null,
  INT with BIGINT → BIGINT...) and a real conflict names both files and both types.
* A corrupt footer or page is a DATA_READ error naming the file (and row group).
* DATE values written by Drill before 1.9 (shifted by about 13,000 years) are shifted back,
  as Drill does (:mod:`auger.formats.parquet_dates`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.base import FormatPlugin
from auger.formats.conflicts import merge_deferring
from auger.formats.parquet_dates import auto_correct_dates, correct_dates, date_corruption
from auger.formats.vectors import unnull_structs
from auger.storage.filesystem import open_random
from auger.storage.splits import FileSplit
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.arrow import schema_from_arrow

__all__ = ["ParquetFormat", "nested_selection"]

ROWS_ONLY = "__rows__"
_ERRORS = (pa.ArrowInvalid, pa.ArrowIOError, OSError, pa.ArrowNotImplementedError)


def _open(path: str) -> pq.ParquetFile:
    try:
        # an object is read with ranged requests: the footer, then only the row groups and
        # columns the scan asks for
        return pq.ParquetFile(open_random(path), coerce_int96_timestamp_unit="us")
    except _ERRORS as exc:
        raise UserError.data_read(
            "Error reading the Parquet footer: the file is not a readable Parquet file",
            [f"File: {path}", f"Reason: {exc}", "Fix: rewrite or remove the file"],
        ) from exc


def _describe(col: ColumnMetadata) -> str:
    return col.type_string()


def nested_selection(
    schema: pa.Schema, columns: Sequence[str] | None, projection: Sequence[str] | None
) -> list[str] | None:
    """pyarrow column paths to read: whole top-level columns, or only the projected members.

    ``columns`` are the lower-cased table columns wanted (None: all); ``projection`` the
    projected paths (``m.b.c``, ``t.m.a`` never reaches here: the planner strips aliases).
    """
    if columns is None:
        return None
    wanted = set(columns)
    members: dict[str, list[list[str]]] = {}
    whole: set[str] = set()
    for path in projection or ():
        parts = [p.strip("`") for p in path.split(".")]
        root = parts[0].lower()
        if root not in wanted:
            continue
        if len(parts) == 1 or "[" in path:
            whole.add(root)
        else:
            members.setdefault(root, []).append(parts[1:])
    out: list[str] = []
    for field in schema:
        lname = field.name.lower()
        if lname not in wanted:
            continue
        if lname in whole or lname not in members or not pa.types.is_struct(field.type):
            out.append(field.name)
            continue
        for sub in members[lname]:
            resolved = _resolve(field, sub)
            if resolved is None:
                continue  # a member the file lacks: the scan fills it with nulls
            if resolved not in out:
                out.append(resolved)
    return out


def _resolve(field: pa.Field, parts: list[str]) -> str | None:
    """The dotted path of a member in the file's spelling, stopping at non-struct members."""
    names = [field.name]
    t = field.type
    for part in parts:
        if not pa.types.is_struct(t):
            break
        match = next((f for f in t if f.name.lower() == part.lower()), None)
        if match is None:
            return None
        names.append(match.name)
        t = match.type
    return ".".join(names)


def _drill_type(t: pa.DataType) -> pa.DataType:
    """The Arrow type auger delivers for a Parquet column pyarrow reads as ``t``: Drill's.

    Drill types a column by its physical type and converted type
    (``ParquetToDrillTypeConverter``), not by the newer logical types pyarrow understands:

    * INT_8/INT_16 (and UINT_8/16/32) are stored in an INT32 and read as INT; UINT_64 as BIGINT;
    * a FIXED_LEN_BYTE_ARRAY or BYTE_ARRAY without a converted type Drill knows (UUID, FLOAT16,
      JSON, BSON) is VARBINARY: the stored bytes;
    * times are TIME (milliseconds), nanosecond timestamps are cut to auger's microseconds.
    """
    if isinstance(t, pa.BaseExtensionType):
        storage = _drill_type(t.storage_type)
        return pa.binary() if pa.types.is_string(storage) else storage
    if pa.types.is_dictionary(t):
        value = _drill_type(t.value_type)
        return t if value == t.value_type else value
    if pa.types.is_integer(t):
        if t.bit_width < 32 or pa.types.is_uint32(t):
            return pa.int32()
        return pa.int64() if pa.types.is_uint64(t) else t
    if pa.types.is_float16(t) or pa.types.is_fixed_size_binary(t):
        return pa.binary()
    if pa.types.is_time(t):
        return pa.time32("ms")
    if pa.types.is_timestamp(t) and t.unit == "ns":
        return pa.timestamp("us", t.tz)
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_drill_type(f.type)) for f in t])
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        field = t.value_field.with_type(_drill_type(t.value_type))
        if pa.types.is_fixed_size_list(t):
            return pa.list_(field, t.list_size)
        return pa.list_(field) if pa.types.is_list(t) else pa.large_list(field)
    if pa.types.is_map(t):
        return pa.map_(
            t.key_field.with_type(_drill_type(t.key_type)),
            t.item_field.with_type(_drill_type(t.item_type)),
        )
    return t


def drill_schema(schema: pa.Schema) -> pa.Schema:
    """The file's Arrow schema with every column typed as Drill reads it."""
    return pa.schema([f.with_type(_drill_type(f.type)) for f in schema])


def _cast_refused(t: pa.DataType) -> bool:
    """Whether ``t`` holds a type Arrow's cast cannot bring to its Drill type (rebuilt by hand)."""
    if isinstance(t, pa.BaseExtensionType) or pa.types.is_float16(t):
        return True
    if pa.types.is_dictionary(t):
        return _cast_refused(t.value_type)
    if pa.types.is_struct(t):
        return any(_cast_refused(f.type) for f in t)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _cast_refused(t.value_type)
    if pa.types.is_map(t):
        return _cast_refused(t.key_type) or _cast_refused(t.item_type)
    return False


def _conform(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """``arr`` as Drill's type ``target`` (from :func:`_drill_type`).

    The unsafe cast keeps the two's-complement bits of an unsigned 32/64-bit value (4294967295
    as INT is -1, as Drill reads it) and cuts times to milliseconds. What the cast refuses
    (extension types, half floats) is rebuilt member by member, as the stored bytes.
    """
    t = arr.type
    if t == target:
        return arr
    if not _cast_refused(t):
        return pc.cast(arr, target, safe=False)
    if isinstance(t, pa.BaseExtensionType):
        return _conform(arr.storage, target)
    if pa.types.is_dictionary(t):
        return _conform(arr.dictionary_decode(), target)
    if pa.types.is_float16(t):
        validity, data = arr.buffers()
        raw = pa.Array.from_buffers(
            pa.binary(2), len(arr), [validity, data], arr.null_count, arr.offset
        )
        return pc.cast(raw, target)
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_struct(t):
        kids = [_conform(arr.field(i), target.field(i).type) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(kids, fields=list(target), mask=mask)
    if pa.types.is_map(t):
        offsets, start, stop = _own_offsets(arr)
        keys = _conform(arr.keys.slice(start, stop - start), target.key_type)
        items = _conform(arr.items.slice(start, stop - start), target.item_type)
        return pa.MapArray.from_arrays(offsets, keys, items, type=target, mask=mask)
    if pa.types.is_fixed_size_list(t):
        t_list = pa.list_(t.value_field)
        arr = pa.ListArray.from_arrays(
            pa.array(range(0, (len(arr) + 1) * t.list_size, t.list_size), pa.int32()),
            arr.values.slice(arr.offset * t.list_size, len(arr) * t.list_size),
            type=t_list,
            mask=mask,
        )
        return pc.cast(_conform(arr, pa.list_(target.value_field)), target)
    offsets, start, stop = _own_offsets(arr)
    values = _conform(arr.values.slice(start, stop - start), target.value_type)
    kind = pa.LargeListArray if pa.types.is_large_list(t) else pa.ListArray
    return kind.from_arrays(offsets, values, type=target, mask=mask)


def _own_offsets(arr: pa.Array) -> tuple[pa.Array, int, int]:
    """A list or map array's offsets rebased to start at 0 (Arrow refuses a null mask with
    the offsets of a slice), and the range of its values they cover."""
    offsets = arr.offsets
    start, stop = offsets[0].as_py(), offsets[-1].as_py()
    return pc.subtract(offsets, offsets[0]), start, stop


def _failing_group(pf: pq.ParquetFile, groups: list[int], columns: list[str] | None) -> str:
    """Which row group cannot be read (the error path only: each is tried alone)."""
    for rg in groups:
        try:
            pf.read_row_group(rg, columns=columns)
        except _ERRORS:
            return str(rg)
    return ", ".join(map(str, groups))


def _file_schema(path: str) -> TupleSchema:
    """A file's columns; names only case tells apart are one column to Drill, so an error."""
    arrow = drill_schema(_open(path).schema_arrow)
    try:
        schema = schema_from_arrow(arrow)
    except ValueError as exc:
        seen: dict[str, str] = {}
        clash = next(
            (f"{seen[n.lower()]}, {n}" for n in arrow.names if seen.setdefault(n.lower(), n) != n),
            "",
        )
        raise UserError.data_read(
            "Parquet file has columns whose names differ only in case",
            [
                f"File: {path}",
                f"Columns: {clash}" if clash else f"Reason: {exc}",
                "Fix: rename one of the columns (names are case-insensitive in SQL)",
            ],
        ) from exc
    # A column of Parquet's null type (every value null, no physical type) is Drill's type for
    # a column without values: a nullable INT.
    return TupleSchema(
        ColumnMetadata(c.name, MinorType.INT, DataMode.OPTIONAL) if c.type is MinorType.NULL else c
        for c in schema
    )


class ParquetFormat(FormatPlugin):
    """Drill's Parquet format plugin (``type = "parquet"``)."""

    type_name = "parquet"
    extensions = ("parquet",)

    def discover_schema(
        self, files: Sequence[str], config: FormatConfig, options: Mapping[str, Any]
    ) -> TupleSchema:
        schema = TupleSchema()
        origin: dict[str, str] = {}  # lower column name -> the file that typed it
        for path in files:
            file_schema = _file_schema(path)
            for col in file_schema:
                origin.setdefault(col.name.lower(), path)

            def error_for(
                column: str, first: ColumnMetadata, second: ColumnMetadata, path: str = path
            ) -> UserError:
                top = origin[column.split(".", 1)[0].lower()]
                return UserError.data_read(
                    f"Column [{column}] has type {_describe(first)} in one file and "
                    f"{_describe(second)} in another",
                    [
                        f"File: {top}",
                        f"Type: {_describe(first)}",
                        f"File: {path}",
                        f"Type: {_describe(second)}",
                        f"Column: {column}",
                        "Fix: rewrite the files with one type, or query them apart",
                    ],
                )

            # a column a later file adds keeps its mode, as Drill's Parquet schema does
            schema = merge_deferring(schema, file_schema, error_for, new_optional=False)
        return schema

    def read_arrow(
        self,
        split: FileSplit,
        config: FormatConfig,
        options: Mapping[str, Any],
        columns: Sequence[str] | None,
        batch_rows: int,
    ) -> Iterator[pa.RecordBatch]:
        pf = _open(split.path)
        groups = (
            list(split.row_groups)
            if split.row_groups is not None
            else list(range(pf.metadata.num_row_groups))
        )
        selected = nested_selection(pf.schema_arrow, columns, options.get("__projection__"))
        if selected is not None and not selected:
            yield from self._counts(pf, groups, batch_rows)
            return
        if not groups:
            return
        # dates written by Drill before 1.9 are shifted: read them back as Drill does
        dates = date_corruption(pf.metadata, auto_correct_dates(config.options))
        try:
            # one call over all the split's row groups: pyarrow pre-buffers and decodes ahead
            batches = pf.iter_batches(
                batch_size=batch_rows, row_groups=groups, columns=selected, use_threads=True
            )
            for batch in batches:
                # a null group is a map of nulls and a null LIST an empty array, as Drill's
                # vectors hold them; null elements stay (Parquet lists may hold them)
                arrays = [
                    unnull_structs(
                        correct_dates(_conform(c, _drill_type(c.type)), dates), zero_elements=False
                    )
                    for c in batch.columns
                ]
                yield pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)
        except _ERRORS as exc:
            raise UserError.data_read(
                "Error reading Parquet data",
                [
                    f"File: {split.path}",
                    f"Row group: {_failing_group(pf, groups, selected)}",
                    f"Reason: {exc}",
                ],
            ) from exc

    @staticmethod
    def _counts(pf: pq.ParquetFile, groups: list[int], batch_rows: int) -> Iterator[pa.RecordBatch]:
        """Row counts from the footer only: batches of one null column."""
        for rg in groups:
            left = pf.metadata.row_group(rg).num_rows
            while left > 0:
                n = min(left, batch_rows)
                left -= n
                yield pa.RecordBatch.from_arrays([pa.nulls(n)], names=[ROWS_ONLY])
