"""Running a planned scan: files → format reader → conformed Arrow batches.

For each file of a split: read the file's own columns through its format plugin, conform them to
the scan's output schema (missing columns as typed nulls, convertible types converted, conflicts a
DATA_READ error naming the file, the column and both types), then add implicit and partition
columns. Every batch has exactly the output schema, so Spark sees one schema for the whole scan.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.registry import get_format
from auger.scan.spec import ColumnSource, FileSplit, ScanSpec
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.arrow import field_to_arrow

__all__ = ["implicit_value", "run_scan"]

_log = logging.getLogger(__name__)


def implicit_value(source: str, path: str, selection_root: str, mtime: float) -> str | None:
    """The value of an implicit or partition column for one file (None: no such directory)."""
    if source == ColumnSource.FQN:
        return path
    if source == ColumnSource.FILEPATH:
        return os.path.dirname(path)
    if source == ColumnSource.FILENAME:
        return os.path.basename(path)
    if source == ColumnSource.SUFFIX:
        name = os.path.basename(path)
        return name.rsplit(".", 1)[-1] if "." in name else ""
    if source == ColumnSource.LMT:
        return str(int(mtime * 1000))
    rel = os.path.relpath(os.path.dirname(path), selection_root)
    parts = [] if rel in (".", "") else rel.split(os.sep)
    if ColumnSource.is_partition(source):
        level = int(source[3:])
        return parts[level] if level < len(parts) else None
    if ColumnSource.is_hive_key(source):
        key = source[4:].lower()
        for part in parts:
            k, sep, v = part.partition("=")
            if sep and k.lower() == key:
                return v
        return None
    raise ValueError(f"unknown column source {source}")


def _conform_column(
    batch: pa.RecordBatch, col: ColumnMetadata, target: pa.Field, path: str
) -> pa.Array:
    idx = _find(batch.schema.names, col.name)
    if idx < 0:
        return pa.nulls(batch.num_rows, target.type)
    arr = batch.column(idx)
    if arr.type.equals(target.type):
        return arr
    try:
        return pc.cast(arr, target.type, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise UserError.data_read(
            f"Scan and file column type conflict for column [{col.name}]: the file has "
            f"{arr.type}, the table schema says {col.type_string()}",
            [f"File: {path}", f"Column: {col.name}", f"Reason: {str(exc).splitlines()[0]}"],
        ) from exc


def _find(names: Sequence[str], name: str) -> int:
    lname = name.lower()
    for i, n in enumerate(names):
        if n.lower() == lname:
            return i
    return -1


def _table_columns(spec: ScanSpec, schema: TupleSchema) -> list[str] | None:
    if "*" in spec.projection:
        return None
    return [c.name.lower() for c in schema if spec.sources.get(c.name) == ColumnSource.TABLE]


def run_scan(
    spec: ScanSpec, files: Sequence[FileSplit] | None = None, batch_rows: int = 4096
) -> Iterator[pa.RecordBatch]:
    """Yield batches with exactly the spec's output schema (as Arrow), file after file."""
    schema = spec.schema()
    arrow_schema = pa.schema([_nullable(field_to_arrow(c)) for c in schema])
    plugin = get_format(spec.format_type)
    config = FormatConfig(spec.format_name, spec.format_type, (), dict(spec.format_options))
    table_cols = [c for c in schema if spec.sources.get(c.name) == ColumnSource.TABLE]
    read_cols = _table_columns(spec, schema)
    options = dict(spec.options)
    # Private keys readers may use: the table columns expected, and the projected paths
    # (``columns[2]``, ``m.a``) so that a reader can skip fields nobody asked for.
    options["__table_schema__"] = spec.reader_schema or TupleSchema(table_cols).to_text()
    options["__projection__"] = list(spec.projection)
    options["__missing__"] = spec.missing_names()
    remaining = spec.limit
    counts_rows = ColumnSource.ROWS in spec.sources.values()
    for split in files if files is not None else spec.files:
        if remaining is not None and remaining <= 0:
            return
        try:
            if read_cols == [] and spec.format_type == "parquet":
                # Nothing to read but the row count (COUNT(*)): the footer has it.
                batches = _footer_counts(split, batch_rows)
            else:
                # Rows still wanted (LIMIT push-down): a reader may read less to deliver them.
                options["__limit__"] = remaining
                batches = plugin.read_arrow(split, config, options, read_cols, batch_rows)
            for raw in batches:
                if raw.num_rows == 0:
                    continue
                if remaining is not None:
                    if remaining <= 0:
                        break
                    if raw.num_rows > remaining:
                        raw = raw.slice(0, remaining)
                    remaining -= raw.num_rows
                if counts_rows:  # one row standing for the batch's rows
                    yield _assemble(
                        spec, schema, arrow_schema, raw.slice(0, 1), split, raw.num_rows
                    )
                else:
                    yield _assemble(spec, schema, arrow_schema, raw, split)
        except UserError:
            raise
        except Exception as exc:  # a reader bug or an unexpected file: name the file
            raise UserError.data_read(
                f"Failure reading file: {type(exc).__name__}: {exc}",
                [f"File: {split.path}", f"Format: {spec.format_name}"],
            ) from exc


def _nullable(f: pa.Field) -> pa.Field:
    """Nullable at every level: files (Parquet) may hold null list elements or struct members
    that Drill's REQUIRED/REPEATED modes would forbid, and Spark accepts nulls everywhere."""
    return f.with_type(_nullable_type(f.type)).with_nullable(True)


def _nullable_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_struct(t):
        return pa.struct([_nullable(t.field(i)) for i in range(t.num_fields)])
    if pa.types.is_large_list(t):
        return pa.large_list(_nullable(t.value_field))
    if pa.types.is_list(t):
        return pa.list_(_nullable(t.value_field))
    if pa.types.is_map(t):
        return pa.map_(t.key_field.type, _nullable(t.item_field))
    return t


def _assemble(
    spec: ScanSpec,
    schema: TupleSchema,
    arrow_schema: pa.Schema,
    raw: pa.RecordBatch,
    split: FileSplit,
    stands_for: int = 0,
) -> pa.RecordBatch:
    """The output batch of one reader batch; ``stands_for`` fills a ROWS column."""
    n = raw.num_rows
    arrays: list[pa.Array] = []
    for col, target in zip(schema, arrow_schema, strict=True):
        source = spec.sources.get(col.name, ColumnSource.TABLE)
        if source == ColumnSource.TABLE:
            arrays.append(_conform_column(raw, col, target, split.path))
        elif source == ColumnSource.MISSING:
            arrays.append(_missing(col, target, n))
        elif source == ColumnSource.ROWS:
            arrays.append(pa.array([stands_for] * n, target.type))
        else:
            value = implicit_value(source, split.path, spec.selection_root, split.mtime)
            arrays.append(_constant(value, n, target.type))
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)


def _constant(value: object, n: int, type_: pa.DataType) -> pa.Array:
    """``n`` copies of one value, built in Arrow rather than from a Python list."""
    if value is None:
        return pa.nulls(n, type_)
    import numpy as np

    return pa.array([value], type_).take(pa.array(np.zeros(n, dtype=np.int32)))


def _footer_counts(split: FileSplit, batch_rows: int) -> Iterator[pa.RecordBatch]:
    """Batches without columns carrying a Parquet file's (or its row groups') row count."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(split.path).metadata
    groups = split.row_groups if split.row_groups is not None else range(meta.num_row_groups)
    total = sum(meta.row_group(g).num_rows for g in groups)
    step = max(batch_rows, 65536)
    while total > 0:
        n = min(step, total)
        yield pa.table({"_": pa.nulls(n)}).select([]).to_batches()[0]
        total -= n


def _missing(col: ColumnMetadata, target: pa.Field, n: int) -> pa.Array:
    """A column the query names but the data lacks: nulls, or the default for NOT NULL."""
    default = col.default_value
    if col.mode is DataMode.REQUIRED and default is not None:
        value: object = default
        if col.type in (MinorType.INT, MinorType.BIGINT, MinorType.SMALLINT, MinorType.TINYINT):
            value = int(default)
        elif col.type in (MinorType.FLOAT4, MinorType.FLOAT8):
            value = float(default)
        elif col.type is MinorType.DATE:
            value = dt.date.fromisoformat(default)
        return pa.array([value] * n, target.type)
    return pa.nulls(n, target.type)
