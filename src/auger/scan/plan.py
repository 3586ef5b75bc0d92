"""Scan planning: what one file scan reads and delivers, for SQL and plain PySpark alike.

SQL's planner (a table of a workspace) and ``spark.read.format("auger")`` (a path and reader
options) both plan their scans here, in two steps:

1. :func:`discover_table`: the files of the table's one format (a directory of two known formats
   is a VALIDATION error), the provided schema (``.drill.schema``, or one given inline) with its
   text properties, and the table schema: discovered from the files, or the provided one first
   (its types win) with, unless it is strict, the data's other columns after it;
2. :func:`plan_scan`: the columns the query's projection asks of that table, as Drill delivers
   them: table columns (a type conflict refused only in what the query reads), implicit columns
   (``filename``, ``fqn``... under their session labels), partition columns (``dir0``... and
   hive-style ``key=value`` directories), and columns the files lack as typed nulls (text:
   blanks). The result is the :class:`~auger.scan.spec.ScanSpec` every executor conforms to.

Discovery itself is passed in (``discover``): on the driver of a Spark application it may run
as a Spark job, which this layer knows nothing of.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.conflicts import check_read
from auger.formats.registry import shipped_plugin
from auger.projection import (
    RequestedTuple,
    is_consistent,
    path_segment,
    quoted,
    split_root,
)
from auger.scan.cache import cache_enabled
from auger.scan.conflicts import ErrorContext
from auger.scan.implicit import (
    ImplicitKind,
    ImplicitMarker,
    ImplicitOptions,
    resolve_implicit_columns,
)
from auger.scan.members import type_untyped_columns
from auger.scan.missing import resolve_missing_types
from auger.scan.provided import absent_sensitive, text_scan_column
from auger.scan.single_format import single_format
from auger.scan.spec import ColumnSource, FileSplit, ScanSpec
from auger.scan.text_rules import (
    check_text_projection,
    null_type,
    positional_schema,
    with_table_properties,
)
from auger.scan.tracker import ScanSchemaTracker
from auger.storage import filesystem as fs
from auger.storage.schema_file import SchemaFile, read_schema_file, schema_file_path
from auger.storage.selection import FileSelection
from auger.types import ColumnMetadata, MinorType, TupleSchema

__all__ = [
    "ROW_COUNT_COLUMN",
    "Discover",
    "PlannedScan",
    "Requested",
    "ScanTable",
    "apply_provided_schema",
    "discover_table",
    "implicit_labels",
    "partition_label",
    "partition_source",
    "plan_scan",
    "provided_schema",
]

#: The column a scan delivers when the query needs none of the table's, only its rows.
ROW_COUNT_COLUMN = "__auger_row"

#: Implicit column source → (the session option naming its label, the label by default).
IMPLICIT_OPTIONS: Mapping[str, tuple[str, str]] = {
    ColumnSource.FQN: ("drill.exec.storage.implicit.fqn.column.label", "fqn"),
    ColumnSource.FILEPATH: ("drill.exec.storage.implicit.filepath.column.label", "filepath"),
    ColumnSource.FILENAME: ("drill.exec.storage.implicit.filename.column.label", "filename"),
    ColumnSource.SUFFIX: ("drill.exec.storage.implicit.suffix.column.label", "suffix"),
    ColumnSource.LMT: ("drill.exec.storage.implicit.last_modified_time.column.label", "lmt"),
}

_PARTITION_OPTION = "drill.exec.storage.file.partition.column.label"

#: Options that executors honour, copied into every scan spec.
_SCAN_OPTION_PREFIXES = (
    "store.json.",
    "store.parquet.reader.",
    "auger.scan.",
    "drill.exec.functions.",
)

#: Tells a table's files' schema: (files, format, session options) → table columns.
Discover = Callable[[FileSelection, FormatConfig, Mapping[str, Any]], TupleSchema]


@dataclass
class Requested:
    """What the query asks of one table: ``*``, root columns, and the paths used of them."""

    star: bool = False
    columns: dict[str, str] = field(default_factory=dict)  # lower root -> first spelling
    paths: dict[str, str] = field(default_factory=dict)  # lower path -> first spelling

    def add(self, name: str, path: str | None = None) -> None:
        """Record the column ``name`` and the path the query uses of it (the column whole when
        None or ``name`` itself); a name holding a dot is back-quoted in a member's path."""
        self.columns.setdefault(name.lower(), name)
        p = path_segment(name) if path is None or path == name else path
        self.paths.setdefault(p.lower(), p)

    def uses_whole(self, lower_name: str) -> bool:
        """Whether the query uses the column (lower-cased name) whole, not only its members."""
        return path_segment(lower_name) in self.paths

    def projection(self) -> tuple[str, ...]:
        """Paths for the scan: a root used whole wins over its member paths."""
        if self.star:
            return ("*",)
        out = []
        for lower, path in self.paths.items():
            root, rest = split_root(lower)
            if rest and self.uses_whole(root):
                continue
            out.append(path)
        return tuple(out)


@dataclass(frozen=True)
class PlannedScan:
    spec: ScanSpec
    schema: TupleSchema
    #: select expressions Spark applies over the scan (None: the scan's columns as they are)
    selects: tuple[str, ...] | None = None
    #: columns the query names that no file of the table has (delivered as typed nulls)
    missing: tuple[str, ...] = ()


def implicit_labels(options: Mapping[str, Any]) -> dict[str, str]:
    """Implicit column label (lower-cased) → column source tag, honouring relabelling options."""
    return {
        str(options.get(opt, default)).lower(): src
        for src, (opt, default) in IMPLICIT_OPTIONS.items()
    }


def partition_label(options: Mapping[str, Any]) -> str:
    """The partition column label (``dir`` unless relabelled): ``dir0``, ``dir1``..."""
    return str(options.get(_PARTITION_OPTION, "dir"))


def partition_source(name: str, dir_label: str) -> str | None:
    """The source tag (``dir2``) of a partition column name (``dir2`` under label ``dir``)."""
    m = re.fullmatch(rf"{re.escape(dir_label.lower())}(\d+)", name.lower())
    return f"dir{m.group(1)}" if m else None


@dataclass(frozen=True)
class ScanTable:
    """A file table before its projection is known: files, format and table schema."""

    selection: FileSelection
    fmt: FormatConfig
    schema: TupleSchema  # discovered (or provided) table columns
    absent: frozenset[str]  # lower names of provided columns no file has
    hive: Mapping[str, str]  # lower key -> key, for key=value directories
    provided: SchemaFile | None = None
    #: the table's name in scan specs (and so in reader errors)
    name: str = ""
    #: where the table is: its path, directory or glob (in errors)
    location: str = ""
    #: the table as the user named it (``dfs.data.sales``), in messages
    label: str = ""


def discover_table(
    selection: FileSelection,
    fmt: FormatConfig,
    options: Mapping[str, Any],
    discover: Discover,
    format_for: Callable[[str], FormatConfig | None] | None,
    name: str,
    location: str,
    provided: SchemaFile | None = None,
    label: str | None = None,
    table_for: Callable[[str], str | None] | None = None,
) -> ScanTable:
    """The table ``selection`` holds, read as ``fmt``.

    ``format_for`` tells a file's format by its name: the files of ``fmt`` are kept (files of no
    known format passed over) and a second known format is a VALIDATION error. None reads
    every file as ``fmt`` (a format the query names for the table). ``provided`` is a schema
    given with the query, else the table's ``.drill.schema`` is looked for; ``label`` names
    the table in messages (its location by default); ``table_for`` writes a glob below the
    location as the user would name it, for the fix of a directory of several formats.
    """
    if format_for is not None:
        files = single_format(selection.files, format_for, fmt.name, location, table_for)
        selection = FileSelection(selection.root, tuple(files), selection.is_directory)
    provided = provided or provided_schema(selection, options)
    fmt = with_table_properties(fmt, provided)
    absent: set[str] = set()
    positional = positional_schema(fmt, provided, options)
    if positional is not None:
        table_schema = positional
    elif selection.files:
        table_schema = discover(selection, fmt, options)
    else:
        table_schema = TupleSchema()
    if provided is not None and positional is None:
        absent = {c.name.lower() for c in provided.schema if c.name not in table_schema}
        table_schema = apply_provided_schema(table_schema, provided)
    hive = {k.lower(): k for k in selection.hive_keys()}
    return ScanTable(
        selection,
        fmt,
        table_schema,
        frozenset(absent),
        hive,
        provided,
        name,
        location,
        label or location,
    )


def _uses_members(requested: Requested) -> bool:
    """Whether the query uses any column as a map or an array (``a.b``, ``a[0]``)."""
    return any(split_root(p)[1] for p in requested.paths)


def _table_projection(
    table_schema: TupleSchema,
    requested: Requested,
    special: Callable[[str], bool],
    allow_missing: bool,
    never_missing: set[str] | frozenset[str],
    check_types: bool,
) -> list[str]:
    """The project list the tracker resolves: the query's paths, less what this table cannot
    deliver.

    Under ``*`` the wildcard brings every table column whole, so only names beside it that the
    table lacks are listed (implicit, partition, or missing columns used whole; a missing
    column used only through members is the query's NULL). A name the table lacks is listed
    only if ``allow_missing`` and the query does not define it itself. Unless ``check_types``
    (the request was resolved to this table), a path the column's type cannot meet (``a[0]``
    on a scalar) asks for the column whole instead, for the query to judge.
    """

    def deliverable(lname: str) -> bool:
        return (
            special(lname)
            or lname in table_schema
            or (allow_missing and lname not in never_missing)
        )

    if requested.star:
        out = ["*"]
        for lname, name in requested.columns.items():
            if requested.uses_whole(lname) and lname not in table_schema and deliverable(lname):
                out.append(quoted(name))
        return out
    paths: list[tuple[str, str]] = []  # (lower root, the path for the tracker)
    for path in requested.projection():
        name, rest = split_root(path)
        if deliverable(name.lower()):
            paths.append((name.lower(), quoted(name) + rest))
    if not check_types:
        parsed = RequestedTuple.parse(p for _, p in paths)
        loose = {
            proj.name.lower()
            for proj in parsed
            if (col := table_schema.column(proj.name)) is not None and not is_consistent(proj, col)
        }
        whole = {root: quoted(requested.columns.get(root, root)) for root in loose}
        paths = [(root, whole.get(root, p)) for root, p in paths]
    return list(dict.fromkeys(p for _, p in paths))


def _in_file_order(col: ColumnMetadata, table_col: ColumnMetadata) -> ColumnMetadata:
    """``col`` with its map members in the files' order (the tracker lists the members a
    query reads in the query's order), members no file has last: readers, and Spark's own
    Parquet reader, deliver a map's members as the files hold them."""
    if not col.is_map or not table_col.is_map or not col.children:
        return col
    mine = {c.name.lower(): c for c in col.children}
    ordered = []
    for member in table_col.children or ():
        got = mine.pop(member.name.lower(), None)
        if got is not None:
            ordered.append(_in_file_order(got, member))
    ordered.extend(mine.values())
    return col.with_children(ordered)


#: The source tag of each implicit file column kind in a scan spec.
_KIND_SOURCES: Mapping[ImplicitKind, str] = {
    ImplicitKind.FQN: ColumnSource.FQN,
    ImplicitKind.FILEPATH: ColumnSource.FILEPATH,
    ImplicitKind.FILENAME: ColumnSource.FILENAME,
    ImplicitKind.SUFFIX: ColumnSource.SUFFIX,
    ImplicitKind.LMT: ColumnSource.LMT,
}


def _implicit_options(
    options: Mapping[str, Any],
    selection: FileSelection,
    hive: Mapping[str, str],
    table_schema: TupleSchema,
) -> ImplicitOptions:
    """The implicit columns a planned scan offers: the file columns under their session labels,
    ``dirN`` to the selection's depth, and ``key=value`` keys no table column shadows."""
    given = ImplicitOptions.from_options(
        options,
        max_partition_depth=selection.max_depth,
        partition_keys=[k for lk, k in hive.items() if lk not in table_schema],
    )
    labels = {
        kind: (label if kind in _KIND_SOURCES else "") for kind, label in given.labels.items()
    }
    return replace(given, labels=labels)


def _source_tag(marker: ImplicitMarker) -> str:
    """The scan spec's source tag of an implicit column (``filename``, ``dir0``, ``key:k``)."""
    if marker.kind is ImplicitKind.PARTITION:
        return f"dir{marker.index}"
    if marker.kind is ImplicitKind.PARTITION_KEY:
        return f"key:{marker.key}"
    return _KIND_SOURCES[marker.kind]


def _partitions_first(out: TupleSchema, sources: Mapping[str, str]) -> TupleSchema:
    """Drill's Parquet wildcard: the partition columns first, then the data's."""

    def partition(col: ColumnMetadata) -> bool:
        source = sources[col.name]
        return ColumnSource.is_partition(source) or ColumnSource.is_hive_key(source)

    return TupleSchema([*(c for c in out if partition(c)), *(c for c in out if not partition(c))])


def plan_scan(
    found: ScanTable,
    requested: Requested,
    options: Mapping[str, Any],
    allow_missing: bool = True,
    limit: int | None = None,
    never_missing: set[str] | frozenset[str] = frozenset(),
    check_types: bool = False,
    cache: bool = True,
    values_read: bool = True,
) -> PlannedScan:
    """The scan spec of a discovered table for what the query requests of it.

    The output columns are the :class:`~auger.scan.tracker.ScanSchemaTracker`'s: it resolves the
    query's projection against the provided schema and the discovered table schema (given as
    the reader's early schema), implicit and partition columns are marked by
    :func:`~auger.scan.implicit.resolve_implicit_columns`, and the columns no file has are
    typed by :func:`~auger.scan.missing.resolve_missing_types` (the format's null type: text
    fills blanks, other formats Drill's nullable INT).

    ``allow_missing``: a named column the table lacks is a typed null (unless it is one of
    ``never_missing``, names the query defines itself); otherwise it is left out.
    ``check_types``: the request is exact (the query's columns were resolved to this table),
    so a column used against its type (``a[0]`` on a scalar) is refused as Drill does.
    ``cache``: note the columns the raw-file cache keeps of the table's files, when the
    session uses the cache (:func:`_cache_columns`).
    ``values_read``: False when the plan is for its schema alone (``DESCRIBE``): no value is
    read, so a conflict discovery deferred is not met (:func:`auger.formats.conflicts.check_read`).
    """
    selection, fmt = found.selection, found.fmt
    table_schema, absent = found.schema, found.absent
    if fmt.type == "json" and _uses_members(requested):
        # a column null in every sampled record has no type yet: the query's use decides,
        # under a wildcard too (SELECT *, t.a.b shows `a` as a map holding b)
        declared = found.provided.schema if found.provided is not None else ()
        table_schema = type_untyped_columns(
            table_schema,
            RequestedTuple.parse(requested.paths.values()),
            frozenset(c.name.lower() for c in declared),
        )
    if fmt.type == "text":
        check_text_projection(fmt, table_schema, requested.paths, options)
    implicit_options = _implicit_options(options, selection, found.hive, table_schema)
    labels = implicit_labels(options)
    # an implicit column overrides a table column of the same name
    reader_schema = TupleSchema(c for c in table_schema if c.name.lower() not in labels)

    def special(lname: str) -> bool:
        return implicit_options.marker_for(lname) is not None

    projection = _table_projection(
        reader_schema, requested, special, allow_missing, never_missing, check_types
    )
    tracker = ScanSchemaTracker.build(projection)
    implicit = resolve_implicit_columns(tracker, implicit_options)
    context = ErrorContext(f"File: {found.location}")
    tracker.apply_early_reader_schema(reader_schema, context)
    lacking = tracker.missing_columns(reader_schema)
    typed = resolve_missing_types(
        lacking, null_type=null_type(fmt), projection=tracker.projection()
    )
    tracker.resolve_missing_cols(typed)
    missing = [c.name for c in lacking if reader_schema.column(c.name) is None]
    sources: dict[str, str] = {c.name: _source_tag(c.marker) for c in implicit.columns}
    out = TupleSchema()
    for col in tracker.output_schema():
        if col.name in sources:
            out.add(col)
            continue
        if col.name in missing:
            sources[col.name] = ColumnSource.MISSING
        else:
            if values_read:  # a conflict discovery deferred, met by what the query reads
                check_read(col)
            known = reader_schema.column(col.name)
            if known is not None:
                col = _in_file_order(col, known)
            lname = col.name.lower()
            sources[col.name] = ColumnSource.MISSING if lname in absent else ColumnSource.TABLE
        out.add(col)
    if requested.star and fmt.type == "parquet":
        out = _partitions_first(out, sources)
    if not len(out):
        # Nothing projected (``COUNT(*)``, or ``*`` over files of ``{}`` objects only): one
        # per-file constant column keeps each batch's row count through Spark (a batch
        # without columns would arrive as zero rows). Under ``*`` the query never sees it.
        out.add(ColumnMetadata(ROW_COUNT_COLUMN, MinorType.VARCHAR))
        sources[ROW_COUNT_COLUMN] = ColumnSource.FILENAME
    spec = ScanSpec(
        format_name=fmt.name,
        format_type=fmt.type,
        format_options=dict(fmt.options),
        selection_root=selection.root,
        files=tuple(FileSplit(f.path, f.size, f.mtime) for f in selection.files),
        output_schema=out.to_text(),
        sources=sources,
        projection=requested.projection(),
        options=_scan_options(options, fmt, found.provided),
        limit=limit,
        table=found.name,
        reader_schema=_positional_reader_schema(fmt, found.provided, options),
        plugin=shipped_plugin(fmt.type),
        cache_columns=_cache_columns(found, options) if cache else "",
    )
    return PlannedScan(spec, out, missing=tuple(missing))


def _cache_columns(found: ScanTable, options: Mapping[str, Any]) -> str:
    """The table columns a ``*`` scan of the table delivers, as the one planning of this
    module gives them: what the raw-file cache keeps of each file (:mod:`auger.scan.cache`).
    Empty when the session does not use the cache, for Parquet (already columnar), and when
    the ``*`` scan itself is refused (a type conflict the query's own columns avoid)."""

    if not cache_enabled(options) or found.fmt.type == "parquet" or not found.selection.files:
        return ""
    try:
        star = plan_scan(found, Requested(star=True), options, allow_missing=False, cache=False)
    except UserError:
        return ""
    sources = star.spec.sources
    return TupleSchema(
        c for c in star.schema if sources.get(c.name) == ColumnSource.TABLE
    ).to_text()


def _scan_options(
    options: Mapping[str, Any], fmt: FormatConfig, provided: SchemaFile | None
) -> dict[str, Any]:
    """The session options readers honour, and for text under a provided schema the columns
    whose absent values the reader must leave NULL (:func:`absent_sensitive`)."""
    out = {k: v for k, v in options.items() if k.startswith(_SCAN_OPTION_PREFIXES)}
    if fmt.type == "text" and provided is not None:
        nulls = [c.name.lower() for c in provided.schema if absent_sensitive(c)]
        if nulls:
            out["__absent_null__"] = nulls
    return out


def _positional_reader_schema(
    fmt: FormatConfig, provided: SchemaFile | None, options: Mapping[str, Any]
) -> str:
    """Every column of a schema naming a headerless file's fields by position, as the text
    the reader reads, so that a query of some of them still finds each at its position."""
    positional = positional_schema(fmt, provided, options)
    if positional is None:
        return ""
    return TupleSchema([text_scan_column(c) for c in positional]).to_text()


def provided_schema(selection: FileSelection, options: Mapping[str, Any]) -> SchemaFile | None:
    """The table's ``.drill.schema``, when the option allows and the table is a directory."""
    if not selection.is_directory or not options.get("store.table.use_schema_file", True):
        return None
    path = schema_file_path(selection.root)
    return read_schema_file(path) if fs.isfile(path) else None


def apply_provided_schema(discovered: TupleSchema, provided: SchemaFile) -> TupleSchema:
    """The table's columns under a provided schema, as the scan schema tracker resolves a
    wildcard: the provided columns first (their types win, so the files' own types of them
    are not consulted); then, unless the schema is strict, the data's other columns."""
    tracker = ScanSchemaTracker.build(
        ["*"], provided_schema=provided.schema, strict=provided.strict
    )
    others = TupleSchema(c for c in discovered if c.name not in provided.schema)
    tracker.apply_early_reader_schema(others)
    return tracker.output_schema()
