"""Writing raw-file cache entries in the tasks of the ``auger`` data source.

A query over files the cache does not hold yet is answered by the scan framework as always;
after the answer a build job (:mod:`auger.spark.cache_builds`) reads the files again with the
data source, whose tasks run a *widened* scan of each split: the spec's own columns plus every
other column the cache keeps of the table (``ScanSpec.cache_columns``). The kept columns of
each batch go to a Parquet part (:mod:`auger.scan.cache`; a headerless file's ``columns`` by
position), the spec's columns go on to Spark.

A part is published (renamed from its hidden temporary name) only when its split was read to
the end without a skipped record: a LIMIT that stopped early, a failed read or a skip option
that dropped lines (whose message the next query must say again) leave no entry. Any failure to
write (a full disk, a location that cannot be written) drops the part and never the query.

A build's tasks end by themselves when the build gives way to a user's query
(:func:`stop_asked`, checked before each batch): the task ends as a task that read its rows,
the part it was writing is dropped, and its Python worker goes back to Spark's pool for the
query. Cancelling the job instead kills the worker in the middle of a write (its
``BrokenPipeError`` traceback printed on the user's console) and makes the query start new
ones: a 300 MB JSON query took 1.8-2.2 s that way, against 1.3-1.4 s, and 1.15 s with no
build at all.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from auger.errors import UserError
from auger.formats.skips import recording
from auger.formats.text.positions import compact_name, compact_position
from auger.projection import quoted
from auger.scan.cache import (
    KEPT_POSITIONS,
    REST_COLUMN,
    entry_dir,
    entry_schema,
    part_name,
    part_range,
    positional_array,
)
from auger.scan.cache_ascii import AsciiColumns
from auger.scan.cache_typed import TypedCopies
from auger.scan.cache_values import FewValues
from auger.scan.run import run_scan
from auger.scan.spec import ColumnSource, FileSplit, ScanSpec
from auger.storage import filesystem as fs
from auger.types import TupleSchema
from auger.types.arrow_values import integer_scalar, null_scalar
from auger.types.metadata import column_type_text
from auger.types.spark import schema_to_spark, spark_arrow_schema

__all__ = [
    "PartWriter",
    "building_scan",
    "dictionary_columns",
    "entry_arrow_schema",
    "entry_batch",
    "stop_asked",
    "widened_spec",
]

_log = logging.getLogger(__name__)

#: A part's row groups: about this many rows, or bytes of Arrow data, each (Spark's reader
#: splits a part between tasks at row groups). A building task holds the group it gathers while
#: it writes it, in the task's own thread: with 8 MiB groups a Python worker building entries of
#: 2 GB of CSV peaked at 245 MB; 16 MiB written by a thread of their own peaked at 314 MB (the
#: writer thread's allocations stay with the process), and the builds took no less time. Since
#: columns of distinct values are written plain (:func:`dictionary_columns`), 8 MiB groups
#: peaked at 260 MB and 6 MiB ones at 246-247 MB, in the same time (16.1-16.8 s); 217-219 MB
#: since the worker no longer imports pandas. Columns of NULLs alone are not counted.
ROW_GROUP_ROWS = 256 * 1024
ROW_GROUP_BYTES = 6 * 1024 * 1024
#: The rows of a building task's batches at least. Spark gets one column of nulls from a build
#: job (see :mod:`auger.spark.cache_builds`), so its batches may be larger than a query's, and
#: each batch costs a few dozen Arrow calls (an entry keeps 32 positions of a headerless file):
#: building a 400 MB headerless CSV file took 12.4 s in batches of 4,096 rows and 8.1 s in
#: batches of 16,384, with a lower peak (232 and 203 MB).
BUILD_BATCH_ROWS = 16 * 1024


def widened_spec(spec: ScanSpec) -> ScanSpec:
    """The spec reading the query's columns and every column the cache keeps: the query's
    ``columns[n]`` positions (``__columns_<n>``) come from the whole ``columns`` array."""
    kept = entry_schema(spec.cache_columns)
    out = TupleSchema()
    sources: dict[str, str] = {}
    whole: set[str] = set()  # maps the query reads some members of: read whole
    for col in spec.schema():
        source = spec.sources.get(col.name, ColumnSource.TABLE)
        if source == ColumnSource.TABLE and compact_position(col.name) is not None:
            continue  # derived from the array below
        full = kept.column(col.name)
        if (
            source == ColumnSource.TABLE
            and full is not None
            and column_type_text(full) != column_type_text(col)
        ):
            col = full
            whole.add(col.name.lower())
        out.add(col)
        sources[col.name] = source
    for col in kept:
        if col.name not in out:
            out.add(col)
            sources[col.name] = ColumnSource.TABLE
    if "*" in spec.projection:
        projection: tuple[str, ...] = spec.projection
    else:
        plain = [
            p
            for p in spec.projection
            if compact_position(p.strip("`")) is None and _root(p) not in whole
        ]
        projection = (*plain, *(quoted(c.name) for c in kept if quoted(c.name) not in plain))
    return replace(
        spec,
        output_schema=out.to_text(),
        sources=sources,
        projection=projection,
        cache_build="",
    )


def _root(path: str) -> str:
    """The lower-cased root column of a projected path (``m.a`` → ``m``)."""
    if path.startswith("`"):
        end = path.find("`", 1)
        return path[1:end].lower() if end > 0 else path.strip("`").lower()
    return path.split(".", 1)[0].split("[", 1)[0].lower()


def _fit(array: Any, target: pa.DataType) -> Any:
    """A struct column read whole, down to the members the query reads (by name, at any
    depth); anything else as it is."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if not (pa.types.is_struct(array.type) and pa.types.is_struct(target)):
        return array if array.type == target else array.cast(target)
    if array.type == target:
        return array
    children = [_fit(array.field(f.name), f.type) for f in target]
    return pa.StructArray.from_arrays(
        children, fields=list(target), mask=array.is_null() if array.null_count else None
    )


def _position(array: pa.Array, position: int) -> pa.Array:
    """Field ``position`` of each row's ``columns`` array, NULL past its end (the reader's
    rule for a single position, see :mod:`auger.formats.text.positions`)."""
    return _positions(array, [position])[0]


def _positions(array: pa.Array, positions: Sequence[int]) -> list[pa.Array]:
    """Fields ``positions`` of each row's ``columns`` array (see :func:`_position`): the rows'
    lengths once for them all, and all-NULL columns past the longest row without a take (an
    entry keeps 32 positions of files that mostly have a few)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    lengths = pc.list_value_length(array)  # NULL for a NULL row: no field there either
    longest = pc.max(lengths).as_py() or 0
    starts = array.offsets.slice(0, len(array))
    offset_type = starts.type
    out = []
    past: pa.Array | None = None  # the positions past the longest row: one array of NULLs
    for position in positions:
        if position >= longest:
            if past is None:
                past = pa.nulls(len(array), array.type.value_type)
            out.append(past)
            continue
        at = integer_scalar(position, offset_type)  # no Python value converted: no pandas
        # NULL where the row is shorter, or NULL itself (a NULL condition gives NULL)
        indices = pc.if_else(pc.greater(lengths, at), pc.add(starts, at), null_scalar(offset_type))
        out.append(pc.take(array.values, indices))
    return out


def _query_batch(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """The query's columns of a widened batch, in the query's Arrow schema."""
    names = batch.schema.names
    arrays = []
    for f in target:
        position = compact_position(f.name)
        if f.name in names or position is None:
            arrays.append(batch.column(names.index(f.name)))
        else:
            arrays.append(_position(batch.column(names.index("columns")), position))
    return pa.RecordBatch.from_arrays(
        [_fit(a, f.type) for a, f in zip(arrays, target, strict=True)], schema=target
    )


def entry_arrow_schema(kept: TupleSchema, wide: pa.Schema) -> pa.Schema:
    """The Arrow schema of an entry's parts: the kept columns as the scan delivers them, a
    headerless file's ``columns`` by position (:data:`auger.scan.cache.KEPT_POSITIONS`)."""
    fields: list[pa.Field] = []
    for col in kept:
        if col.name == "columns" and positional_array(kept):
            fields.extend(pa.field(compact_name(n), pa.string()) for n in range(KEPT_POSITIONS))
            fields.append(pa.field(REST_COLUMN, wide.field("columns").type))
        else:
            fields.append(wide.field(col.name))
    return pa.schema(fields)


def entry_batch(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """A scan batch as an entry's part holds it (:func:`entry_arrow_schema`)."""
    names = batch.schema.names
    wanted = [compact_position(f.name) for f in schema]
    held = [p for f, p in zip(schema, wanted, strict=True) if p is not None and f.name not in names]
    found = dict(zip(held, _positions(batch.column(names.index("columns")), held))) if held else {}
    arrays = []
    for f, position in zip(schema, wanted, strict=True):
        if f.name in names:
            arrays.append(batch.column(names.index(f.name)))
        elif f.name == REST_COLUMN:
            array = batch.column(names.index("columns"))
            arrays.append(pc.list_slice(array, KEPT_POSITIONS).cast(f.type))
        else:
            assert position is not None, f.name
            arrays.append(found[position])
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


class PartWriter:
    """One part being written: a hidden temporary file, renamed into place when complete."""

    def __init__(
        self, table: str, split: FileSplit, schema: pa.Schema, file: FileSplit | None = None
    ) -> None:
        """``split``: the piece read; ``file``: the whole file as planned (its identity keys
        the entry; a piece carries its own length as its size), by default the split."""
        entry = entry_dir(table, file or split)
        start, end = part_range(split)
        self.final = fs.join(entry, part_name(start, end))
        # written under a hidden name (readers pass it over), then renamed into place
        self.path = fs.join(entry, f".tmp-{uuid.uuid4().hex}-{part_name(start, end)}")
        self.writer: Any = None  # opened with the first row group, which chooses the copies
        self.schema = schema
        self.copies = TypedCopies(schema)
        self.values = FewValues(schema)
        self.ascii = AsciiColumns(schema)
        self.extra = pa.schema([])  # the copies' columns, after the part's own
        self.failed = False
        self.pending: list[pa.RecordBatch] = []
        self.pending_rows = 0
        self.pending_bytes = 0
        try:
            fs.makedirs(entry)
            self.sink = fs.open_output(self.path)
        except Exception as exc:
            self._fail(exc)

    def write(self, batch: pa.RecordBatch) -> None:
        if self.failed:
            return
        names = batch.schema.names
        kept = [batch.column(names.index(f.name)) for f in self.schema]
        self.pending.append(pa.RecordBatch.from_arrays(kept, schema=self.schema))
        self.pending_rows += batch.num_rows
        # the columns of NULLs alone aside (a headerless file's positions past its fields): they
        # share one array and take no room in Parquet. Counting them made the row groups of
        # 300 MB of headerless CSV 49 k rows long instead of 110 k, and a GROUP BY of them
        # slower (Spark's job 311-320 ms against 279-291 ms)
        self.pending_bytes += sum(c.nbytes for c in kept if c.null_count < len(c))
        if self.pending_rows >= ROW_GROUP_ROWS or self.pending_bytes >= ROW_GROUP_BYTES:
            self._flush()

    def _flush(self) -> None:
        """Write what is pending as one row group (the writer makes a row group per call:
        one per scan batch would be thousands of small ones, slow to write and to read)."""
        if self.failed or not self.pending:
            return
        table = pa.Table.from_batches(self.pending, schema=self.schema)
        self.pending, self.pending_rows, self.pending_bytes = [], 0, 0
        try:
            # with its typed copies (auger.scan.cache_typed), which the first group chooses
            if self.writer is None:
                self.extra = self.copies.choose(table)
            self.values.add(table)
            self.ascii.add(table)
            for field, values in zip(self.extra, self.copies.arrays(table), strict=True):
                table = table.append_column(field, values)
            if self.writer is None:
                self._open(table.schema, dictionary_columns(table))
            self.writer.write_table(table)
        except Exception as exc:
            self._fail(exc)

    def _open(self, schema: pa.Schema, dictionary: list[str]) -> None:
        self.writer = pq.ParquetWriter(
            self.sink, schema, compression=PART_CODEC, use_dictionary=dictionary or False
        )

    def publish(self) -> None:
        self._flush()
        if self.failed:
            return
        try:
            if self.writer is None:  # no rows: a part of the columns alone
                self._open(self.schema, [])
            notes = (self.copies, self.values, self.ascii)
            if noted := {k: v for note in notes for k, v in note.metadata().items()}:
                self.writer.add_key_value_metadata(noted)
            self.writer.close()
            self.sink.close()
            fs.rename(self.path, self.final)
        except Exception as exc:
            self._fail(exc)

    def abandon(self) -> None:
        self.pending = []
        if not self.failed:
            self._fail(None)

    def _fail(self, exc: BaseException | None) -> None:
        if exc is not None:
            _log.info("raw-file cache part %s not written: %s", self.final, exc)
        self.failed = True
        for closing in (self.writer, getattr(self, "sink", None)):
            try:
                if closing is not None:
                    closing.close()
            except Exception:
                pass
        try:
            fs.delete_file(self.path)
        except Exception:
            pass


#: The most bytes the distinct values of a part's column may hold, in its first row group, for
#: the column to be written with a dictionary: pyarrow's dictionary page limit. A few values of
#: megabytes among many small ones repeat as little as distinct ones do: such a dictionary
#: holds each big value once more, and Spark's reader decodes it per row. Over 24 values of 8
#: MB among 300 k small JSON records, ``WHERE OCTET_LENGTH(s) > 1000000`` read the part in
#: 0.29-0.30 s with a dictionary, 0.23-0.24 s without (plain Spark, best of seven).
DICTIONARY_BYTES = 1024 * 1024

#: The parts' compression: LZ4 (Parquet's ``LZ4_RAW``), which Spark's reader decompresses
#: faster than Snappy where values are long: the part above was read in 0.13-0.14 s, against
#: 0.23-0.24 s with Snappy (both without a dictionary). Over 300 MB of headerless CSV the
#: entries are 4% smaller (168 MB against 176 MB), and grouped, filtered and string queries
#: read them as fast (within 0.02 s either way, three rounds).
PART_CODEC = "lz4"


def dictionary_columns(group: pa.Table) -> list[str]:
    """The Parquet columns (leaf paths) of a part to write with a dictionary, by its first row
    group: a column whose values repeat (at most half of them distinct, holding at most
    :data:`DICTIONARY_BYTES`), and every member of a map or a list. A dictionary of values
    that do not repeat only costs: pyarrow fills one up to its page size before it falls back
    to plain pages. Over 300 MB of CSV (five columns, two of few values), a 400 MB file's part
    was written in 4.9 s instead of 6.8 s, the entries took 160-164 MB instead of 179-209 MB,
    and queries read them as fast or faster: a GROUP BY of a column of few values as fast
    (0.36-0.38 s), a MAX of the column of names grouped by another in 0.62-0.70 s instead of
    0.88-0.89 s."""
    chosen: list[str] = []
    for field, column in zip(group.schema, group.columns, strict=True):
        if pa.types.is_nested(field.type):
            chosen.extend(_leaf_paths(field))
            continue
        values = len(column) - column.null_count
        if values == 0:
            chosen.append(field.name)
            continue
        distinct = pc.unique(column.combine_chunks())
        if 2 * len(distinct) <= values and _bytes_of(distinct) <= DICTIONARY_BYTES:
            chosen.append(field.name)
    return chosen


def _bytes_of(values: pa.Array) -> int:
    """The bytes of a column's values: their data for strings and binaries (not the offsets),
    their buffers' for any other type."""
    kind = values.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind):
        total = pc.sum(pc.binary_length(values)).as_py()
        return int(total or 0)
    return int(values.nbytes)


def _leaf_paths(field: pa.Field) -> list[str]:
    """The Parquet leaf paths of a nested column, as its writer names them
    (``m.a``, ``r.list.element``). The empty table is made from no batches: pyarrow's
    ``Schema.empty_table`` imports pandas, 35-40 MB more in a build's Python worker (2 GB of
    JSON lines: a worker peaked at 251-279 MB with it)."""
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_batches([], schema=pa.schema([field])), sink)
    leaves = pq.read_metadata(pa.BufferReader(sink.getvalue())).schema
    return [leaves.column(i).path for i in range(len(leaves))]


def building_scan(
    spec: ScanSpec, files: Sequence[FileSplit], batch_rows: int, target: pa.Schema
) -> Iterator[pa.RecordBatch]:
    """The query's batches of ``files``, each split also written as a cache part."""
    wide = widened_spec(spec)
    wide_target = spark_arrow_schema(schema_to_spark(wide.schema()))
    kept = entry_schema(spec.cache_columns)
    part_schema = entry_arrow_schema(kept, wide_target)
    plain = replace(spec, cache_build="", cache_columns="")
    planned = {f.path: f for f in spec.files}
    for split in files:
        if stop_asked(spec):
            return
        file = planned.get(split.path)
        if file is None or file.is_range:  # not a file the driver planned: no entry
            yield from run_scan(plain, [split], batch_rows, target)
            continue
        part = PartWriter(spec.cache_build, split, part_schema, file)
        complete = False
        sent = 0
        try:
            with recording() as skipped:
                rows = max(batch_rows, BUILD_BATCH_ROWS)
                for batch in run_scan(wide, [split], rows, wide_target):
                    if stop_asked(spec):
                        return  # the part is dropped below: its split was not read whole
                    part.write(entry_batch(batch, part_schema))
                    sent += batch.num_rows
                    yield _query_batch(batch, target)
            complete = not skipped
        except UserError:
            # The kept columns the query does not read failed (a type conflict past the
            # schema's sample...): the query's own scan answers, from the row it had reached.
            part.abandon()
            yield from _rest(run_scan(plain, [split], batch_rows, target), sent)
        finally:
            if complete:
                part.publish()
            else:
                part.abandon()


def stop_asked(spec: ScanSpec) -> bool:
    """Whether the build that runs ``spec`` asked its tasks to stop (its signal file exists: a
    stat per batch of at least :data:`BUILD_BATCH_ROWS` rows)."""
    return bool(spec.build_stop) and os.path.exists(spec.build_stop)


def _rest(batches: Iterator[pa.RecordBatch], skip: int) -> Iterator[pa.RecordBatch]:
    """The batches after their first ``skip`` rows."""
    for batch in batches:
        if skip >= batch.num_rows:
            skip -= batch.num_rows
            continue
        yield batch.slice(skip) if skip else batch
        skip = 0
