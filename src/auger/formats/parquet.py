"""Parquet files through pyarrow: footers give the schema, row groups the units of work.

* Projection push-down reaches nested members: a query naming only ``m.b.c`` reads that leaf
  (``__projection__`` paths), and the scan casts the partial map to the table's map type.
* Nothing projected (``COUNT(*)``): row counts come from the footer, no data page is read.
* Drill's type mapping: INT96 reads as TIMESTAMP (microseconds), decimals as DECIMAL(p, s),
  nanosecond timestamps and times are truncated to Drill's precision (Drill keeps milliseconds;
  auger keeps microseconds) rather than failing the cast.
* Unsigned integers keep their stored bits, as Drill's readers do: UINT_8/16/32 are INT and
  UINT_64 is BIGINT, so a value above the signed maximum wraps (UINT_32 4294967295 is -1,
  UINT_64 2**64-1 is -1) instead of failing the scan.
* Files of one directory may differ: ``discover_schema`` merges them (missing columns null,
  INT with BIGINT → BIGINT...) and a real conflict names both files and both types.
* A corrupt footer or page is a DATA_READ error naming the file (and row group).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.base import FormatPlugin, widen
from auger.scan.spec import FileSplit
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.arrow import schema_from_arrow

__all__ = ["ParquetFormat", "nested_selection"]

ROWS_ONLY = "__rows__"
_ERRORS = (pa.ArrowInvalid, pa.ArrowIOError, OSError, pa.ArrowNotImplementedError)


def _open(path: str) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(path, coerce_int96_timestamp_unit="us")
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


def _drill_precision(arr: pa.Array) -> pa.Array:
    """Nanosecond timestamps/times truncated to microseconds (beyond Drill's precision)."""
    t = arr.type
    if pa.types.is_timestamp(t) and t.unit == "ns":
        return pc.cast(arr, pa.timestamp("us", t.tz), safe=False)
    if pa.types.is_time64(t) and t.unit == "ns":
        return pc.cast(arr, pa.time64("us"), safe=False)
    if pa.types.is_time(t):
        return pc.cast(arr, pa.time32("ms"), safe=False)
    return arr


def _unsigned_free(t: pa.DataType) -> pa.DataType | None:
    """``t`` with every unsigned integer replaced by Drill's signed type (None: none inside)."""
    signed = {8: pa.int32(), 16: pa.int32(), 32: pa.int32(), 64: pa.int64()}
    if pa.types.is_unsigned_integer(t):
        return signed[t.bit_width]
    if pa.types.is_struct(t):
        kids = [_unsigned_free(f.type) for f in t]
        if all(k is None for k in kids):
            return None
        return pa.struct([f.with_type(k or f.type) for f, k in zip(t, kids, strict=True)])
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        item = _unsigned_free(t.value_type)
        if item is None:
            return None
        field = t.value_field.with_type(item)
        return pa.list_(field) if pa.types.is_list(t) else pa.large_list(field)
    if pa.types.is_fixed_size_list(t):
        item = _unsigned_free(t.value_type)
        return None if item is None else pa.list_(t.value_field.with_type(item), t.list_size)
    if pa.types.is_map(t):
        key, item = _unsigned_free(t.key_type), _unsigned_free(t.item_type)
        if key is None and item is None:
            return None
        return pa.map_(
            t.key_field.with_type(key or t.key_type), t.item_field.with_type(item or t.item_type)
        )
    if pa.types.is_dictionary(t):
        value = _unsigned_free(t.value_type)
        return None if value is None else value
    return None


def _signed_ints(arr: pa.Array) -> pa.Array:
    """Unsigned integers (top level or nested) as Drill reads them: the same bits, signed.

    The unsafe cast keeps the two's-complement bits of a 32/64-bit value (4294967295 as INT is
    -1); 8/16-bit values fit an INT unchanged.
    """
    target = _unsigned_free(arr.type)
    return arr if target is None else pc.cast(arr, target, safe=False)


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
    arrow = _open(path).schema_arrow
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
                mine = schema.column(col.name)
                if mine is None:
                    schema.add(col)
                    origin[col.name.lower()] = path
                    continue
                merged = widen(mine, col)
                if merged is None:
                    first = origin[col.name.lower()]
                    raise UserError.data_read(
                        f"Column [{col.name}] has type {_describe(mine)} in one file and "
                        f"{_describe(col)} in another",
                        [
                            f"File: {first}",
                            f"Type: {_describe(mine)}",
                            f"File: {path}",
                            f"Type: {_describe(col)}",
                            f"Column: {col.name}",
                            "Fix: rewrite the files with one type, or query them apart",
                        ],
                    )
                schema.replace(merged)
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
        try:
            # one call over all the split's row groups: pyarrow pre-buffers and decodes ahead
            batches = pf.iter_batches(
                batch_size=batch_rows, row_groups=groups, columns=selected, use_threads=True
            )
            for batch in batches:
                arrays = [_signed_ints(_drill_precision(c)) for c in batch.columns]
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
