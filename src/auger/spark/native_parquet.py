"""Parquet scans planned onto Spark's own Parquet reader, where it gives exactly Drill's answer.

The ``auger`` data source runs the scan framework in Python workers: every batch crosses from
the JVM to Python and back. For Parquet, Spark's vectorized reader can often deliver the very
same rows and types without leaving the JVM, with row-group filter push-down and nested column
pruning for free. This module decides, column by column, whether it can, and builds that frame:

* table columns are read with an explicit read schema (the Spark type the native reader gives
  for every file's column), then cast to the output type only where the cast is known to give
  identical values (a UTC instant to a zone-less timestamp, the session zone being UTC);
* a column missing from some files is null there, as in the scan framework; columns missing
  from every file (or provided-schema columns no file has) are typed nulls or their default;
* implicit and partition columns (``filename``, ``dir0``, ``key=value``...) are computed on the
  driver with the scan framework's own :func:`~auger.scan.implicit.implicit_value`, per file, and
  looked up by the file each row comes from (Spark's ``_metadata.file_path``);
* a member projection (``m.qty``) reads only those members and rebuilds the table's struct
  with nulls for the rest, as the scan framework does.

Anything the native reader would read differently makes the whole scan ineligible (the caller
falls back to the data source): INT96, Brotli-compressed pages, nanosecond timestamps, times,
intervals, decimals wider than 38 digits, files whose column types differ (the scan framework
widens them), struct members some files lack, names only the case tells apart, paths Spark's
file index would glob or cannot parse, and files whose DATE values old Drill wrote shifted
(:mod:`auger.formats.parquet_dates`; Spark would read them, and filter on their statistics, as
they are stored).

``COUNT(*)`` with nothing projected needs no reader at all: the footers (cached per file, size
and modification time) give the row count, and the frame is a range of that many rows.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from auger.errors import UserError
from auger.formats.parquet import clear_footers, planning_footer
from auger.formats.parquet_columns import COLUMN_MAPPING, PARTITION_VALUES
from auger.formats.parquet_dates import auto_correct_dates
from auger.formats.parquet_deletes import ROW_DELETES
from auger.projection import quoted
from auger.scan.implicit import implicit_value
from auger.scan.missing import missing_value, planned_fill
from auger.scan.plan import ROW_COUNT_COLUMN
from auger.scan.spec import ColumnSource, FileSplit
from auger.spark.object_store import hadoop_reads
from auger.storage.filesystem import basename as fs_basename
from auger.storage.filesystem import is_uri, parallel_map, read_parquet_footer
from auger.storage.filesystem import normpath as fs_normpath
from auger.types import ColumnMetadata
from auger.types.spark import column_to_spark

if TYPE_CHECKING:
    from auger.scan.plan import PlannedScan

__all__ = [
    "OPTION",
    "clear_cache",
    "file_limit",
    "footer_row_count",
    "native_parquet_frame",
    "parquet_files_frame",
]

_log = logging.getLogger(__name__)

#: The session option that switches this path on (default) or off.
OPTION = "auger.scan.native_parquet"

#: Scans of more files than this stay on the data source (footers are checked on the driver).
#: Fewer still when Spark would list them by a job (:func:`file_limit`).
MAX_FILES = 4096

#: Spark lists the paths given to its reader again, and more paths than this session setting
#: (default 32) by a Spark job of a task a path: over thousands of small files that job is most
#: of the planning time, and the data source, which takes auger's own listing, plans in none.
_LISTING_JOB_THRESHOLD = "spark.sql.sources.parallelPartitionDiscovery.threshold"

#: Characters Spark's file index treats as glob syntax or cannot put in a Hadoop path.
_UNSAFE_PATH_CHARS = frozenset("*?[]{}\\:")

_UTC_ZONES = frozenset({"UTC", "Etc/UTC", "GMT", "Etc/GMT", "Z", "+00:00", "UTC+00:00"})


# ---------------------------------------------------------------------------------- footers
@dataclass(frozen=True)
class _Footer:
    """What planning needs of one file's footer."""

    fields: Mapping[str, pa.Field | None]  # lower top-level name -> field (None: ambiguous)
    num_rows: int
    int96: frozenset[str]  # lower top-level names with an INT96 leaf
    codecs_ok: bool = True  # every column chunk's codec is one Spark's reader has (no Brotli)
    #: DATE values old Drill shifted (judged with correction on): only the scan shifts them back
    shifted_dates: bool = False


def clear_cache() -> None:
    """Forget every kept footer (tests; after bulk file changes)."""
    clear_footers()


def _footer(split: FileSplit) -> _Footer:
    """The file's footer facts, from the footers planning keeps per path, modification time
    and size (:func:`auger.formats.parquet.planning_footer`, which discovery fills too)."""
    # the listing's size goes along: an object is read without first asking its size
    kept = planning_footer(split.path, split.file_size, split.mtime)
    fields: dict[str, pa.Field | None] = {}
    for f in kept.arrow:
        lname = f.name.lower()
        fields[lname] = None if lname in fields else f
    return _Footer(
        fields, kept.num_rows, kept.int96, kept.codecs <= _SPARK_CODECS, kept.shifted_dates
    )


#: Parquet codecs Spark's reader decodes without extra libraries (pyarrow also has Brotli);
#: the first row group's codecs are taken for the file's (writers use one codec a column; a
#: later odd one fails the read with a DATA_READ error, never a wrong value).
_SPARK_CODECS = frozenset({"UNCOMPRESSED", "SNAPPY", "GZIP", "LZ4", "LZ4_RAW", "ZSTD"})


def footer_row_count(files: Sequence[FileSplit]) -> int:
    """Rows in the files, from their footers alone (whole files or the splits' row groups);
    footers of objects are read by several threads at once."""

    def rows(split: FileSplit) -> int:
        if split.row_groups is None:
            return _footer(split).num_rows
        meta = read_parquet_footer(split.path)[0]
        return sum(meta.row_group(g).num_rows for g in split.row_groups)

    return sum(parallel_map(rows, files, force=bool(files) and is_uri(files[0].path)))


# ------------------------------------------------------------------------------ type rules
def _read_type(t: pa.DataType) -> Any:
    """The Spark type Spark's Parquet reader gives for a column pyarrow sees as ``t``, when it
    holds the same values the scan framework delivers (None: it does not, or cannot be read).
    """
    # deferred: loads pyspark (heavy)
    from pyspark.sql import types as T

    if pa.types.is_dictionary(t):
        return _read_type(t.value_type)
    scalars: list[tuple[Any, Any]] = [
        # INT_8/INT_16 are Drill INTs (their INT32 storage): Spark reads them as such
        (pa.types.is_int8, T.IntegerType()),
        (pa.types.is_int16, T.IntegerType()),
        (pa.types.is_int32, T.IntegerType()),
        (pa.types.is_int64, T.LongType()),
        # unsigned: UINT_8/16 fit Drill's INT as they are; UINT_32/64 come as Spark reads them
        # (BIGINT, DECIMAL(20, 0)) and are wrapped to Drill's INT/BIGINT by ``_wrapped``. Asking
        # the reader for INT/BIGINT directly fails on dictionary-encoded pages.
        (pa.types.is_uint8, T.IntegerType()),
        (pa.types.is_uint16, T.IntegerType()),
        (pa.types.is_uint32, T.LongType()),
        (pa.types.is_uint64, T.DecimalType(20, 0)),
        (pa.types.is_float32, T.FloatType()),
        (pa.types.is_float64, T.DoubleType()),
        (pa.types.is_boolean, T.BooleanType()),
        (pa.types.is_string, T.StringType()),
        (pa.types.is_large_string, T.StringType()),
        (pa.types.is_binary, T.BinaryType()),
        (pa.types.is_large_binary, T.BinaryType()),
        (pa.types.is_fixed_size_binary, T.BinaryType()),
        (pa.types.is_date, T.DateType()),
    ]
    if isinstance(t, pa.BaseExtensionType):
        return None
    for check, spark_type in scalars:
        if check(t):
            return spark_type
    if pa.types.is_timestamp(t):
        if t.unit == "ns":
            return None  # Spark refuses TIMESTAMP(NANOS)
        return T.TimestampType() if t.tz else T.TimestampNTZType()
    if pa.types.is_decimal(t):
        return T.DecimalType(t.precision, t.scale) if t.precision <= 38 else None
    if pa.types.is_struct(t):
        if t.num_fields == 0:
            return None
        members = []
        seen: set[str] = set()
        for f in t:
            rt = None if _wraps(f.type) else _read_type(f.type)
            if rt is None or f.name.lower() in seen:
                return None
            seen.add(f.name.lower())
            members.append(T.StructField(f.name, rt, True))
        return T.StructType(members)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        elem = None if _wraps(t.value_type) else _read_type(t.value_type)
        return None if elem is None else T.ArrayType(elem, True)
    if pa.types.is_map(t):
        if _wraps(t.key_type) or _wraps(t.item_type):
            return None
        key, value = _read_type(t.key_type), _read_type(t.item_type)
        return None if key is None or value is None else T.MapType(key, value, True)
    return None  # float16, time, interval, duration, null...


def _wraps(t: pa.DataType) -> bool:
    """An unsigned 32/64-bit integer: Drill's value (the bits, signed) needs ``_wrapped``.

    That is only done for a top-level column; one inside a struct, list or map refuses the
    native path.
    """
    if pa.types.is_dictionary(t):
        t = t.value_type
    return bool(pa.types.is_uint32(t) or pa.types.is_uint64(t))


def _is_uint32(t: pa.DataType) -> bool:
    return bool(pa.types.is_uint32(t.value_type if pa.types.is_dictionary(t) else t))


def _wrapped(t: pa.DataType, value: str) -> str:
    """SQL giving Drill's signed value of an unsigned column Spark read as BIGINT/DECIMAL.

    Spelled as arithmetic rather than a narrowing cast, so it is exact under ANSI mode too.
    """
    if _is_uint32(t):
        return f"CAST(IF({value} > 2147483647, {value} - 4294967296, {value}) AS INT)"
    return (
        f"CAST(IF({value} > 9223372036854775807, {value} - 18446744073709551616, {value})"
        " AS BIGINT)"
    )


# A projection tree: member name (lower) -> subtree, or WHOLE for the member and all below it.
_WHOLE: dict[str, Any] = {}
_Tree = dict[str, Any]


def _projection_tree(root: str, projection: Sequence[str], target: Any) -> _Tree | None:
    """The members of struct column ``root`` the query projects (None: the whole column).

    Mirrors :func:`auger.formats.parquet.nested_selection`: a bare name or an array index
    reads the whole column; otherwise each dotted path is followed while the type is a struct.
    """
    # deferred: loads pyspark (heavy)
    from pyspark.sql import types as T

    if "*" in projection or not isinstance(target, T.StructType):
        return None
    paths: list[list[str]] = []
    for path in projection:
        parts = [p.strip("`") for p in path.split(".")]
        if parts[0].lower() != root:
            continue
        if len(parts) == 1 or "[" in path:
            return None
        paths.append(parts[1:])
    if not paths:
        return None
    tree: _Tree = {}
    for parts in paths:
        node = tree
        for i, part in enumerate(parts):
            key = part.lower()
            last = i == len(parts) - 1
            if node.get(key) is _WHOLE:
                break
            if last:
                node[key] = _WHOLE
                break
            node = node.setdefault(key, {})
    return tree


def _prune(t: Any, tree: _Tree) -> Any:
    """``t`` reduced to the tree's members (None: a member ``t`` lacks, as a file may)."""
    # deferred: loads pyspark (heavy)
    from pyspark.sql import types as T

    if not isinstance(t, T.StructType):
        return t  # the path goes on below a non-struct: the whole member is read
    by_name = {f.name.lower(): f for f in t.fields}
    if len(by_name) != len(t.fields) or any(k not in by_name for k in tree):
        return None
    out = []
    for f in t.fields:
        sub = tree.get(f.name.lower())
        if sub is None:
            continue
        member = f.dataType if sub is _WHOLE else _prune(f.dataType, sub)
        if member is None:
            return None
        out.append(T.StructField(f.name, member, True))
    return T.StructType(out)


def _rebuild(t: Any, tree: _Tree, value: str) -> str:
    """SQL for the full struct type ``t`` from its projected members; the others typed nulls."""
    # deferred: loads pyspark (heavy)
    from pyspark.sql import types as T

    if not isinstance(t, T.StructType):
        return value
    members = []
    for f in t.fields:
        sub = tree.get(f.name.lower())
        member = f"{value}.{quoted(f.name)}"
        if sub is None:
            member = _null(f.dataType)
        elif sub is not _WHOLE:
            member = _rebuild(f.dataType, sub, member)
        members.append(f"{_string(f.name)}, {member}")
    return f"CASE WHEN {value} IS NOT NULL THEN named_struct({', '.join(members)}) END"


def _never_null(value: str, t: Any, depth: int = 0) -> str:
    """SQL for ``value`` as Drill's vectors hold it: a null struct is a struct of null
    members and a null array an empty one, at any depth (the data source's rule, see
    :func:`auger.formats.vectors.unnull_structs`); scalars, and elements, as they are."""
    # deferred: loads pyspark (heavy)
    from pyspark.sql import types as T

    if isinstance(t, T.StructType) and t.fields:
        members = ", ".join(
            f"{_string(f.name)}, {_never_null(f'({value}).{quoted(f.name)}', f.dataType, depth)}"
            for f in t.fields
        )
        return _declared_nullable(f"named_struct({members})")
    if isinstance(t, T.ArrayType):
        element = t.elementType
        if isinstance(element, T.StructType | T.ArrayType):
            var = f"auger_e{depth}"
            value = f"transform({value}, {var} -> {_never_null(var, element, depth + 1)})"
        return _declared_nullable(f"coalesce({value}, CAST(array() AS {_type_sql(t)}))")
    return value


def _declared_nullable(sql: str) -> str:
    """The same value, typed nullable as the data source declares every column and member
    (``if`` with a NULL branch may be null as far as the analyzer knows, which does not fold
    it as it does ``CASE WHEN true``; the optimizer drops it)."""
    return f"if(true, {sql}, NULL)"


# ----------------------------------------------------------------------------- SQL text
# The frame is built from SQL expression strings: one Py4J call per column instead of one per
# function, which is most of the planning time of a small query.


def _string(value: str) -> str:
    """A Spark SQL string literal (backslash escapes are on by default)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _type_sql(t: Any) -> str:
    """A Spark type as SQL, member names quoted (``simpleString`` leaves them bare)."""
    # deferred: loads pyspark (heavy)
    from pyspark.sql import types as T

    if isinstance(t, T.StructType):
        members = ", ".join(f"{quoted(f.name)}: {_type_sql(f.dataType)}" for f in t.fields)
        return f"STRUCT<{members}>"
    if isinstance(t, T.ArrayType):
        return f"ARRAY<{_type_sql(t.elementType)}>"
    if isinstance(t, T.MapType):
        return f"MAP<{_type_sql(t.keyType)}, {_type_sql(t.valueType)}>"
    return str(t.simpleString()).upper()


def _null(t: Any) -> str:
    return f"CAST(NULL AS {_type_sql(t)})"


def _literal(value: object, t: Any) -> str:
    """A constant of Spark type ``t``, as nullable as any scanned column: Spark takes a
    literal for NOT NULL, and ``NULLIF(v, NULL)`` is ``v`` without that promise."""
    if value is None:
        return _null(t)
    if isinstance(value, bool) or not isinstance(value, int | float | str | dt.date):
        raise TypeError(f"no SQL literal rule for {type(value).__name__}")
    text = _string(value.isoformat() if isinstance(value, dt.date) else str(value))
    if isinstance(value, float):
        text = _string(repr(value))
    return f"NULLIF(CAST({text} AS {_type_sql(t)}), {_null(t)})"


# ------------------------------------------------------------------------------ the frame
def _enabled(options: Mapping[str, Any]) -> bool:
    value = options.get(OPTION, True)
    if isinstance(value, str):
        return value.strip().lower() not in ("false", "0", "no", "off")
    return bool(value)


def _plain_path(path: str) -> bool:
    """A local absolute path Spark's file index takes literally and reports back unchanged."""
    if is_uri(path):  # an object's URI, which Spark's Hadoop file system reads as written
        return (
            fs_normpath(path) == path
            and not _UNSAFE_PATH_CHARS.intersection(path.partition("://")[2])
            and not fs_basename(path).startswith(("_", "."))
        )
    name = os.path.basename(path)
    return (
        os.path.isabs(path)
        and os.path.normpath(path) == path
        and not _UNSAFE_PATH_CHARS.intersection(path)
        and all(ch >= " " for ch in path)  # no control characters (newlines...) either
        and not name.startswith(("_", "."))
    )


def _row_count_only(planned: PlannedScan) -> bool:

    cols = list(planned.schema)
    return (
        len(cols) == 1
        and cols[0].name == ROW_COUNT_COLUMN
        and planned.spec.sources.get(ROW_COUNT_COLUMN) == ColumnSource.FILENAME
    )


def _count_frame(spark: Any, planned: PlannedScan) -> Any:
    """``COUNT(*)`` with nothing projected: as many rows as the footers count, no reader.

    The row-count column's values are never looked at (nothing else is projected), so it is
    a typed null rather than the file name the data source carries.
    """

    total = footer_row_count(planned.spec.files)
    if planned.spec.limit is not None:
        total = min(total, max(0, planned.spec.limit))
    return spark.range(total).selectExpr(f"CAST(NULL AS STRING) AS {quoted(ROW_COUNT_COLUMN)}")


def _missing_value(col: ColumnMetadata) -> tuple[bool, Any]:
    """The value of a column no file has, by the scan's one rule
    (:func:`auger.scan.missing.missing_value`): (True, value), or (False, _) when a literal here
    cannot say it (an array, a map, a type without a literal rule), and the data source path
    answers instead."""
    try:
        value = missing_value(planned_fill(col))
    except UserError:
        return False, None  # an unreadable default: the data source path raises it
    if value is None or type(value) in (int, float, str, dt.date):
        return True, value
    return False, None


def file_limit(spark: Any, local: bool = False) -> int:
    """The most files Spark's reader is given: as many as it lists on the driver (not by a
    job), at most :data:`MAX_FILES`; ``local``: files of the local disk, which the driver
    lists itself however many there are (:func:`_listed_here`), so :data:`MAX_FILES`."""
    if local:
        return MAX_FILES
    try:
        return min(MAX_FILES, int(spark.conf.get(_LISTING_JOB_THRESHOLD, "32")))
    except Exception:  # a setting that is not a number: Spark's default
        return 32


def _session_is_utc(spark: Any) -> bool:
    try:
        return str(spark.conf.get("spark.sql.session.timeZone")) in _UTC_ZONES
    except Exception:
        return False


def native_parquet_frame(spark: Any, planned: PlannedScan, options: Mapping[str, Any]) -> Any:
    """Spark's Parquet reader delivering ``planned.schema`` exactly, or None (not eligible)."""
    spec = planned.spec
    if spec.format_type != "parquet" or not _enabled(options):
        return None
    return parquet_files_frame(spark, planned)


def parquet_files_frame(
    spark: Any,
    planned: PlannedScan,
    origins: Sequence[FileSplit] | None = None,
    local: bool = False,
) -> Any:
    """Spark's Parquet reader over the Parquet files of ``planned.spec``, or None.

    ``origins``: the file each of the spec's files stands for (the raw file a cache part
    holds, see :mod:`auger.spark.cached_scan`), whose path, directories and modification time
    give the implicit and partition columns; by default the files themselves. ``local``: the
    files are on the local disk, and Spark lists them on the driver however many there are
    (raw-file cache entries; a Parquet table keeps Spark's listing job past its threshold).
    """
    spec = planned.spec
    if spec.reader_schema or len(spec.files) > MAX_FILES:
        return None
    carried = spec.format_options
    if any(k in carried for k in (COLUMN_MAPPING, PARTITION_VALUES, ROW_DELETES)):
        # files name the columns otherwise (Iceberg renames, Delta's mapping), the table keeps
        # columns outside them (Delta's partition values) or deleted rows in them (Iceberg)
        return None
    try:
        if _row_count_only(planned):
            return _count_frame(spark, planned)
        local = local and not any(is_uri(f.path) for f in spec.files)
        if len(spec.files) > file_limit(spark, local):
            return None  # Spark would list every file again, by a job
        if not spec.files or any(f.is_range or f.row_groups is not None for f in spec.files):
            return None
        paths = [f.path for f in spec.files]
        if not all(_plain_path(p) for p in paths) or len(set(paths)) != len(paths):
            return None
        if not hadoop_reads(spark, paths):
            return None  # object-store files without S3A's classes: the data source reads
        footers = [_footer(f) for f in spec.files]
        if not all(ft.codecs_ok for ft in footers):
            return None  # a codec only the data source's pyarrow reads
        if auto_correct_dates(spec.format_options) and any(ft.shifted_dates for ft in footers):
            return None  # dates written by Drill before 1.9: the scan corrects them
        return _scan_frame(spark, planned, footers, origins or spec.files, local)
    except (OSError, pa.ArrowException) as exc:
        # an unreadable footer: the data source reports it with the file and the reason
        _log.debug("native Parquet path declined: %s", exc)
        return None


def _scan_frame(
    spark: Any,
    planned: PlannedScan,
    footers: list[_Footer],
    origins: Sequence[FileSplit],
    local: bool = False,
) -> Any:
    # deferred: loads pyspark (heavy)
    from pyspark.sql import types as T

    spec = planned.spec
    read_fields: list[Any] = []
    selects: list[str] = []
    file_index: str | None = None
    utc: bool | None = None
    for col in planned.schema:
        source = spec.sources.get(col.name, ColumnSource.TABLE)
        target = column_to_spark(col)
        name = quoted(col.name)
        if source == ColumnSource.TABLE:
            lname = col.name.lower()
            if any(lname in ft.int96 for ft in footers):
                return None
            present = [ft.fields[lname] for ft in footers if lname in ft.fields]
            if any(f is None for f in present):
                return None  # two columns the case alone tells apart
            tree = _projection_tree(lname, spec.projection, target)
            wanted = target if tree is None else _prune(target, tree)
            if wanted is None:
                if present:
                    return None
                selects.append(f"{_null(target)} AS {name}")
                continue
            read_types: set[tuple[str, str]] = set()
            wrap: pa.DataType | None = None  # the unsigned type every file has, if any
            for f in present:
                assert f is not None
                rt = _read_type(f.type)
                if _wraps(f.type):
                    wrap = f.type
                if rt is not None and tree is not None:
                    rt = _prune(rt, tree)  # None: a projected member this file lacks
                if rt is None:
                    return None
                # an unsigned column reads like a signed or decimal one: tell them apart
                read_types.add((rt.json(), str(f.type) if _wraps(f.type) else ""))
            if len(read_types) > 1:
                return None  # the files disagree: the scan framework widens or converts
            if not read_types:
                selects.append(f"{_null(target)} AS {name}")
                continue
            read_type = T._parse_datatype_json_string(read_types.pop()[0])
            value = name
            if wrap is not None:
                if wanted != (T.IntegerType() if _is_uint32(wrap) else T.LongType()):
                    return None
                value = _wrapped(wrap, value)
            elif read_type != wanted:
                if not (
                    isinstance(read_type, T.TimestampType)
                    and isinstance(wanted, T.TimestampNTZType)
                ):
                    return None
                if utc is None:
                    utc = _session_is_utc(spark)
                if not utc:
                    return None
                value = f"CAST({value} AS TIMESTAMP_NTZ)"  # the instant's UTC wall clock
            if tree is not None:
                value = _rebuild(target, tree, value)
            value = _never_null(value, target)
            read_fields.append(T.StructField(col.name, read_type, True))
            selects.append(f"{value} AS {name}")
        elif source == ColumnSource.MISSING:
            ok, default = _missing_value(col)
            if not ok:
                return None
            selects.append(f"{_literal(default, target)} AS {name}")
        else:
            values = [implicit_value(source, f.path, spec.selection_root, f.mtime) for f in origins]
            if len(set(values)) == 1:
                selects.append(f"{_literal(values[0], target)} AS {name}")
                continue
            if file_index is None:
                file_index = _file_index(spec.files)
            lookup = ", ".join(_literal(v, target) for v in values)
            selects.append(f"element_at(array({lookup}), {file_index} + 1) AS {name}")
    if file_index is not None and any(f.name.lower() == "_metadata" for f in read_fields):
        return None  # a data column of that name hides Spark's file metadata
    reader = spark.read.schema(T.StructType(read_fields)).option("recursiveFileLookup", "true")
    # No ``limit`` here: a pushed LIMIT is still the query's own (one table, nothing between),
    # and Spark stops this reader as early as it stops the data source.
    paths = [f.path for f in spec.files]
    if not local:
        return _selected(reader.parquet(*paths), selects, read_fields)
    with _listed_here(spark, len(paths)):
        return _selected(reader.parquet(*paths), selects, read_fields)


def _selected(frame: Any, selects: list[str], read_fields: list[Any]) -> Any:
    """The reader's frame projected to ``selects``, or as it is where they are its own columns
    as read: each projection is analysed by Spark again, 3-4 ms of every query's planning."""
    if selects == [f"{quoted(f.name)} AS {quoted(f.name)}" for f in read_fields]:
        return frame
    return frame.selectExpr(*selects)


_listing_lock = threading.Lock()


@contextmanager
def _listed_here(spark: Any, files: int) -> Iterator[None]:
    """Spark lists ``files`` local files on the driver rather than by a job of a task a file
    (which costs more than the scan over thousands of small cache entries): its threshold is
    raised while the reader resolves its files, which it does as the frame is made. The
    setting only says where the listing runs, so another scan planned meanwhile is answered
    the same either way."""
    with _listing_lock:
        before = str(spark.conf.get(_LISTING_JOB_THRESHOLD))
        if before.isdigit() and int(before) >= files:
            yield
            return
        spark.conf.set(_LISTING_JOB_THRESHOLD, str(files + 1))
        try:
            yield
        finally:
            spark.conf.set(_LISTING_JOB_THRESHOLD, before)


def _file_index(files: Sequence[FileSplit]) -> str:
    """SQL for the 0-based index in ``files`` of the file each row was read from.

    Spark reports the file as a URI (``file:///dir/a%20b.parquet``): decoded back to the path
    (``+`` is a literal plus in a URI path, not a space) and looked up in a map of the paths.
    A path the map lacks is a bug, and fails the query rather than giving wrong values.
    """
    uri = "_metadata.file_path"
    path = f"regexp_replace(url_decode(replace({uri}, '+', '%2B')), '^file:(//)?', '')"
    entries = ", ".join(f"{_string(f.path)}, {i}" for i, f in enumerate(files))
    missing = f"CAST(raise_error(concat('auger: no planned file for ', {uri})) AS INT)"
    return f"coalesce(map({entries})[{path}], {missing})"
