"""The raw-file cache as a branch of the one scan path: cached files through Spark's Parquet
reader, the others through the scan framework, which writes their entries as it reads.

For a planned text or JSON scan (:mod:`auger.scan.cache` holds the layout and the keys):

* each file whose entry is complete is read from its parts by Spark's vectorized Parquet
  reader, through the very frame builder the native Parquet path uses
  (:func:`auger.spark.native_parquet.parquet_files_frame`): the query's table columns by name
  (a headerless file's ``columns[n]`` from the ``columns`` array), implicit and partition
  columns from the raw file each part stands for, missing columns as the scan's typed nulls;
* the other files (new, changed, or never cached) go to the ``auger`` data source as always,
  its tasks writing their entries from the same batches (:mod:`auger.scan.cache_build`);
* the two frames are one union, in the planned schema.

The branch is taken only where the entry holds every table column the query reads with the
same Drill type, and never for a pushed LIMIT (a few rows: the entry would be cut short);
anything else stays on the data source, unchanged. A scan that only counts rows by weight
(:mod:`auger.sql.planning.row_counts`) reads no column of the entries: Spark's reader counts
their rows from the parts' row groups, each of weight one.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from auger.formats.parquet import planning_footer
from auger.formats.text.positions import compact_name, compact_position
from auger.projection import quoted
from auger.scan.cache import (
    DISK_RESERVE,
    KEPT_POSITIONS,
    REST_COLUMN,
    CachePart,
    cache_enabled,
    cache_location,
    cached_column,
    complete_parts,
    disk_room,
    entry_dir,
    entry_schema,
    max_bytes,
    positional_array,
    table_dir,
    table_key,
    touch,
)
from auger.scan.cache_ascii import ascii_columns
from auger.scan.cache_typed import (
    ASCII_METADATA,
    CAST_TARGETS,
    KEY_KIND,
    KEY_TARGET,
    KEYS_METADATA,
    MEMBERS_METADATA,
    RANGE_METADATA,
    VALUES_METADATA,
    copy_name,
    typed_column,
    typed_copies,
    value_code,
)
from auger.scan.cache_values import FEW_VALUES, few_ranges, few_values
from auger.scan.spec import ColumnSource, FileSplit, ScanSpec
from auger.spark.cache_builds import schedule_build
from auger.spark.datasource_read import datasource_frame
from auger.spark.handles import is_connect
from auger.spark.kept_frames import LISTED_FILE_BYTES, PLAN_FRAME_BYTES
from auger.spark.native_parquet import file_limit, footer_row_count, parquet_files_frame
from auger.spark.object_store import hadoop_reads
from auger.spark.scan_report import TaskFacts, start_report, tasks_report
from auger.storage.filesystem import is_uri, join, parallel_map
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

if TYPE_CHECKING:
    from auger.scan.plan import PlannedScan
    from auger.spark.kept_frames import KeptFrames
    from auger.spark.scan_report import ScanReport

__all__ = ["cached_frame", "unreadable_location"]

_log = logging.getLogger(__name__)


def _reads(planned: PlannedScan) -> dict[str, str] | None:
    """Each table column of the scan → how it is read from an entry; None: not cacheable."""
    spec = planned.spec
    if not spec.cache_columns or spec.limit is not None or spec.format_type == "parquet":
        return None
    if any(f.is_range or f.row_groups is not None for f in spec.files):
        return None
    kept = entry_schema(spec.cache_columns)
    reads: dict[str, str] = {}
    for col in planned.schema:
        if spec.sources.get(col.name, ColumnSource.TABLE) != ColumnSource.TABLE:
            continue
        how = cached_column(col, kept)
        if how is None:
            return None
        reads[col.name] = how
    return reads


def unreadable_location(spark: Any, location: str) -> str | None:
    """Why Spark's Parquet reader cannot read entries at ``location``, or None when it can.

    Entries are read by Spark's own reader only. auger's data source reads an ``s3a://``
    workspace through pyarrow, but Spark reads ``s3a://`` objects only with Hadoop's S3A
    connector on its classpath; without it, entries there would be written and never read."""
    if hadoop_reads(spark, [join(location, "entry.parquet")]):
        return None
    return (
        f"The raw-file cache at {location} was not used: Spark's Parquet reader cannot read "
        "it (s3a:// objects need Hadoop's S3A connector, hadoop-aws, on Spark's classpath). "
        "Add hadoop-aws to Spark (spark.jars.packages) or set auger.cache.location to a "
        "directory Spark can read"
    )


def _key(spec: ScanSpec) -> str:
    return table_key(
        spec.format_type,
        spec.format_name,
        spec.format_options,
        spec.options,
        spec.reader_schema,
        spec.plugin,
        spec.cache_columns,
    )


def cached_frame(
    spark: Any,
    planned: PlannedScan,
    options: Mapping[str, Any],
    reports: list[ScanReport] | None = None,
    typed: dict[tuple[str, str], str] | None = None,
    note: Callable[[str], None] | None = None,
    build: bool = True,
    kept: KeptFrames | None = None,
) -> Any:
    """The scan's frame with the raw-file cache, or None (the cache does not apply); its
    reports go to ``reports``, and ``note`` hears why a cache that is on cannot be used.
    ``build``: the query runs now, and the entries of the files it parses are built after its
    answer (not for a query only explained, or planned for a CTAS or a catalog command).
    ``kept``: the engine's kept frames, where the frame over the entries is kept for the next
    statement over the same parts (None: built anew).

    ``typed``: when given, the frame also delivers, after the planned columns, ``CAST(<column>
    AS <target>)`` of each string column that the cached files' typed copies answer
    (:mod:`auger.scan.cache_typed`), and this names each such frame column by (column, target).
    The files parsed beside them give the same column as Spark's cast of the strings.
    """
    if not cache_enabled(options):
        return None
    reads = _reads(planned)
    if reads is None:
        return None

    spec = planned.spec
    location = cache_location(options)
    if (why := unreadable_location(spark, location)) is not None:
        if note is not None:
            note(why)
        return None  # entries nobody could read would only cost their writes
    if len(spec.files) > file_limit(spark, local=not is_uri(location)):
        return None  # more entries than Spark's reader is handed without a listing job
    table = table_dir(location, _key(spec))
    entries = [entry_dir(table, f) for f in spec.files]
    found = list(
        parallel_map(
            lambda i: complete_parts(entries[i], spec.files[i].size),
            range(len(spec.files)),
            force=is_uri(table),
        )
    )
    hits = [(f, parts) for f, parts in zip(spec.files, found, strict=True) if parts]
    misses = tuple(f for f, parts in zip(spec.files, found, strict=True) if not parts)
    frames = []
    casts: dict[tuple[str, str], str] = {}
    if hits:
        read = _entries_read(spark, planned, reads, hits, typed is not None, not misses, kept)
        if read is None:
            return None  # the entries cannot give the planned types: the data source reads
        frame, facts = read
        casts.update(facts.casts)
        report = start_report(spark, spec, reports, on_driver=True)
        if report is not None:
            report.from_cache += len(hits)
            # the files and rows read, unless the files parsed beside them cannot say theirs
            # (a partial figure would be wrong rather than unknown)
            if not misses or tasks_report(spark):
                report.add_local(facts.task)
        for f, parts in zip(spec.files, found, strict=True):
            if parts:
                touch(entry_dir(table, f))
        frames.append(frame)
    if misses:
        # read as with the cache off; the entries are written after the answer
        parsed = datasource_frame(
            spark, replace(planned, spec=replace(spec, files=misses)), reports
        )
        if casts:  # the same columns as the entries give, by Spark's own cast of the strings
            parsed = parsed.selectExpr(
                *(quoted(n) for n in planned.schema.names()),
                *(
                    f"CAST({quoted(column)} AS {target}) AS {quoted(name)}"
                    for (column, target), name in casts.items()
                ),
            )
        frames.append(parsed)
        if build:
            _build_after(spark, planned, table, misses, location, max_bytes(options), note)
    if typed is not None:
        typed.update(casts)
    out = frames[0]
    for other in frames[1:]:
        out = out.union(other)
    return out


def _build_after(
    spark: Any,
    planned: PlannedScan,
    table: str,
    misses: Sequence[FileSplit],
    location: str,
    limit: int,
    note: Callable[[str], None] | None,
) -> None:
    """The entries of ``misses`` built after the answer, unless their files hold more bytes
    than a local cache may (``limit``: their entries would push out every other one, and the
    cache past its bound) or than its disk has room for (:func:`disk_room`)."""
    raw = sum(f.size for f in misses)
    if is_uri(location):
        why = None
    elif raw > limit:
        why = f"more than auger.cache.max_bytes ({limit}). Raise auger.cache.max_bytes to keep them"
    elif raw > (room := disk_room(location) or 0):
        why = (
            f"more than the disk of {location} has room for ({room} bytes: the cache leaves a "
            f"tenth of the free space, and at least {DISK_RESERVE // 1024**2} MiB, free). Free "
            "space there, or set auger.cache.location to a larger disk"
        )
    else:
        why = None
    if why is None:
        schedule_build(spark, planned, table, misses, location, limit)
    elif note is not None:
        note(
            f"The raw-file cache keeps no entries for {planned.spec.table or 'the table'}: its "
            f"{len(misses)} file(s) not cached yet hold {raw} bytes, {why}"
        )


@dataclass(frozen=True)
class _EntriesFacts:
    """What a frame over entries comes with: the casts it delivers, by (column, target) (see
    :func:`_entries_frame`), and what its read gives the statement's scan report."""

    casts: Mapping[tuple[str, str], str]
    task: TaskFacts


def _entries_read(
    spark: Any,
    planned: PlannedScan,
    reads: Mapping[str, str],
    hits: Sequence[tuple[FileSplit, list[CachePart]]],
    typed: bool,
    whole: bool,
    kept: KeptFrames | None,
) -> tuple[Any, _EntriesFacts] | None:
    """The frame over the hit files' parts (:func:`_entries_frame`, with the casts when
    ``typed``) and its facts; None when the entries cannot give the planned types.

    Kept in ``kept`` for the next statement over the same parts: a part is never written
    again once published (a changed file has another entry), so the same parts, planned the
    same way, give the same frame, and a repeated query saves building it (reading the
    Parquet files' schema, the projections, the metadata: a third of a warm cached query's
    planning) and has its temporary view. An entry evicted since is not found by the lookup
    that gives the parts, and so is never read through a kept frame."""
    key = _entries_key(planned, hits, typed, whole)
    if kept is not None and (found := kept.get(spark, key)) is not None:
        return found
    casts: dict[tuple[str, str], str] = {}
    frame = _entries_frame(spark, planned, reads, hits, casts if typed else None, whole)
    if frame is None:
        return None
    parts = [FileSplit(p.path, p.size, p.mtime) for _, ps in hits for p in ps]
    paths = tuple(dict.fromkeys(f.path for f, _ in hits))
    facts = _EntriesFacts(casts, TaskFacts(paths, _rows(parts)))
    if kept is not None:
        size = PLAN_FRAME_BYTES + LISTED_FILE_BYTES * len(parts)
        kept.put(spark, key, frame, facts, size, view=not is_connect(spark))
    return frame, facts


def _entries_key(
    planned: PlannedScan,
    hits: Sequence[tuple[FileSplit, list[CachePart]]],
    typed: bool,
    whole: bool,
) -> str:
    """What a kept frame over entries is found by: how the scan is planned (its spec without
    the files, its schema), whether it delivers casts and covers all the scan's files, and
    each hit file with its parts (paths, sizes, modification times)."""
    spec = planned.spec
    files = [
        "\0".join(
            [f.path, str(f.size), repr(f.mtime), *(f"{p.path}\0{p.size}\0{p.mtime!r}" for p in ps)]
        )
        for f, ps in hits
    ]
    head = ["raw-file cache entries", f"typed={typed} whole={whole}", planned.schema.to_text()]
    return "\n".join([*head, replace(spec, files=()).to_json(), *files])


def _entries_frame(
    spark: Any,
    planned: PlannedScan,
    reads: Mapping[str, str],
    hits: Sequence[tuple[FileSplit, list[CachePart]]],
    casts: dict[tuple[str, str], str] | None = None,
    whole: bool = False,
) -> Any:
    """Spark's Parquet reader over the hit files' parts, delivering ``planned.schema``, then
    the casts the parts' typed copies answer (when ``casts`` is given, which names them).

    ``whole``: these are all the scan's files, so an integer cast's column carries the range
    of the copies' values as its metadata (:data:`auger.scan.cache_typed.RANGE_METADATA`), as
    does an integer column, or a map's integer member, the parts give the range of (by
    :data:`auger.scan.cache_typed.MEMBERS_METADATA`), a string column the parts list the
    values of how many it holds (:data:`auger.scan.cache_typed.VALUES_METADATA`), a string
    column every part lists as ASCII says so (:data:`auger.scan.cache_typed.ASCII_METADATA`),
    and the frame also delivers the codes of each string column every part has a ``key`` copy
    of, named in ``casts`` by (column, :data:`auger.scan.cache_typed.KEY_TARGET`), with each
    value and its code as metadata (:data:`auger.scan.cache_typed.KEYS_METADATA`)."""

    spec = planned.spec
    positional = positional_array(entry_schema(spec.cache_columns))
    schema = TupleSchema()
    sources: dict[str, str] = {}
    selects: list[str] = []

    def read(name: str, mode: DataMode = DataMode.OPTIONAL) -> str:
        """An entry column of a headerless file's array, read once."""
        if name not in schema:
            schema.add(ColumnMetadata(name, MinorType.VARCHAR, mode))
            sources[name] = ColumnSource.TABLE
        return quoted(name)

    for col in planned.schema:
        source = spec.sources.get(col.name, ColumnSource.TABLE)
        how = reads.get(col.name, col.name)
        if source == ColumnSource.TABLE and positional and col.name == "columns":
            # the whole array: its kept positions up to the row's end, then the rest
            fields = ", ".join(read(compact_name(n)) for n in range(KEPT_POSITIONS))
            rest = read(REST_COLUMN, DataMode.REPEATED)
            selects.append(
                f"concat(filter(array({fields}), x -> x IS NOT NULL), {rest}) AS `columns`"
            )
            continue
        if source == ColumnSource.TABLE and how != col.name:
            # columns[n]: its own column of the entry, or an element of the rest
            position = _position(how)
            if position < KEPT_POSITIONS:
                value = read(compact_name(position))
            else:
                value = f"get({read(REST_COLUMN, DataMode.REPEATED)}, {position - KEPT_POSITIONS})"
            selects.append(f"{value} AS {quoted(col.name)}")
            continue
        if source == ColumnSource.ROWS:  # a counted row: the entries hold one row a row
            selects.append(f"CAST(1 AS BIGINT) AS {quoted(col.name)}")
            continue
        schema.add(col)
        sources[col.name] = source
        selects.append(quoted(col.name))
    projection = tuple(
        p for p in spec.projection if compact_position(p.strip("`")) is None and p != "columns"
    )
    files: list[FileSplit] = []
    origins: list[FileSplit] = []
    for split, parts in hits:
        for part in parts:
            files.append(FileSplit(part.path, part.size, part.mtime))
            origins.append(split)
    told: dict[str, dict[str, Any]] = {}  # frame column -> its metadata
    if casts is not None:
        notes = _footer_notes(files) if files else None
        stored = _stored_strings(planned, reads)
        answered = (
            _answered_casts(planned, reads, files, notes, stored) if notes is not None else {}
        )
        # (column, target) -> the copy read, the frame column's value, its metadata
        delivered: dict[tuple[str, str], tuple[ColumnMetadata, str, dict[str, Any]]] = {
            key: (copy, value, {RANGE_METADATA: list(bounds)} if whole and bounds else {})
            for key, (copy, value, bounds) in answered.items()
        }
        if whole and notes is not None:
            values = _listed_values(stored, notes)
            for facts in (
                _integer_ranges(planned, reads, notes),
                {column: {VALUES_METADATA: len(v)} for column, v in values.items()},
                _ascii_strings(stored, notes),
            ):
                for column, meta in facts.items():
                    told.setdefault(column, {}).update(meta)
            # a string column of few values: what a GROUP BY of it groups by
            for column, (copy, codes) in _answered_keys(stored, notes, values).items():
                keys = {KEYS_METADATA: json.dumps(sorted(codes.items()))}
                delivered[(column, KEY_TARGET)] = (copy, quoted(copy.name), keys)
        for (column, target), (copy, value, meta) in delivered.items():
            if copy.name not in schema:
                schema.add(copy)
                sources[copy.name] = ColumnSource.TABLE
            name = typed_column(column, target)
            casts[(column, target)] = name
            selects.append(f"{value} AS {quoted(name)}")
            if meta:
                told[name] = meta
    parquet = replace(
        spec,
        format_name="parquet",
        format_type="parquet",
        format_options={},
        files=tuple(files),
        output_schema=schema.to_text(),
        sources=sources,
        projection=tuple(dict.fromkeys(projection)),
        reader_schema="",
        cache_columns="",
        cache_build="",
    )
    local = not is_uri(files[0].path) if files else True
    frame = parquet_files_frame(
        spark, replace(planned, spec=parquet, schema=schema), origins, local
    )
    if frame is None:
        return None
    if selects != [quoted(n) for n in schema.names()]:
        frame = frame.selectExpr(*selects)
    return _with_metadata(frame, told) if told else frame


def _with_metadata(frame: Any, told: Mapping[str, Mapping[str, Any]]) -> Any:
    """``frame`` with metadata on the columns ``told`` names (by their names as they are:
    ``withMetadata`` would read ``a.b`` as a member of ``a``).

    One ``DataFrame.to`` of the frame's own schema with that metadata: a select aliasing each
    column took four times as long to plan (6 ms against 1.4 ms for three columns), every query
    from the cache. But ``to`` rebuilds every struct column, member by member, even one whose
    type it leaves as it is, and Spark then writes the struct the frame's projection built into
    each member of that rebuild: a struct nested as deep as JSON's reader allows (63 levels) made
    code whose compilation took the driver's whole heap (``OutOfMemoryError`` after 80 s). A
    frame with a struct anywhere in its columns is therefore given its metadata by one select,
    the told columns aliased with theirs and the others as they are."""
    # deferred: loads pyspark (heavy)
    from pyspark.sql import types as T

    fields = [
        T.StructField(f.name, f.dataType, f.nullable, {**f.metadata, **told[f.name]})
        if f.name in told
        else f
        for f in frame.schema.fields
    ]
    if not any(_holds_struct(f.dataType) for f in frame.schema.fields):
        return frame.to(T.StructType(fields))
    # deferred: loads pyspark (heavy)
    from pyspark.sql import functions as F

    return frame.select(
        *(
            F.col(quoted(f.name)).alias(f.name, metadata=f.metadata)
            if f.name in told
            else F.col(quoted(f.name))
            for f in fields
        )
    )


def _holds_struct(t: Any) -> bool:
    """Whether a struct is in the type, at any depth (in arrays and maps too)."""
    # deferred: loads pyspark (heavy)
    from pyspark.sql import types as T

    if isinstance(t, T.StructType):
        return True
    if isinstance(t, T.ArrayType):
        return _holds_struct(t.elementType)
    if isinstance(t, T.MapType):
        return _holds_struct(t.keyType) or _holds_struct(t.valueType)
    return False


def _stored_strings(planned: PlannedScan, reads: Mapping[str, str]) -> dict[str, str]:
    """Each planned string column → the parts' column holding it (a headerless file's
    ``columns[n]``: its own column of the parts below :data:`KEPT_POSITIONS`)."""
    spec = planned.spec
    stored: dict[str, str] = {}
    for col in planned.schema:
        if (
            spec.sources.get(col.name, ColumnSource.TABLE) != ColumnSource.TABLE
            or col.type is not MinorType.VARCHAR
            or col.mode is DataMode.REPEATED
        ):
            continue
        how = reads.get(col.name, col.name)
        if how == col.name:
            stored[col.name] = col.name
        else:
            position = _position(how)
            if position < KEPT_POSITIONS:
                stored[col.name] = compact_name(position)
    return stored


def _footer_notes(files: Sequence[FileSplit]) -> list[Mapping[str, str]] | None:
    """Each part's footer metadata (the footers planning keeps, which the frame builder reads
    too; objects' in parallel), or None where one cannot be read."""
    try:
        return list(
            parallel_map(
                lambda f: planning_footer(f.path, f.file_size, f.mtime).key_values,
                files,
                force=is_uri(files[0].path),
            )
        )
    except (OSError, pa.ArrowException) as exc:
        _log.debug("parts' footer metadata not read: %s", exc)
        return None


def _answered_casts(
    planned: PlannedScan,
    reads: Mapping[str, str],
    files: Sequence[FileSplit],
    notes: Sequence[Mapping[str, str]] | None = None,
    stored: Mapping[str, str] | None = None,
) -> dict[tuple[str, str], tuple[ColumnMetadata, str, tuple[int, int] | None]]:
    """(column, target) → (the typed copy read, the value of the cast, the range of its values
    for an integer target, when every part's footer gives it) for each cast of a string column
    to a number or a date that every part's typed copy answers (none where a footer cannot be
    read: the frame builder then declines the parts). ``notes``: the parts' footer metadata,
    read here if not given; ``stored``: :func:`_stored_strings`, worked out if not given."""
    if stored is None:
        stored = _stored_strings(planned, reads)
    if not stored or not files:
        return {}
    if notes is None and (notes := _footer_notes(files)) is None:
        return {}
    copies = [typed_copies(kv) for kv in notes]
    out: dict[tuple[str, str], tuple[ColumnMetadata, str, tuple[int, int] | None]] = {}
    for column, held in stored.items():
        found = [c.get(held) for c in copies]
        kinds = {c.kind for c in found if c is not None}
        if None in found or len(kinds) != 1:
            continue  # a part without a valid copy, or parts with copies of different kinds
        kind = kinds.pop()
        if kind not in _COPY_TYPES:
            continue  # a key copy answers no cast (see _answered_keys)
        copy = ColumnMetadata(copy_name(held, kind), _COPY_TYPES[kind], DataMode.OPTIONAL)
        lows = [c.low for c in found if c is not None and c.low is not None]
        highs = [c.high for c in found if c is not None and c.high is not None]
        known = len(lows) == len(highs) == len(found)
        for target in CAST_TARGETS:
            if all(c is not None and c.answers(target) for c in found):
                value = quoted(copy.name)
                if target != kind.upper():
                    value = f"CAST({value} AS {target})"
                bounds = (min(lows), max(highs)) if known and target in _INTEGERS else None
                out[(column, target)] = (copy, value, bounds)
    return out


def _answered_keys(
    stored: Mapping[str, str],
    notes: Sequence[Mapping[str, str]],
    values: Mapping[str, frozenset[str]],
) -> dict[str, tuple[ColumnMetadata, dict[int, str]]]:
    """Each planned string column (``stored``: :func:`_stored_strings`) every part has a valid
    ``key`` copy of (:mod:`auger.scan.cache_typed`), and whose values the parts list
    (``values``: :func:`_listed_values`) → the copy read, and each value of the column by its
    code; none where two of the values share a code, or where they are more than
    :data:`FEW_VALUES` in all."""
    copies = [typed_copies(kv) for kv in notes]
    out: dict[str, tuple[ColumnMetadata, dict[int, str]]] = {}
    for column, held in stored.items():
        if column not in values or not all(
            (c := part.get(held)) is not None and c.kind == KEY_KIND for part in copies
        ):
            continue
        codes = {value_code(v): v for v in values[column]}
        if len(values[column]) > FEW_VALUES or len(codes) != len(values[column]):
            continue
        copy = ColumnMetadata(copy_name(held, KEY_KIND), MinorType.BIGINT, DataMode.OPTIONAL)
        out[column] = (copy, codes)
    return out


def _listed_values(
    stored: Mapping[str, str], notes: Sequence[Mapping[str, str]]
) -> dict[str, frozenset[str]]:
    """Each planned string column (``stored``: :func:`_stored_strings`) every part lists the
    values of (:mod:`auger.scan.cache_values`) → its distinct values in them all: how many
    the frame's metadata says (:data:`VALUES_METADATA`), the codes' lookup their strings."""
    listed = [few_values(kv) for kv in notes]
    out: dict[str, frozenset[str]] = {}
    for column, held in stored.items():
        found = [values.get(held) for values in listed]
        if found and all(v is not None for v in found):
            out[column] = frozenset().union(*(v for v in found if v is not None))
    return out


def _ascii_strings(
    stored: Mapping[str, str], notes: Sequence[Mapping[str, str]]
) -> dict[str, dict[str, Any]]:
    """Each planned string column (``stored``: :func:`_stored_strings`) every part lists as
    ASCII text alone (:mod:`auger.scan.cache_ascii`) → its frame metadata
    (:data:`ASCII_METADATA`)."""
    listed = [ascii_columns(kv) for kv in notes]
    return {
        column: {ASCII_METADATA: True}
        for column, held in stored.items()
        if listed and all(held in names for names in listed)
    }


def _integer_ranges(
    planned: PlannedScan, reads: Mapping[str, str], notes: Sequence[Mapping[str, str]]
) -> dict[str, dict[str, Any]]:
    """Each planned column that is, or holds in its maps, an integer every part gives the
    range of (:mod:`auger.scan.cache_values`) → its frame metadata: the range over all parts
    (:data:`RANGE_METADATA`), on a map's members by :data:`MEMBERS_METADATA`."""
    listed = [few_ranges(kv) for kv in notes]
    if not listed or not all(listed):
        return {}
    columns = {
        col.name.lower(): col.name
        for col in planned.schema
        if planned.spec.sources.get(col.name, ColumnSource.TABLE) == ColumnSource.TABLE
        and reads.get(col.name, col.name) == col.name
    }
    told: dict[str, dict[str, Any]] = {}
    for path in listed[0]:
        name = columns.get(path[0].lower())
        found = [ranges.get(path) for ranges in listed]
        if name is None or any(bounds is None for bounds in found):
            continue
        known = [bounds for bounds in found if bounds is not None]
        meta = told.setdefault(name, {})
        for member in path[1:]:
            meta = meta.setdefault(MEMBERS_METADATA, {}).setdefault(member, {})
        meta[RANGE_METADATA] = [min(b[0] for b in known), max(b[1] for b in known)]
    return told


#: The cast targets whose values are the copies' integers themselves.
_INTEGERS = ("BIGINT", "INT")


#: The Drill type a typed copy of each kind is read as.
_COPY_TYPES = {"bigint": MinorType.BIGINT, "double": MinorType.FLOAT8, "date": MinorType.DATE}


def _position(how: str) -> int:
    """n of ``columns[n]``, as :func:`auger.scan.cache.cached_column` says how to read it."""
    return int(how.split("[", 1)[1].rstrip("]"))


def _rows(files: Sequence[FileSplit]) -> int:
    """Rows the parts hold (their footers, which the frame builder has read already)."""

    try:
        return footer_row_count(files)
    except Exception:
        return 0
