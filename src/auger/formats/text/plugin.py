"""Delimited text (csv, tsv, psv, csvh) with Drill's options and Drill's two shapes.

Without a header every row is one ``columns`` array of VARCHAR (``columns[n]`` in SQL); with
``extract_header`` the first line names ``VARCHAR NOT NULL`` columns (see ``header.py``), short
rows are filled with "" and extra fields dropped, and table columns this file lacks read as "".

Reading tries pyarrow's streaming C++ parser first and falls back to Python's ``csv`` module for
what pyarrow cannot do (see ``arrow_reader``); the fallback restarts after the rows already
delivered, so a file is never read twice into the output and memory stays bounded by a batch.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.base import FormatPlugin, open_input
from auger.formats.text.arrow_reader import (
    BLOCK_SIZE,
    NeedsFallback,
    arrow_possible,
    arrow_tables,
)
from auger.formats.text.counting import block_counts
from auger.formats.text.header import clean_header
from auger.formats.text.native_reader import native_batches, native_possible
from auger.formats.text.positions import compact_position
from auger.formats.text.python_reader import iter_records
from auger.formats.text.text_options import MAX_FIELDS, TextOptions
from auger.storage.splits import FileSplit, open_split
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.schema_text import parse_schema

__all__ = ["TextFormat", "columns_indexes"]

_INDEX = re.compile(r"^\s*`?columns`?\s*\[\s*(\d+)\s*\]", re.IGNORECASE)
#: reader name of a batch column that only carries the row count (nothing projected)
ROWS_ONLY = "__rows__"
#: block size when counting records (``counting``): a few passes over each block, which stay
#: in the CPU cache at this size
_COUNT_BLOCK = 1 << 20
#: smallest block read for a scan with a LIMIT (a few rows need a few kilobytes)
_MIN_BLOCK = 1 << 16
#: rows per rows-only batch: these batches carry no data, only a count
_COUNT_BATCH_ROWS = 65536

#: Drill's error for ``columns[n]`` on a file read with headers or a schema.
COLUMNS_WITH_HEADER = "Unexpected `columns`[x]; file has headers or schema"


class _Fallback(Exception):
    """The Arrow path gave up after delivering ``emitted`` rows: the Python parser goes on."""

    def __init__(self, emitted: int) -> None:
        super().__init__(emitted)
        self.emitted = emitted


def _limit_hint(options: Mapping[str, Any]) -> int | None:
    """The scan's pushed-down LIMIT (``run_scan`` passes it), to read small blocks for it."""
    value = options.get("__limit__")
    return None if value is None else int(value)


def columns_indexes(projection: Sequence[str] | None) -> list[int] | None:
    """The ``columns[i]`` positions a projection needs, or None when it needs whole rows."""
    if not projection:
        return None
    found: set[int] = set()
    for path in projection:
        m = _INDEX.match(path)
        if m is None:
            return None
        found.add(int(m.group(1)))
    return sorted(found)


def _leading_rows(o: TextOptions) -> int:
    """Rows before the data: the header line, or the line ``skip_first_line`` drops."""
    return 1 if (o.extract_header or o.skip_first_line) else 0


def _block_for(limit: int | None, full: int) -> int:
    """Bytes per read block: ``full`` for a whole scan; for a small LIMIT, about what its rows
    need (at least ``_MIN_BLOCK``)."""
    return full if limit is None else min(full, max(_MIN_BLOCK, limit * 512))


def _open_error(path: str, exc: OSError) -> UserError:
    return UserError.data_read(f"Cannot read file: {exc}", [f"File: {path}"])


def _opener(split: FileSplit, o: TextOptions) -> Callable[[], IO[bytes]]:
    """How to open the bytes a split owns: the whole (maybe compressed) file, or a
    line-aligned byte range led by the file's first line when that line is a header or skipped."""
    if not split.is_range:
        return lambda: open_input(split.path)
    keep_first = o.extract_header or o.skip_first_line
    return lambda: open_split(split, keep_first_line=keep_first)


def _records(
    path: str, o: TextOptions, opener: Callable[[], IO[bytes]] | None = None
) -> Generator[tuple[int, list[str]], None, None]:
    try:
        with (opener or (lambda: open_input(path)))() as fh:
            yield from iter_records(fh, o, path)
    except OSError as exc:
        raise _open_error(path, exc) from exc
    except EOFError as exc:  # a truncated compressed file
        raise UserError.data_read(f"Truncated compressed file: {exc}", [f"File: {path}"]) from exc


def _starts_blank(path: str) -> bool:
    """A file whose first byte ends a line (a blank first line) or that is empty."""
    try:
        with open_input(path) as fh:
            head = fh.read(1)
    except (OSError, EOFError):
        return True  # let the Python path report it
    return head in (b"", b"\n", b"\r")


@dataclass
class _Shape:
    """What one file's batches look like: named columns, or the ``columns`` array."""

    header: list[str] | None  # cleaned header names (extract_header), else None
    fields: list[int] | None  # file field positions to read, None: all
    fill: list[str]  # table columns this (header) file lacks, read as ""
    width: int | None  # headerless push-down: keep positions < width
    #: headerless positions as scalar columns ``__columns_<n>``, NULL past a row's end (the
    #: ``header`` then holds those names)
    compact: bool = False
    #: lower names of named columns whose absent values (a short row, a column this file
    #: lacks) are NULL, not "": a provided schema's nullable or defaulted VARCHARs, which
    #: Drill fills as NULL or with their default where nothing was written
    nulls: frozenset[str] = frozenset()


class TextFormat(FormatPlugin):
    """Drill's text format plugin (``type = "text"``)."""

    type_name = "text"
    extensions = ("csv", "tsv", "psv", "csvh")
    #: the Spark data source may cut big uncompressed files into line-aligned byte ranges
    reads_byte_ranges = True

    # ------------------------------------------------------------------ driver side
    def discover_schema(
        self, files: Sequence[str], config: FormatConfig, options: Mapping[str, Any]
    ) -> TupleSchema:
        o = TextOptions.from_config(config, options)
        if not o.extract_header:
            return TupleSchema([ColumnMetadata("columns", MinorType.VARCHAR, DataMode.REPEATED)])
        schema = TupleSchema()
        for path in files:
            for name in self._header(path, o) or []:
                if name not in schema:
                    schema.add(ColumnMetadata(name, MinorType.VARCHAR, DataMode.REQUIRED))
        return schema

    def _header(self, path: str, o: TextOptions) -> list[str] | None:
        """Cleaned header names of one file; None for an empty file."""
        records = _records(path, o)
        try:
            first = next(records, None)
        finally:
            records.close()
        if first is None:
            return None
        return clean_header(first[1], path)

    # ---------------------------------------------------------------- executor side
    def read_arrow(
        self,
        split: FileSplit,
        config: FormatConfig,
        options: Mapping[str, Any],
        columns: Sequence[str] | None,
        batch_rows: int,
    ) -> Iterator[pa.RecordBatch]:
        o = TextOptions.from_config(config, options)
        path = split.path
        shape = self._shape(config.name, path, o, options, columns)
        if shape is None:
            return
        force_python = bool(options.get("auger.scan.text_force_python", False))
        reader = str(options.get("auger.scan.text_reader", "auto")).lower()
        limit = _limit_hint(options)
        emitted = 0
        if not force_python and arrow_possible(o) and not _starts_blank(path):
            if shape.fields == []:
                # nothing of the file is needed, only its record count
                counted = yield from self._counted(split, o, shape, batch_rows, limit)
                if counted is None:
                    return
                emitted = counted
            if emitted == 0:
                try:
                    if reader != "arrow" and native_possible(o):
                        yield from self._native_batches(split, o, shape, limit)
                    else:
                        yield from self._arrow_batches(split, o, shape, limit)
                    return
                except _Fallback as exc:
                    emitted = exc.emitted
        yield from self._python_batches(split, o, shape, emitted, batch_rows)

    def _arrow_batches(
        self, split: FileSplit, o: TextOptions, shape: _Shape, limit: int | None
    ) -> Iterator[pa.RecordBatch]:
        """The Arrow path; raises :class:`_Fallback` (with the rows delivered) when it must
        hand over to the Python parser."""
        skip = _leading_rows(o)
        # a small LIMIT wants its first rows after little reading: small blocks, no read-ahead
        block = _block_for(limit, BLOCK_SIZE)
        fields = self._arrow_fields(shape)
        emitted = 0
        try:
            while True:
                restart = False
                batches = arrow_tables(split.path, o, skip, fields, _opener(split, o), block)
                with contextlib.closing(batches):
                    for raw in batches:
                        if emitted == 0 and shape.width and _narrower(raw, shape, fields):
                            # the file has fewer fields than the highest position asked for:
                            # the array's length is the file's width, which only reading every
                            # position tells
                            fields, restart = list(range(shape.width)), True
                            break
                        out = self._from_arrow(raw, shape, o)
                        emitted += out.num_rows
                        yield out  # whole: the scan cuts it to its batch limits
                if not restart:
                    return
        except NeedsFallback:
            raise _Fallback(emitted) from None

    def _native_batches(
        self, split: FileSplit, o: TextOptions, shape: _Shape, limit: int | None
    ) -> Iterator[pa.RecordBatch]:
        """The projecting tokenizer (``native_reader``); raises :class:`_Fallback` like
        :meth:`_arrow_batches`."""
        skip = _leading_rows(o)
        block = _block_for(limit, BLOCK_SIZE)
        fields = self._arrow_fields(shape)
        headerless = shape.header is None and shape.fields != []  # the columns array
        width = (-1 if shape.width is None else shape.width) if headerless else None
        emitted = 0
        try:
            batches = native_batches(
                _opener(split, o),
                o,
                skip,
                fields,
                width,
                block,
                nulls_past_end=shape.compact or bool(shape.nulls),
            )
            for raw in batches:
                out = self._from_native(raw, o) if headerless else self._from_arrow(raw, shape, o)
                emitted += out.num_rows
                yield out  # whole: the scan cuts it to its batch limits
        except NeedsFallback:
            raise _Fallback(emitted) from None

    @staticmethod
    def _from_native(raw: pa.RecordBatch, o: TextOptions) -> pa.RecordBatch:
        """A row-major ``columns`` batch, trimmed when the options say so."""
        if not o.trim:
            return raw
        arr = raw.column(0)
        trimmed = pa.ListArray.from_arrays(arr.offsets, pc.utf8_trim_whitespace(arr.flatten()))
        return pa.RecordBatch.from_arrays([trimmed], names=["columns"])

    def _counted(
        self, split: FileSplit, o: TextOptions, shape: _Shape, batch_rows: int, limit: int | None
    ) -> Generator[pa.RecordBatch, None, int | None]:
        """Rows-only batches from a newline count (see ``counting``); returns None when done,
        else the number of rows already delivered, for the parsers to go on after them.

        Without a limit nothing is delivered before the whole file is counted, so giving up
        late still lets the fast Arrow path read the file from the start."""
        skip = _leading_rows(o)
        eager = limit is not None
        block = _block_for(limit, _COUNT_BLOCK)
        total = emitted = 0
        step = max(batch_rows, _COUNT_BATCH_ROWS)
        counts = block_counts(_opener(split, o), o, block)
        while True:
            try:
                got = next(counts, -1)
            except Exception:  # unreadable or corrupt input: the parsers report it properly
                return emitted
            if got is None:
                return emitted
            if got < 0:
                break
            total += got
            ready = max(0, total - skip) - emitted
            if eager and ready > 0:
                for start in range(0, ready, step):
                    yield self._rows_only(min(step, ready - start), shape)
                emitted += ready
        ready = max(0, total - skip) - emitted
        for start in range(0, ready, step):
            yield self._rows_only(min(step, ready - start), shape)
        return None

    @staticmethod
    def _rows_only(n: int, shape: _Shape) -> pa.RecordBatch:
        if shape.header is not None:
            return _with_fill([], [], shape.fill, n, shape.nulls)
        return pa.RecordBatch.from_arrays([pa.nulls(n)], names=[ROWS_ONLY])

    def _shape(
        self,
        config_name: str,
        path: str,
        o: TextOptions,
        options: Mapping[str, Any],
        columns: Sequence[str] | None,
    ) -> _Shape | None:
        wanted = None if columns is None else {c.lower() for c in columns}
        table_text = options.get("__table_schema__")
        table = parse_schema(table_text) if table_text else TupleSchema()
        projection = options.get("__projection__") or ()
        indexes = [m for p in projection if (m := _INDEX.match(p)) is not None]
        if o.extract_header:
            if indexes:
                raise _columns_with_header(config_name, o)
            header = self._header(path, o)
            if header is None:
                return None
            fields = [i for i, n in enumerate(header) if wanted is None or n.lower() in wanted]
            mine = {n.lower() for n in header}
            fill = [
                c.name
                for c in table
                if c.name.lower() not in mine and (wanted is None or c.name.lower() in wanted)
            ]
            return _Shape(header, fields, fill, None, nulls=_absent_nulls(options))
        positions = [compact_position(c.name) for c in table]
        if positions and all(p is not None for p in positions):
            # single positions of the columns array (auger.sql.planning.compact_columns)
            names = [c.name for c in table if wanted is None or c.name.lower() in wanted]
            kept = [compact_position(n) for n in names]
            return _Shape(names, [p for p in kept if p is not None], [], None, compact=True)
        if len(table) and "columns" not in table:
            # a schema over a headerless file (provided, or given to Spark): fields map to its
            # columns by position; extra fields are ignored, missing ones read as ""
            names = table.names()
            fields = [i for i, n in enumerate(names) if wanted is None or n.lower() in wanted]
            return _Shape(names, fields, [], None, nulls=_absent_nulls(options))
        if wanted is not None and "columns" not in wanted:
            return _Shape(None, [], [], 0)  # nothing of the file is needed: count rows only
        for m in indexes:
            if int(m.group(1)) >= MAX_FIELDS:
                raise UserError.validation(
                    f"`columns`[{m.group(1)}] index out of bounds, max supported size is "
                    f"{MAX_FIELDS}",
                    [
                        "Column: columns",
                        f"Maximum index: {MAX_FIELDS - 1}",
                        f"Actual index: {m.group(1)}",
                    ],
                )
        idx = columns_indexes(projection)
        if idx is None:
            return _Shape(None, None, [], None)
        return _Shape(None, idx, [], idx[-1] + 1 if idx else 0)

    @staticmethod
    def _arrow_fields(shape: _Shape) -> list[int] | None:
        if shape.fields is None:
            return None
        if not shape.fields:
            return [0]  # pyarrow needs one column to count rows
        return shape.fields

    # ------------------------------------------------------------- Arrow → output
    def _from_arrow(self, raw: pa.RecordBatch, shape: _Shape, o: TextOptions) -> pa.RecordBatch:
        n = raw.num_rows
        if shape.compact and shape.header is not None:
            # a position no row reaches comes back null-typed: NULL strings
            arrays = [_trim(raw.column(f"f{i}").cast(pa.string()), o) for i in shape.fields or ()]
            return _with_fill(arrays, shape.header, [], n)
        if shape.header is not None:
            names = [shape.header[i] for i in shape.fields or ()]
            arrays = [
                _trim(_absent_values(raw.column(f"f{i}"), shape.header[i], shape), o)
                for i in shape.fields or ()
            ]
            return _with_fill(arrays, names, shape.fill, n, shape.nulls)
        if shape.fields is not None and not shape.fields:
            return pa.RecordBatch.from_arrays([pa.nulls(n)], names=[ROWS_ONLY])
        # positions the file does not have come back null-typed
        real = {
            int(name[1:]): _trim(col, o)
            for name, col in zip(raw.schema.names, raw.columns, strict=True)
            if not pa.types.is_null(col.type)
        }
        if shape.width is None:
            slots: list[pa.Array | None] = [real[i] for i in sorted(real)]
        else:
            # every position below the width was read when some came back absent (the file is
            # narrower), else only the needed ones: the others are "" up to the width
            length = len(real) if len(real) < raw.num_columns else shape.width
            keep = set(shape.fields or ())
            slots = [real.get(i) if i in keep else None for i in range(length)]
        return pa.RecordBatch.from_arrays([_interleave(slots, n)], names=["columns"])

    # --------------------------------------------------------------- Python path
    def _python_batches(
        self, split: FileSplit, o: TextOptions, shape: _Shape, skip: int, batch_rows: int
    ) -> Iterator[pa.RecordBatch]:
        records = _records(split.path, o, _opener(split, o))
        if o.extract_header:
            next(records, None)
        buf: list[list[str]] = []
        seen = 0
        for _, row in records:
            if not row:
                continue  # a blank first line that was not a header
            seen += 1
            if seen <= skip:
                continue
            buf.append(row)
            if len(buf) >= batch_rows:
                yield self._from_rows(buf, shape, o)
                buf = []
        if buf:
            yield self._from_rows(buf, shape, o)

    def _from_rows(self, rows: list[list[str]], shape: _Shape, o: TextOptions) -> pa.RecordBatch:
        n = len(rows)
        if shape.compact and shape.header is not None:
            arrays = [
                _trim(pa.array([r[i] if i < len(r) else None for r in rows], pa.string()), o)
                for i in shape.fields or ()
            ]
            return _with_fill(arrays, shape.header, [], n)
        if shape.header is not None:
            names = [shape.header[i] for i in shape.fields or ()]
            arrays = []
            for i, name in zip(shape.fields or (), names, strict=True):
                absent = None if name.lower() in shape.nulls else ""
                values = [r[i] if i < len(r) else absent for r in rows]
                arrays.append(_trim(pa.array(values, pa.string()), o))
            return _with_fill(arrays, names, shape.fill, n, shape.nulls)
        if shape.fields is not None and not shape.fields:
            return pa.RecordBatch.from_arrays([pa.nulls(n)], names=[ROWS_ONLY])
        if shape.width is not None:
            keep = set(shape.fields or ())
            rows = [[v if i in keep else "" for i, v in enumerate(r[: shape.width])] for r in rows]
        arr = pa.array(rows, pa.list_(pa.string()))
        if o.trim:
            arr = pa.ListArray.from_arrays(arr.offsets, pc.utf8_trim_whitespace(arr.flatten()))
        return pa.RecordBatch.from_arrays([arr], names=["columns"])


def _narrower(raw: pa.RecordBatch, shape: _Shape, fields: list[int] | None) -> bool:
    """A headerless push-down that read only the needed positions finds one absent."""
    if shape.header is not None or shape.width is None or fields is None:
        return False
    if fields == list(range(shape.width)):
        return False
    return any(pa.types.is_null(c.type) for c in raw.columns)


def text_validation_error(message: str, config_name: str, o: TextOptions) -> UserError:
    """A VALIDATION error about a text table, with Drill's format context lines."""
    config = FormatConfig(config_name, "text", ())
    return UserError.validation(message, [*TextFormat().error_context(config), *o.error_context()])


def _columns_with_header(config_name: str, o: TextOptions) -> UserError:
    return text_validation_error(COLUMNS_WITH_HEADER, config_name, o)


def _absent_nulls(options: Mapping[str, Any]) -> frozenset[str]:
    return frozenset(str(n).lower() for n in options.get("__absent_null__") or ())


def _absent_values(arr: pa.Array, name: str, shape: _Shape) -> pa.Array:
    """A named column as read: where a row is short, NULL for the columns in ``shape.nulls``
    and "" for the others."""
    if name.lower() in shape.nulls:
        return arr.cast(pa.string()) if pa.types.is_null(arr.type) else arr
    arr = _blank_if_absent(arr)
    return pc.fill_null(arr, "") if arr.null_count else arr


def _blank_if_absent(arr: pa.Array) -> pa.Array:
    """A header column no row of the file reaches: "" as for a short row."""
    if pa.types.is_null(arr.type):
        return _blanks(len(arr))
    return arr


def _trim(arr: pa.Array, o: TextOptions) -> pa.Array:
    return pc.utf8_trim_whitespace(arr) if o.trim else arr


def _with_fill(
    arrays: list[pa.Array],
    names: list[str],
    fill: list[str],
    n: int,
    nulls: frozenset[str] = frozenset(),
) -> pa.RecordBatch:
    if not arrays and not fill:
        return pa.RecordBatch.from_arrays([pa.nulls(n)], names=[ROWS_ONLY])
    if fill:
        blank = _blanks(n)
        absent = [pa.nulls(n, pa.string()) if f.lower() in nulls else blank for f in fill]
        arrays = [*arrays, *absent]
        names = [*names, *fill]
    return pa.RecordBatch.from_arrays(arrays, names=names)


def _blanks(n: int) -> pa.Array:
    """``n`` empty strings, straight from buffers (no per-value work)."""
    offsets = pa.py_buffer(np.zeros(n + 1, np.int32))
    return pa.StringArray.from_buffers(n, offsets, pa.py_buffer(b""))


def _interleave(slots: Sequence[pa.Array | None], n: int) -> pa.Array:
    """Row-major list<string> of ``n`` rows from equal-length string columns, a None slot
    being "" in every row; one vectorised gather, no Python loop over rows."""
    k = len(slots)  # at most MAX_FIELDS: a wider record sends the file to the Python path
    offsets = pa.array(np.arange(0, n * k + 1, k, dtype=np.int32))
    real = [c for c in slots if c is not None]
    if k == 1 and real:
        return pa.ListArray.from_arrays(offsets, real[0])
    if not real:
        return pa.ListArray.from_arrays(offsets, _blanks(n * k))
    flat = pa.concat_arrays([*real, pa.array([""], pa.string())])
    order = _gather_order(n, tuple(c is not None for c in slots))
    return pa.ListArray.from_arrays(offsets, flat.take(order))


@functools.lru_cache(maxsize=8)
def _gather_order(n: int, present: tuple[bool, ...]) -> pa.Array:
    """Take indices turning column-major ``[col0 rows, col1 rows, ..., ""]`` into row-major
    values; absent slots point at the trailing "". Batches mostly share ``n``: cached."""
    k, m = len(present), sum(present)
    order = np.full((n, k), m * n, dtype=np.int32)
    j = 0
    for pos, has in enumerate(present):
        if has:
            order[:, pos] = np.arange(j * n, (j + 1) * n, dtype=np.int32)
            j += 1
    return pa.array(order.reshape(-1))
