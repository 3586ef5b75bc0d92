"""Schema discovery on the driver, before planning: what columns a table's files have.

Parquet footers, text headers and a JSON sample are read by the format plugin; the result becomes
the defined schema every executor conforms to. Results are cached per file list and modification
times (and sizes), so repeated queries over unchanged files skip the work and a changed file is
looked at again.

When a table has many files (more than ``auger.scan.parallel_discovery_files``, default 64) and
a SparkSession is running in this process, the files are examined by a Spark job, one group per
task, and the per-group schemas merged on the driver in file order (the same result as a
sequential pass). A format whose files' schemas do not depend on each other (Parquet: each
footer alone) is examined file by file on the driver instead, however many files there are: a
footer is one small read, less than a Spark task costs to start; the footers of objects are read
by several threads at once, each request mostly waiting on the network, and with the sizes the
listing gave (no request asks an object's size first). Those per-file schemas are cached by
path, size and modification time, so that after one file of a large directory changes (or is
added) only its footer is read again, and the scan's diagnostics take them from there too.

Inside Spark's own planner worker (plain PySpark reads) there is no session, and under Spark
Connect no SparkContext: there discovery runs in place.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from typing import Any, Protocol, runtime_checkable

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.conflicts import conflict_error, merge_deferring
from auger.formats.registry import get_format
from auger.scan.spec import FileSplit
from auger.storage.bounded_cache import BoundedCache
from auger.storage.filesystem import install, is_uri, parallel_map, shipped_for
from auger.storage.read_budget import BudgetExceeded, budget
from auger.storage.selection import FileSelection, FileStatus
from auger.types import TupleSchema
from auger.types.schema_text import parse_schema

__all__ = ["clear_cache", "discover_schema", "file_schemas"]

#: Above this many files, discovery runs as a Spark job (when a session is available).
_log = logging.getLogger(__name__)

PARALLEL_FILES = 64
#: The most decompressed bytes a schema discovery reads in the server process: past them (a
#: compressed file whose first records are huge), Spark's tasks discover the schema instead.
DISCOVERY_BYTES = 64 * 1024 * 1024

_CACHE_SIZE = 256
#: table schemas kept as discovery gave them (a copy each time: a caller may add columns), not in
#: their text form, which does not say whether a map may be null; by files, format and options
SCHEMAS: BoundedCache[tuple[Any, ...], TupleSchema] = BoundedCache(
    "discovered table schemas", _CACHE_SIZE
)
#: each file's own schema (as text), for the scan diagnostics; by files, format and options
FILE_SCHEMAS: BoundedCache[tuple[Any, ...], tuple[tuple[str, str], ...]] = BoundedCache(
    "schemas of each file", _CACHE_SIZE
)


@runtime_checkable
class _PerFileSchemas(Protocol):
    """A format whose table schema is its files' own schemas merged in file order; the format
    keeps each file's schema by path, modification time and size (Parquet's footers, which the
    native Parquet reader's check shares)."""

    def file_schema(
        self,
        path: str,
        options: Mapping[str, Any],
        size: int | None = None,
        mtime: float | None = None,
    ) -> TupleSchema: ...

    def merge_file_schemas(self, schemas: Any) -> TupleSchema: ...


# Options that change what discovery finds, and so belong in the cache key.
_SCHEMA_OPTIONS = (
    "store.json.all_text_mode",
    "store.json.read_numbers_as_double",
    "store.json.reader.skip_invalid_records",
    "store.json.reader.allow_escape_any_char",
    "store.parquet.reader.int96_as_timestamp",
    "auger.scan.json_sample_rows",
)


def _key(
    files: Sequence[FileStatus | FileSplit], fmt: FormatConfig, options: Mapping[str, Any]
) -> tuple[Any, ...]:
    return (
        fmt.name,
        fmt.type,
        tuple(sorted((k, repr(v)) for k, v in fmt.options.items())),
        tuple((f.path, f.mtime, f.size) for f in files),
        tuple(options.get(k) for k in _SCHEMA_OPTIONS),
    )


def discover_schema(
    selection: FileSelection, fmt: FormatConfig, options: Mapping[str, Any]
) -> TupleSchema:
    """The table schema of a file selection in one format."""
    key = _key(selection.files, fmt, options)
    hit = SCHEMAS.get(key)
    if hit is not None:
        return hit.copy()
    paths = [f.path for f in selection.files]
    threshold = int(options.get("auger.scan.parallel_discovery_files", PARALLEL_FILES))
    plugin = get_format(fmt.type)
    # a format whose files' schemas are each file's own (Parquet's footers) is read on the
    # driver: a footer is one small read, less than a Spark task costs to start
    many = len(paths) > threshold and not isinstance(plugin, _PerFileSchemas)
    spark = _active_spark() if many else None
    try:
        if spark is not None:
            schema = _discover_in_spark(spark, paths, fmt, options)
        elif isinstance(plugin, _PerFileSchemas):
            if fmt.type == "parquet":
                # loaded for a plan of Parquet files only
                # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
                from auger.formats.parquet_metadata import use_metadata_cache

                # a directory's valid metadata cache gives every footer: none is read
                use_metadata_cache(selection)
            schema = _merge_per_file(plugin, selection.files, options)
        else:
            try:
                with budget(DISCOVERY_BYTES):
                    schema = plugin.discover_schema(paths, fmt, options)
            except BudgetExceeded:
                # compressed files whose sample expands past what the server reads itself
                _log.info("schema discovery passed %s bytes: Spark discovers it", DISCOVERY_BYTES)
                spark = _active_spark()
                if spark is None:  # no Spark to hand it to: read it here after all
                    schema = plugin.discover_schema(paths, fmt, options)
                else:
                    schema = _discover_in_spark(spark, paths, fmt, options)
    except UserError as exc:
        # a file the sample could not read: named with its format, as the scan's errors are
        for line in plugin.error_context(fmt):
            if line not in exc.context:
                exc.add_context(line)
        raise
    SCHEMAS.put(key, schema.copy())
    return schema


def _merge_per_file(
    plugin: _PerFileSchemas,
    files: Sequence[FileStatus | FileSplit],
    options: Mapping[str, Any],
) -> TupleSchema:
    """The merged schema of files each read alone (the ones not cached, in parallel for
    objects), merged in file order, so an error is the one a pass over the files meets first."""

    def in_order() -> Iterator[tuple[str, TupleSchema]]:
        for path, schema in _own_schemas(plugin, files, options):
            if isinstance(schema, UserError):
                raise schema
            yield path, schema

    return plugin.merge_file_schemas(in_order())


def _own_schemas(
    plugin: _PerFileSchemas,
    files: Sequence[FileStatus | FileSplit],
    options: Mapping[str, Any],
) -> Iterator[tuple[str, TupleSchema | UserError]]:
    """Each file's own schema (or the error reading it), in file order: the format keeps them
    by path, size and modification time; the others are read on the driver (objects by several
    threads at once, with the sizes their listing gave, so that no request asks a size first)."""

    def read(f: FileStatus | FileSplit) -> TupleSchema | UserError:
        size = f.file_size if isinstance(f, FileSplit) else f.size
        try:
            return plugin.file_schema(f.path, options, size or None, f.mtime)
        except UserError as exc:
            return exc

    schemas = parallel_map(read, files, force=bool(files) and is_uri(files[0].path))
    for f, schema in zip(files, schemas, strict=True):
        yield f.path, schema


def file_schemas(
    files: Sequence[FileStatus | FileSplit], fmt: FormatConfig, options: Mapping[str, Any]
) -> list[tuple[str, TupleSchema]]:
    """Each file's own schema, in file order: which files have a column, and as what type (for
    the scan diagnostics; the table schema is :func:`discover_schema`'s). Cached as it is;
    a Spark job examines them when they are many."""
    key = _key(files, fmt, options)
    hit = FILE_SCHEMAS.get(key)
    if hit is None:
        paths = [f.path for f in files]
        threshold = int(options.get("auger.scan.parallel_discovery_files", PARALLEL_FILES))
        plugin = get_format(fmt.type)
        spark = _active_spark() if len(paths) > threshold else None
        if isinstance(plugin, _PerFileSchemas):
            # the footers discovery read (and cached) give them; an unreadable one left out
            hit = tuple(
                (path, schema.to_text())
                for path, schema in _own_schemas(plugin, files, options)
                if not isinstance(schema, UserError)
            )
        elif spark is not None:
            hit = tuple(_each_in_spark(spark, paths, fmt, options))
        else:
            try:
                with budget(DISCOVERY_BYTES):
                    hit = tuple(_each_file(paths, fmt, dict(options)))
            except BudgetExceeded:
                spark = _active_spark()
                hit = tuple(
                    _each_file(paths, fmt, dict(options))
                    if spark is None
                    else _each_in_spark(spark, paths, fmt, options)
                )
        FILE_SCHEMAS.put(key, hit)
    return [(path, parse_schema(text)) for path, text in hit]


def _each_file(
    paths: list[str],
    fmt: FormatConfig,
    options: dict[str, Any],
    stores: Sequence[Mapping[str, Any]] = (),
) -> list[tuple[str, str]]:
    """Executor or driver: (path, schema text) of each file; a file whose schema cannot be
    read alone is left out (the scan itself reports it). ``stores``: the object-store settings
    the files need (:func:`auger.storage.filesystem.shipped_for`)."""
    install(stores)
    plugin = get_format(fmt.type)
    out = []
    for path in paths:
        try:
            out.append((path, plugin.discover_schema([path], fmt, options).to_text()))
        except UserError:
            continue
    return out


def _each_in_spark(
    spark: Any, paths: list[str], fmt: FormatConfig, options: Mapping[str, Any]
) -> list[tuple[str, str]]:
    sc = spark.sparkContext
    tasks = max(1, min(len(paths), sc.defaultParallelism * 4))
    opts = dict(options)
    stores = shipped_for(paths)
    try:
        return (
            sc.parallelize(paths, tasks)
            .mapPartitions(lambda it: _each_file(list(it), fmt, opts, stores))
            .collect()
        )
    except Exception:  # diagnostics never fail a query
        return []


def clear_cache() -> None:
    """Forget every cached schema and the Parquet footers kept for discovery (tests; after
    bulk file changes)."""
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    from auger.formats.parquet import clear_footers  # not loaded for a plan of other formats

    SCHEMAS.clear()
    FILE_SCHEMAS.clear()
    clear_footers()


def _active_spark() -> Any:
    """The SparkSession of this process, or None (Spark's planner worker has none)."""
    try:
        # deferred: loads pyspark (heavy)
        from pyspark.sql import SparkSession

        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        from auger.spark.handles import is_connect

        spark = SparkSession.getActiveSession() or SparkSession._instantiatedSession
        # A Spark Connect client has no SparkContext to run the job: discover in place (the
        # files are listed here anyway, so this process can read them).
        if spark is None or is_connect(spark) or spark.sparkContext._jsc is None:
            return None
        return spark
    except Exception:
        return None


def _discover_group(
    paths: list[str],
    fmt: FormatConfig,
    options: dict[str, Any],
    stores: Sequence[Mapping[str, Any]] = (),
) -> list[tuple[str, TupleSchema]]:
    """Executor side: the schema of one group of files, as (first file, schema); the schema
    travels as itself, not as text, which would lose whether a map may be null."""
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    from auger.spark.errors import worker_error

    install(stores)
    if not paths:
        return []
    try:
        schema = get_format(fmt.type).discover_schema(paths, fmt, options)
    except UserError as exc:
        raise worker_error(exc) from None
    return [(paths[0], schema)]


def _discover_in_spark(
    spark: Any, paths: list[str], fmt: FormatConfig, options: Mapping[str, Any]
) -> TupleSchema:
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    from auger.spark.errors import unwrap_spark_error

    sc = spark.sparkContext
    tasks = max(1, min(len(paths), sc.defaultParallelism * 4))
    opts = dict(options)
    stores = shipped_for(paths)
    try:
        parts = (
            sc.parallelize(paths, tasks)
            .mapPartitions(lambda it: _discover_group(list(it), fmt, opts, stores))
            .collect()
        )
    except Exception as exc:
        raise unwrap_spark_error(exc) from None
    if not parts:
        return TupleSchema()
    # the first group's schema as it is: merged into an empty one, every map would count as
    # missing somewhere and so nullable
    schema = parts[0][1]
    for first, part in parts[1:]:
        schema = merge_deferring(schema, part, partial(conflict_error, first))
    return schema
