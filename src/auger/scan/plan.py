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
from dataclasses import dataclass, field
from typing import Any

from auger.config import FormatConfig
from auger.formats.conflicts import check_read
from auger.formats.registry import shipped_plugin
from auger.scan.members import (
    member_paths,
    missing_column,
    type_untyped_columns,
    with_missing_members,
)
from auger.scan.provided import (
    absent_sensitive,
    conversion_expressions,
    needs_conversion,
    text_scan_column,
)
from auger.scan.schema import is_excluded_from_wildcard
from auger.scan.single_format import single_format
from auger.scan.spec import ColumnSource, FileSplit, ScanSpec
from auger.scan.text_rules import (
    check_text_projection,
    positional_schema,
    text_missing_column,
    with_table_properties,
)
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
        self.columns.setdefault(name.lower(), name)
        p = path or name
        self.paths.setdefault(p.lower(), p)

    def projection(self) -> tuple[str, ...]:
        """Paths for the scan: a root used whole wins over its member paths."""
        if self.star:
            return ("*",)
        whole = {p for p in self.paths if p in self.columns}
        out = []
        for lower, path in self.paths.items():
            root = _root_of(lower)
            if lower != root and root in whole:
                continue
            out.append(path)
        return tuple(out)


def _root_of(path: str) -> str:
    for i, ch in enumerate(path):
        if ch in ".[":
            return path[:i]
    return path


@dataclass(frozen=True)
class PlannedScan:
    spec: ScanSpec
    schema: TupleSchema
    #: select expressions typing text columns by a provided schema (None: none needed)
    conversions: tuple[str, ...] | None = None
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
) -> ScanTable:
    """The table ``selection`` holds, read as ``fmt``.

    ``format_for`` tells a file's format by its name: the files of ``fmt`` are kept (files of no
    known format passed over) and a second known format is a VALIDATION error. None reads
    every file as ``fmt`` (a format the query names for the table). ``provided`` is a schema
    given with the query, else the table's ``.drill.schema`` is looked for; ``label`` names
    the table in messages (its location by default).
    """
    if format_for is not None:
        files = single_format(selection.files, format_for, fmt.name, location)
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
    return any("." in p or "[" in p for p in requested.paths)


def _check_projection_types(schema: TupleSchema, requested: Requested, path: str) -> None:
    """Drill's reader refuses a column whose type cannot meet how the query uses it: ``a[0]``
    on a scalar, ``a.b`` on a non-map, at any depth of maps. Left to Spark, the same query
    fails later with a message about Spark's own ``get(a, 0)`` or a SYSTEM error."""
    from auger.projection import RequestedTuple, is_consistent
    from auger.scan.conflicts import ErrorContext, projection_conflict

    def check(cols: TupleSchema, wanted: RequestedTuple) -> None:
        for proj in wanted:
            col = cols.column(proj.name)
            if col is None:
                continue
            if not is_consistent(proj, col):
                raise projection_conflict("Reader", proj, col, ErrorContext(f"File: {path}"))
            if proj.members is not None and col.is_map:
                check(col.schema, proj.members)

    if _uses_members(requested):
        check(schema, RequestedTuple.parse(requested.paths.values()))


def plan_scan(
    found: ScanTable,
    requested: Requested,
    options: Mapping[str, Any],
    allow_missing: bool = True,
    limit: int | None = None,
    never_missing: set[str] | frozenset[str] = frozenset(),
    check_types: bool = False,
) -> PlannedScan:
    """The scan spec of a discovered table for what the query requests of it.

    ``allow_missing``: a named column the table lacks is a typed null (unless it is one of
    ``never_missing``, names the query defines itself); otherwise it is left out.
    ``check_types``: the request is exact (the query's columns were resolved to this table),
    so a column used against its type (``a[0]`` on a scalar) is refused as Drill does.
    """
    selection, fmt = found.selection, found.fmt
    table_schema, absent, hive = found.schema, found.absent, found.hive
    if fmt.type == "json" and _uses_members(requested):
        # a column null in every sampled record has no type yet: the query's use decides,
        # under a wildcard too (SELECT *, t.a.b shows `a` as a map holding b)
        from auger.projection import RequestedTuple

        declared = found.provided.schema if found.provided is not None else ()
        table_schema = type_untyped_columns(
            table_schema,
            RequestedTuple.parse(requested.paths.values()),
            frozenset(c.name.lower() for c in declared),
        )
    labels = implicit_labels(options)
    dir_label = partition_label(options)
    out = TupleSchema()
    sources: dict[str, str] = {}
    missing: list[str] = []

    def add(col: ColumnMetadata, source: str) -> None:
        if col.name in out:
            return
        out.add(col)
        sources[col.name] = source

    def add_special(name: str) -> bool:
        lname = name.lower()
        if lname in labels:
            add(ColumnMetadata(name, MinorType.VARCHAR), labels[lname])
            return True
        part = partition_source(name, dir_label)
        if part is not None:
            add(ColumnMetadata(name, MinorType.VARCHAR), part)
            return True
        if lname in hive and lname not in table_schema:
            add(ColumnMetadata(hive[lname], MinorType.VARCHAR), f"key:{hive[lname]}")
            return True
        return False

    if fmt.type == "text":
        check_text_projection(fmt, table_schema, requested.paths, options)
    if check_types:
        _check_projection_types(table_schema, requested, found.location)

    def add_table(col: ColumnMetadata) -> None:
        lname = col.name.lower()
        members = member_paths(requested.paths, lname)
        whole = requested.star or not members or lname in requested.paths
        check_read(col, None if whole else members)
        if not requested.star:  # under a wildcard the query's NULLs stand for them instead
            col = with_missing_members(col, members)
        add(col, ColumnSource.MISSING if lname in absent else ColumnSource.TABLE)

    def add_partitions() -> None:
        for level in range(selection.max_depth):
            add(ColumnMetadata(f"{dir_label}{level}", MinorType.VARCHAR), f"dir{level}")
        for key in hive.values():
            if key not in table_schema:
                add(ColumnMetadata(key, MinorType.VARCHAR), f"key:{key}")

    if requested.star:
        partitions_first = fmt.type == "parquet"  # Drill's Parquet wildcard: dirN, then data
        if partitions_first:
            add_partitions()
        for col in table_schema:
            if col.name.lower() in labels:
                continue  # an implicit column of the same name overrides the table's
            if is_excluded_from_wildcard(col):
                continue  # a reader's special column (``_raw``) comes only when named
            add_table(col)
        if not partitions_first:
            add_partitions()
    for lname, name in requested.columns.items():
        if add_special(name):
            continue
        known = table_schema.column(lname)
        if known is not None:
            add_table(known)
        elif allow_missing and lname not in never_missing:
            members = member_paths(requested.paths, lname)
            if requested.star and members:
                if lname not in requested.paths:
                    continue  # only its members are used: each is a NULL in the query
                members = []  # used whole too: a plain missing column, its members NULLs
            if fmt.type == "text" and not members:
                add(text_missing_column(name), ColumnSource.MISSING)
            else:
                add(missing_column(name, members), ColumnSource.MISSING)
            missing.append(name)

    if not len(out):
        # Nothing projected (``COUNT(*)``, or ``*`` over files of ``{}`` objects only): one
        # per-file constant column keeps each batch's row count through Spark (a batch
        # without columns would arrive as zero rows). Under ``*`` the query never sees it.
        add(ColumnMetadata(ROW_COUNT_COLUMN, MinorType.VARCHAR), ColumnSource.FILENAME)
    conversions = None
    if found.provided is not None and fmt.type == "text":
        conversions = conversion_expressions(out, found.provided)
        if conversions is not None:
            typed = TupleSchema()
            for col in out:
                given = found.provided.schema.column(col.name)
                scanned = sources[col.name] in (ColumnSource.TABLE, ColumnSource.MISSING)
                # a column some file has may be absent from a row: the scan leaves it NULL
                # and the query fills it; one no file has gets its default from the scan
                in_files = sources[col.name] == ColumnSource.TABLE
                if (
                    given is not None
                    and scanned
                    and (needs_conversion(given) or (in_files and absent_sensitive(given)))
                ):
                    typed.add(text_scan_column(col))
                else:
                    typed.add(col)
            out = typed
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
    )
    return PlannedScan(spec, out, tuple(conversions) if conversions else None, tuple(missing))


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
    """The provided columns first (their types win); then, unless strict, the data's others."""
    out = TupleSchema(provided.schema)
    if not provided.strict:
        for col in discovered:
            if col.name not in out:
                out.add(col)
    return out
