"""Parquet files through pyarrow: footers give the schema, row groups the units of work.

* Projection push-down reaches nested members: a query naming only ``m.b.c`` reads that leaf
  (``__projection__`` paths), and the scan casts the partial map to the table's map type.
* Nothing projected (``COUNT(*)``): row counts come from the footer, no data page is read.
* Drill's type mapping: INT96 (Impala's and Hive's timestamps) reads as VARBINARY, the 12
  stored bytes (nanoseconds of the day, then the Julian day, little-endian), unless
  ``store.parquet.reader.int96_as_timestamp`` is true: then as TIMESTAMP (Drill keeps
  milliseconds, auger microseconds). An INT64 timestamp of nanoseconds has no type Drill's
  converter knows and reads as BIGINT, the stored nanoseconds since the epoch: every digit is
  kept. Decimals read as DECIMAL(p, s); times are cut to milliseconds.
* Unsigned integers keep their stored bits, as Drill's readers do: UINT_8/16/32 are INT and
  UINT_64 is BIGINT, so a value above the signed maximum wraps (UINT_32 4294967295 is -1,
  UINT_64 2**64-1 is -1) instead of failing the scan. INT_8/INT_16 are INT too.
* Fixed or variable bytes whose annotation Drill's converter does not know (UUID, FLOAT16,
  JSON) are VARBINARY, the stored bytes (:func:`_drill_type`).
* Files of one directory may differ: ``discover_schema`` merges them (missing columns null,
  INT with BIGINT → BIGINT...) and a real conflict names both files and both types.
* A corrupt footer or page is a DATA_READ error naming the file (and row group).
* DATE values written by Drill before 1.9 (shifted by about 13,000 years) are shifted back,
  as Drill does (:mod:`auger.formats.parquet_dates`), unless the format option
  ``autoCorrectCorruptDates`` (or ``auto_correct_corrupt_dates``) is false.
* Drill's other Parquet format options are accepted under their names, so that a format block
  copied from a Drill configuration loads: ``enableStringsSignedMinMax`` changes nothing, as
  pyarrow itself withholds the string min/max statistics of writers that ordered them as
  signed bytes (filters are then checked row by row, never answered wrongly); the writer
  options (``blockSize``, ``writerCompressionType`` ...) are not used: CTAS writes as the
  session's ``store.parquet.*`` options say.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.base import FormatPlugin
from auger.formats.conflicts import merge_file_schemas
from auger.formats.parquet_columns import (
    column_mapping,
    file_paths,
    partition_constants,
    rename_members,
)
from auger.formats.parquet_dates import (
    DateCorruption,
    auto_correct_dates,
    correct_dates,
    date_corruption,
)
from auger.formats.parquet_deletes import row_deletes, without_deleted
from auger.formats.vectors import unnull_structs
from auger.storage.bounded_cache import BoundedCache
from auger.storage.filesystem import (
    open_random,
    parallel_map,
    parquet_fragment,
    read_parquet_footer,
    storage_error,
)
from auger.storage.parquet_footers import (
    clear_footer_bytes,
    footer_bytes_of,
    footer_from_bytes,
    keep_footer_bytes,
)
from auger.storage.splits import FileSplit
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.arrow import schema_from_arrow
from auger.types.schema_text import parse_schema

__all__ = [
    "ParquetFooter",
    "ParquetFormat",
    "clear_footers",
    "drill_array",
    "drill_schema",
    "footer_of_bytes",
    "has_footer",
    "keep_footer",
    "nested_selection",
    "planning_footer",
]

ROWS_ONLY = "__rows__"
_ERRORS = (pa.ArrowInvalid, pa.ArrowIOError, OSError, pa.ArrowNotImplementedError)


def _int96_as_timestamp(options: Mapping[str, Any]) -> bool:
    v = options.get("store.parquet.reader.int96_as_timestamp", False)
    return v.strip().lower() == "true" if isinstance(v, str) else bool(v)


def _unreadable_footer(path: str, exc: Exception) -> UserError:
    """The error of a file whose footer cannot be read as Parquet's."""
    return UserError.data_read(
        "Error reading the Parquet footer: the file is not a readable Parquet file",
        [f"File: {path}", f"Reason: {exc}", "Fix: rewrite or remove the file"],
    )


def _open(path: str, int96_unit: str = "us") -> pq.ParquetFile:
    """The file, INT96 values read as timestamps of ``int96_unit`` (microseconds, but for
    :func:`_int96_bytes` and for finding INT96 columns)."""
    try:
        # an object is read with ranged requests: the footer, then only the row groups and
        # columns the scan asks for
        return pq.ParquetFile(open_random(path), coerce_int96_timestamp_unit=int96_unit)
    except _ERRORS as exc:
        raise _unreadable_footer(path, exc) from exc


def _int96_marks(meta: pq.FileMetaData, path: str) -> pa.Schema | None:
    """The file's Arrow schema with its INT96 leaves, and only those, typed ``timestamp[s]``
    (Parquet's INT64 timestamps have no unit of seconds): where the stored bytes go. None when
    the file has no INT96 column (nearly always)."""
    if not _has_int96(meta.schema):
        return None
    return _open(path, "s").schema_arrow


def _fragment_footer(fragment: Any, path: str) -> tuple[pq.FileMetaData, pa.Schema]:
    """The footer of an object read as a dataset fragment (:func:`parquet_fragment`)."""
    try:
        return fragment.metadata, fragment.physical_schema
    except OSError as exc:  # missing, denied, unreachable: as opening the object says them
        raise storage_error(exc, path) from exc
    except _ERRORS as exc:
        raise _unreadable_footer(path, exc) from exc


def _has_int96(leaves: pq.ParquetSchema) -> bool:
    return any(leaves.column(i).physical_type == "INT96" for i in range(len(leaves)))


@dataclass(frozen=True)
class ParquetFooter:
    """What planning keeps of one file's footer: its columns (for discovery) and the facts the
    native Parquet reader's check needs, not the footer itself (whose row-group statistics
    may be large)."""

    #: the footer's Arrow schema, INT96 values as timestamps of microseconds
    arrow: pa.Schema
    #: the same with the INT96 leaves, and only those, typed ``timestamp[s]``; None without any
    int96_marks: pa.Schema | None
    num_rows: int
    #: lower-cased top-level names with an INT96 leaf
    int96: frozenset[str]
    #: the codecs of the first row group's column chunks (writers use one codec a column)
    codecs: frozenset[str]
    #: DATE values old Drill shifted (judged with correction on)
    shifted_dates: bool
    #: the file's key-value metadata but Arrow's schema (writers' notes, such as the raw-file
    #: cache's typed copies)
    key_values: Mapping[str, str] = dataclasses.field(default_factory=dict, compare=False)
    #: the file's schema as text, by ``int96_as_timestamp`` (filled on first use)
    _schemas: dict[bool, str] = dataclasses.field(default_factory=dict, compare=False, repr=False)

    def file_schema(self, path: str, int96_as_timestamp: bool) -> TupleSchema:
        """The file's own columns (``path`` names the file in an error)."""
        text = self._schemas.get(int96_as_timestamp)
        if text is None:
            marks = None if int96_as_timestamp else self.int96_marks
            text = sys.intern(_schema_of(path, self.arrow, marks).to_text())
            self._schemas[int96_as_timestamp] = text
        return parse_schema(text)


#: Footers kept: planning a table again reads none of its footers.
_FOOTERS_SIZE = 50_000
#: by path, modification time and size
FOOTERS: BoundedCache[tuple[str, float | None, int], ParquetFooter] = BoundedCache(
    "planning footers of Parquet files", _FOOTERS_SIZE
)
#: One instance of each Arrow schema the kept footers have: the files of a table mostly share
#: theirs, which then costs its memory once rather than once a file (by serialized schema).
SHAPES: BoundedCache[bytes, pa.Schema] = BoundedCache(
    "Arrow schemas of kept Parquet footers", _FOOTERS_SIZE
)


def clear_footers() -> None:
    """Forget every kept footer (tests; after bulk file changes)."""
    FOOTERS.clear()
    SHAPES.clear()
    clear_footer_bytes()


def _shared(schema: pa.Schema) -> pa.Schema:
    """The kept instance of an Arrow schema equal to ``schema``, metadata and all (the
    serialized form tells them apart: ``==`` on schemas disregards metadata)."""
    return SHAPES.setdefault(schema.serialize().to_pybytes(), schema)


def planning_footer(
    path: str, size: int | None = None, mtime: float | None = None
) -> ParquetFooter:
    """The file's footer as planning uses it, kept per path, modification time and size when
    ``mtime`` is given (a rewritten file has another one) and read afresh otherwise.

    ``size``: the whole file's size from its listing, if known (an object is then not asked
    its size first).

    Raises:
        OSError, pyarrow.ArrowException: the file cannot be read or is not Parquet.
        UserError: an object that cannot be opened.
    """
    key = (path, mtime, size or 0) if mtime is not None else None
    if key is not None:
        hit = FOOTERS.get(key)
        if hit is not None:
            return hit
    meta, arrow = read_parquet_footer(path, size)
    raw = footer_bytes_of(meta)
    footer = _planning_facts(meta, arrow, raw)
    if key is not None:
        keep_footer(path, mtime, size, footer, raw)
    return footer


def footer_of_bytes(raw: bytes) -> ParquetFooter:
    """The planning facts of a footer serialized by :func:`footer_bytes_of`."""
    meta, arrow = footer_from_bytes(raw)
    return _planning_facts(meta, arrow, raw)


def _planning_facts(meta: pq.FileMetaData, arrow: pa.Schema, raw: bytes) -> ParquetFooter:
    leaves = meta.schema
    int96 = frozenset(
        leaves.column(i).path.split(".")[0].lower()
        for i in range(len(leaves))
        if leaves.column(i).physical_type == "INT96"
    )
    group = meta.row_group(0) if meta.num_row_groups else None
    return ParquetFooter(
        _shared(arrow),
        # the INT96 leaves typed ``timestamp[s]``: from the serialized footer, not the file
        _shared(footer_from_bytes(raw, "s")[1]) if int96 else None,
        meta.num_rows,
        int96,
        frozenset(group.column(i).compression for i in range(group.num_columns))
        if group is not None
        else frozenset(),
        date_corruption(meta) is not DateCorruption.NONE,
        _key_values(meta),
    )


def _key_values(meta: pq.FileMetaData) -> dict[str, str]:
    """The footer's key-value metadata as text, Arrow's serialized schema left out."""
    return {
        k.decode("utf-8", "replace"): v.decode("utf-8", "replace")
        for k, v in (meta.metadata or {}).items()
        if k != b"ARROW:schema"
    }


def keep_footer(
    path: str, mtime: float | None, size: int | None, footer: ParquetFooter, raw: bytes
) -> None:
    """Keep a file's planning footer, and its serialized bytes
    (:mod:`auger.storage.parquet_footers`), for the file of this path, modification time and
    size."""
    FOOTERS.put((path, mtime, size or 0), footer)
    keep_footer_bytes(path, mtime, size, raw)


def has_footer(path: str, mtime: float | None, size: int | None) -> bool:
    """Whether planning keeps this file's footer (reading it would open nothing)."""
    return (path, mtime, size or 0) in FOOTERS


def _is_mark(marks: pa.DataType | None) -> bool:
    return marks is not None and pa.types.is_timestamp(marks) and marks.unit == "s"


def _member_marks(marks: pa.DataType | None, name: str) -> pa.DataType | None:
    if marks is None or not pa.types.is_struct(marks):
        return None
    i = marks.get_field_index(name)
    return marks.field(i).type if i >= 0 else None


def _element_marks(marks: pa.DataType | None) -> pa.DataType | None:
    if marks is None:
        return None
    if pa.types.is_list(marks) or pa.types.is_large_list(marks):
        return marks.value_type
    if pa.types.is_fixed_size_list(marks):
        return marks.value_type
    return None


def _int96_type(t: pa.DataType, marks: pa.DataType | None) -> pa.DataType:
    """``t`` with the INT96 leaves ``marks`` shows typed as VARBINARY."""
    if marks is None:
        return t
    if _is_mark(marks):
        return pa.binary()
    if pa.types.is_struct(t):
        return pa.struct(
            [f.with_type(_int96_type(f.type, _member_marks(marks, f.name))) for f in t]
        )
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        field = t.value_field.with_type(_int96_type(t.value_type, _element_marks(marks)))
        return pa.list_(field) if pa.types.is_list(t) else pa.large_list(field)
    if pa.types.is_map(t) and pa.types.is_map(marks):
        return pa.map_(
            t.key_field,
            t.item_field.with_type(_int96_type(t.item_type, marks.item_type)),
        )
    return t


_MICROS_PER_DAY = 86_400 * 10**6
_JULIAN_EPOCH_DAY = 2_440_588  # the Julian day of 1970-01-01


def _int96_bytes(micros: pa.Array, nanos: pa.Array) -> pa.Array:
    """INT96's 12 stored bytes (the nanoseconds of the day, 8 bytes, then the Julian day, 4
    bytes, little-endian) as VARBINARY, from the same values read as timestamps of
    microseconds and of nanoseconds. The microseconds hold any date; the nanoseconds, which
    wrap around beyond the years 1677-2262, still give the last three digits: their difference
    from the microseconds times 1000 is right modulo 2**64."""
    n = len(micros)
    us = pc.cast(micros, pa.int64(), safe=False).fill_null(0).to_numpy(zero_copy_only=False)
    ns = pc.cast(nanos, pa.int64(), safe=False).fill_null(0).to_numpy(zero_copy_only=False)
    with np.errstate(over="ignore"):
        extra = ns - us * 1000  # int64 arithmetic wraps as the reader's did
    day, us_of_day = np.divmod(us, _MICROS_PER_DAY)
    buf = np.empty((n, 12), dtype=np.uint8)
    buf[:, :8] = (us_of_day * 1000 + extra).astype("<i8").view(np.uint8).reshape(n, 8)
    buf[:, 8:] = (day + _JULIAN_EPOCH_DAY).astype("<i4").view(np.uint8).reshape(n, 4)
    fixed = pa.FixedSizeBinaryArray.from_buffers(pa.binary(12), n, [None, pa.py_buffer(buf)])
    if micros.null_count:
        fixed = pc.if_else(micros.is_valid(), fixed, pa.scalar(None, pa.binary(12)))
    return pc.cast(fixed, pa.binary())


def _int96_values(arr: pa.Array, nanos: pa.Array | None, marks: pa.DataType | None) -> pa.Array:
    """``arr`` (INT96 read as microseconds) with the INT96 leaves ``marks`` shows as their
    stored bytes; ``nanos`` is the same column read as nanoseconds."""
    if marks is None or nanos is None:
        return arr
    if _is_mark(marks):
        return _int96_bytes(arr, nanos)
    t = arr.type
    target = _int96_type(t, marks)
    if target == t:
        return arr
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_struct(t):
        kids = []
        for i in range(t.num_fields):
            name = t.field(i).name
            j = nanos.type.get_field_index(name)
            other = nanos.field(j) if j >= 0 else None
            kids.append(_int96_values(arr.field(i), other, _member_marks(marks, name)))
        return pa.StructArray.from_arrays(kids, fields=list(target), mask=mask)
    offsets, start, stop = _own_offsets(arr)
    _, n_start, _ = _own_offsets(nanos)
    if pa.types.is_map(t):
        items = _int96_values(
            arr.items.slice(start, stop - start),
            nanos.items.slice(n_start, stop - start),
            marks.item_type,
        )
        keys = arr.keys.slice(start, stop - start)
        return pa.MapArray.from_arrays(offsets, keys, items, type=target, mask=mask)
    values = _int96_values(
        arr.values.slice(start, stop - start),
        nanos.values.slice(n_start, stop - start),
        _element_marks(marks),
    )
    kind = pa.LargeListArray if pa.types.is_large_list(t) else pa.ListArray
    return kind.from_arrays(offsets, values, type=target, mask=mask)


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
    * times are TIME (milliseconds); a timestamp of nanoseconds is BIGINT, its stored value.
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
        return pa.int64()
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


def drill_array(arr: pa.Array) -> pa.Array:
    """A column pyarrow read from a columnar file as the Parquet reader delivers it: in
    Drill's type (:func:`_drill_type`), maps and arrays never null, null elements kept. The
    ORC data files of an Iceberg table are read through it too."""
    return unnull_structs(_conform(arr, _drill_type(arr.type)), zero_elements=False)


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


def _failing_group(
    pf: pq.ParquetFile | None, path: str, groups: list[int], columns: list[str] | None
) -> str:
    """Which row group cannot be read (the error path only: each is tried alone; the file is
    opened for it when it was read as a fragment)."""
    try:
        pf = pf or _open(path)
    except UserError:
        return ", ".join(map(str, groups))
    for rg in groups:
        try:
            pf.read_row_group(rg, columns=columns)
        except _ERRORS:
            return str(rg)
    return ", ".join(map(str, groups))


def _file_schema(
    path: str,
    int96_as_timestamp: bool = False,
    size: int | None = None,
    mtime: float | None = None,
) -> TupleSchema:
    """A file's columns from its footer (kept by :func:`planning_footer`); ``size`` and
    ``mtime`` as its listing gave them, if known."""
    try:
        footer = planning_footer(path, size, mtime)
    except _ERRORS as exc:
        raise _unreadable_footer(path, exc) from exc
    return footer.file_schema(path, int96_as_timestamp)


def _schema_of(path: str, arrow: pa.Schema, marks: pa.Schema | None) -> TupleSchema:
    """The columns of a footer's Arrow schema, INT96 leaves as ``marks`` shows them (None: as
    timestamps); names only case tells apart are one column to Drill, so an error."""
    if marks is not None:
        arrow = pa.schema(
            [f.with_type(_int96_type(f.type, m.type)) for f, m in zip(arrow, marks, strict=True)]
        )
    arrow = drill_schema(arrow)
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


def _group_spans(split: FileSplit) -> list[tuple[int, int]]:
    """(position of the first row, rows) of each row group a split reads, in reading order."""
    meta, _ = read_parquet_footer(split.path, split.file_size)
    starts = [0]
    for i in range(meta.num_row_groups):
        starts.append(starts[-1] + meta.row_group(i).num_rows)
    groups = split.row_groups if split.row_groups is not None else range(meta.num_row_groups)
    return [(starts[g], starts[g + 1] - starts[g]) for g in groups]


class ParquetFormat(FormatPlugin):
    """Drill's Parquet format plugin (``type = "parquet"``)."""

    type_name = "parquet"
    extensions = ("parquet",)

    def error_context(self, config: FormatConfig) -> list[str]:
        return []  # Drill's Parquet scan names the file alone

    def discover_schema(
        self, files: Sequence[str], config: FormatConfig, options: Mapping[str, Any]
    ) -> TupleSchema:
        # footers of objects are read by several threads at once, merged in file order
        schemas = parallel_map(lambda path: self.file_schema(path, options), files)
        return self.merge_file_schemas(zip(files, schemas, strict=True))

    def file_schema(
        self,
        path: str,
        options: Mapping[str, Any],
        size: int | None = None,
        mtime: float | None = None,
    ) -> TupleSchema:
        """One file's own columns, from its footer alone. ``size`` and ``mtime``: the file's
        as its listing gave them, if known; with ``mtime`` the footer is kept for the next
        planning of the file (:func:`planning_footer`)."""
        return _file_schema(path, _int96_as_timestamp(options), size, mtime)

    def merge_file_schemas(self, schemas: Iterable[tuple[str, TupleSchema]]) -> TupleSchema:
        """The table schema of files whose own schemas are given (path, schema), in file
        order: :meth:`discover_schema` of the same files."""
        # a column a later file adds keeps its mode, as Drill's Parquet schema does
        return merge_file_schemas(schemas)

    def read_arrow(
        self,
        split: FileSplit,
        config: FormatConfig,
        options: Mapping[str, Any],
        columns: Sequence[str] | None,
        batch_rows: int,
    ) -> Iterator[pa.RecordBatch]:
        # rows a table deleted from this file, by position or by key, are left out
        batches = without_deleted(
            row_deletes(config.options),
            split.path,
            columns,
            lambda wanted: self._read_file(split, config, options, wanted, batch_rows),
            lambda: _group_spans(split),
        )
        constants = partition_constants(config.options)
        if constants is None:
            yield from batches
            return
        # a Delta table's partition columns: the log's values for this file, not in the file
        for batch in batches:
            extra = constants.arrays(split.path, columns, batch.num_rows)
            if not extra:
                yield batch
                continue
            pairs = [(n, c) for n, c in zip(batch.schema.names, batch.columns, strict=True)]
            pairs = [p for p in pairs if p[0] != ROWS_ONLY]
            pairs += [(n, _conform(a, _drill_type(a.type))) for n, a in extra]
            yield pa.RecordBatch.from_arrays([c for _, c in pairs], names=[n for n, _ in pairs])

    def _read_file(
        self,
        split: FileSplit,
        config: FormatConfig,
        options: Mapping[str, Any],
        columns: Sequence[str] | None,
        batch_rows: int,
    ) -> Iterator[pa.RecordBatch]:
        int96_ts = _int96_as_timestamp(options)
        # an object whose size the listing gave is read without asking its size first
        fragment = parquet_fragment(split.path, split.file_size)
        pf: pq.ParquetFile | None = None
        if fragment is not None:
            meta, schema = _fragment_footer(fragment, split.path)
        else:
            pf = _open(split.path)
            meta, schema = pf.metadata, pf.schema_arrow
        marks = None if int96_ts else _int96_marks(meta, split.path)
        groups = (
            list(split.row_groups)
            if split.row_groups is not None
            else list(range(meta.num_row_groups))
        )
        mapping = column_mapping(config.options)
        physical: dict[str, str] | None = None
        members: dict[str, str] = {}
        if mapping is not None:
            # a table that tracks columns by id (Iceberg, Delta): this file's names for them
            members = mapping.member_names(schema)
            schema, physical = mapping.table_view(schema)
        selected = nested_selection(schema, columns, options.get("__projection__"))
        if selected is not None and not selected:
            yield from self._counts(meta, groups, batch_rows)
            return
        renamed: dict[str, str] = {}
        if physical is not None:
            wanted = selected if selected is not None else schema.names
            selected = file_paths(wanted, physical)
            renamed = {physical[f.name.lower()]: f.name for f in schema}
        if not groups:
            return
        # dates written by Drill before 1.9 are shifted: read them back as Drill does
        dates = date_corruption(meta, auto_correct_dates(config.options))
        # the fragment reads whole top-level columns only; members of a struct (``m.b``) and
        # INT96 values (read twice, in step) take pyarrow's file reader
        whole = marks is None and not any("." in c for c in selected or ())
        try:
            if fragment is not None and whole:
                # the split's row groups of the fragment whose footer was read (not read again):
                # pyarrow pre-buffers and decodes ahead
                batches = fragment.subset(row_group_ids=groups).to_batches(
                    columns=selected, batch_size=batch_rows, use_threads=True
                )
            else:
                pf = pf or _open(split.path)
                # one call over all the split's row groups: pre-buffered, decoded ahead
                batches = pf.iter_batches(
                    batch_size=batch_rows, row_groups=groups, columns=selected, use_threads=True
                )
            nanos = self._int96_nanos(split.path, marks, selected, groups, batch_rows)
            marked = pa.struct(list(marks)) if marks is not None else None
            for batch in batches:
                columns_in = batch.columns
                if nanos is not None:
                    # the INT96 columns again, read as nanoseconds: the bytes need both
                    again = next(nanos)
                    columns_in = [
                        _int96_values(c, again.column(name), _member_marks(marked, name))
                        if name in again.schema.names
                        else c
                        for c, name in zip(batch.columns, batch.schema.names, strict=True)
                    ]
                # a null group is a map of nulls and a null LIST an empty array, as Drill's
                # vectors hold them; null elements stay (Parquet lists may hold them)
                arrays = [
                    unnull_structs(
                        correct_dates(_conform(c, _drill_type(c.type)), dates), zero_elements=False
                    )
                    for c in columns_in
                ]
                names = batch.schema.names
                if members:
                    arrays = [
                        rename_members(a, n, members) for a, n in zip(arrays, names, strict=True)
                    ]
                if renamed:
                    names = [renamed[n] for n in names]
                yield pa.RecordBatch.from_arrays(arrays, names=names)
        except _ERRORS as exc:
            raise UserError.data_read(
                "Error reading Parquet data",
                [
                    f"File: {split.path}",
                    f"Row group: {_failing_group(pf, split.path, groups, selected)}",
                    f"Reason: {exc}",
                ],
            ) from exc

    @staticmethod
    def _int96_nanos(
        path: str,
        marks: pa.Schema | None,
        selected: list[str] | None,
        groups: list[int],
        batch_rows: int,
    ) -> Iterator[pa.RecordBatch] | None:
        """The batches of the selected columns holding INT96 values read as nanoseconds, in
        step with the main read (same row groups and batch size); None without any."""
        if marks is None:
            return None
        with_int96 = {f.name for f in marks if _is_mark(f.type) or "timestamp[s]" in str(f.type)}
        wanted = [c for c in (selected or marks.names) if c.split(".", 1)[0] in with_int96]
        if not wanted:
            return None
        return _open(path, "ns").iter_batches(
            batch_size=batch_rows, row_groups=groups, columns=wanted, use_threads=True
        )

    @staticmethod
    def _counts(
        meta: pq.FileMetaData, groups: list[int], batch_rows: int
    ) -> Iterator[pa.RecordBatch]:
        """Row counts from the footer only: batches of one null column."""
        for rg in groups:
            left = meta.row_group(rg).num_rows
            while left > 0:
                n = min(left, batch_rows)
                left -= n
                yield pa.RecordBatch.from_arrays([pa.nulls(n)], names=[ROWS_ONLY])
