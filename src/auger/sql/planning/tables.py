"""The tables of a query: finding them in the tree, resolving each name, and discovering and
planning the scan of a file table.

Used by the planner's rules (:mod:`auger.sql.planning.rules`) and by the statements that read a
table's schema without running a query (``DESCRIBE``, ``CREATE VIEW``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from auger.errors import ErrorKind, UserError, closest_name
from auger.formats.lakehouse import DELTA, ICEBERG, table_kind
from auger.formats.lakehouse.iceberg import metadata_table
from auger.projection import PathSegment, format_path, parse_path
from auger.scan.lakehouse import lakehouse_scan_table
from auger.scan.plan import (
    PlannedScan,
    Requested,
    ScanTable,
    discover_table,
    implicit_labels,
    partition_label,
    plan_scan,
)
from auger.spark.discovery import discover_schema
from auger.sql.catalog.resolution import FileTable, SessionCatalog, TableRef
from auger.sql.planning import diagnostics
from auger.sql.planning.diagnostics import Diagnostics
from auger.sql.planning.select_plan import PlanContext
from auger.sql.planning.table_functions import (
    apply_table_function,
    is_table_function,
    table_function,
)
from auger.storage.filesystem import is_uri
from auger.storage.selection import (
    LISTING_TTL_MS,
    FileSelection,
    FileStatus,
    nearest_entry,
    select_files,
)
from auger.types.spark import column_to_spark

if TYPE_CHECKING:
    from auger.types import TupleSchema

__all__ = [
    "build_file_scan",
    "discover_file_table",
    "known_names",
    "lakehouse_metadata_table",
    "plan_file_scan",
    "resolve_table_node",
    "table_nodes",
]


def table_nodes(tree: exp.Expression) -> list[exp.Table]:
    """Physical table references (CTE names and derived tables excluded), in query order."""
    seen: dict[int, exp.Table] = {}
    for scope in traverse_scope(tree):
        for _, (_node, source) in scope.selected_sources.items():
            if isinstance(source, exp.Table) and (
                isinstance(source.this, exp.Identifier) or is_table_function(source)
            ):
                seen.setdefault(id(source), source)
    # Tables in subqueries of non-SELECT wrappers (e.g. CTAS) are found by traverse_scope too.
    return list(seen.values())


def resolve_table_node(
    node: exp.Table, catalog: SessionCatalog, context: PlanContext | None = None
) -> TableRef:
    function = table_function(node) if is_table_function(node) else None
    parts = function.parts if function else [p.name for p in node.parts]
    if context is not None and context.in_view:
        # a view sees no temporary table; its paths meet the session's denied paths (another
        # session's temporary location among them) in the workspace's resolution
        ref = catalog.resolve_persistent_table(parts, context.default_schema)
    else:
        ref = catalog.resolve_table(parts)
    if function is not None:
        if not isinstance(ref, FileTable):
            raise UserError.validation(
                f"Table function options apply to file tables only, not [{'.'.join(parts)}]"
            )
        ref = apply_table_function(ref, function)
    return ref


def known_names(found: ScanTable, options: Mapping[str, Any]) -> dict[str, str]:
    """Every column name a query may use of a file table -> a Spark type string."""
    out: dict[str, str] = {}
    for col in found.schema:
        try:
            out[col.name.lower()] = column_to_spark(col).simpleString()
        except Exception:  # a type Spark cannot express: any type will do for naming
            out[col.name.lower()] = "string"
    for label in implicit_labels(options):
        out[label] = "string"
    dir_label = partition_label(options)
    for level in range(max(found.selection.max_depth, 1)):
        out[f"{dir_label}{level}".lower()] = "string"
    for key in found.hive:
        out.setdefault(key, "string")
    return out


def _linked_files(
    table: FileTable, selection: FileSelection, notes: Diagnostics | None
) -> FileSelection:
    """The selection without the links that lead out of the workspace.

    A directory or glob scan finds links the way it finds files. Naming a link that leads out
    is refused, so the scan skips it too and says so (a scan message naming the link), unless
    the workspace is configured to follow links. A followed link's target still meets the
    session's denied paths (the table's own path met them when it was resolved).

    Raises:
        UserError: PERMISSION, when a linked file is (or lies in) a denied path.
    """
    ws = table.workspace
    kept: list[FileStatus] = []
    for f in selection.files:
        if is_uri(f.path) or os.path.realpath(f.path) == f.path:
            kept.append(f)  # an object store has no links
            continue
        if ws.guard is not None:
            ws.guard.check(os.path.realpath(f.path), table.name, ws.name)
        if ws.follow_links or ws.holds(f.path):
            kept.append(f)
            continue
        link = os.path.relpath(f.path, os.path.realpath(ws.location))
        if notes is None:
            continue
        notes.note(
            f"Skipped [{link}] in {diagnostics.table_label(table)}: it is a link that leads "
            f"outside workspace [{ws.name}] (an administrator may set follow_links on the "
            "workspace to read such links)"
        )
    if len(kept) == len(selection.files):
        return selection
    return dataclasses.replace(selection, files=tuple(kept))


def lakehouse_kind(table: FileTable, listing_ttl: float = 0.0) -> str | None:
    """``iceberg`` or ``delta`` when the table is a lakehouse table the workspace reads as one
    (its format of that type is enabled, or the table function names it), else None."""
    override = table.format_override
    if override is not None:
        return override.type if override.type in (ICEBERG, DELTA) else None
    if table.workspace.plugin.format_for(table.path) is not None:
        return None  # a file of a known format is no table directory: nothing more to ask
    kind = table_kind(table.path, listing_ttl)
    if kind is None or not any(f.type == kind for f in table.workspace.plugin.formats.values()):
        return None
    return kind


def lakehouse_metadata_table(table: FileTable) -> Any:
    """Drill's Iceberg metadata tables: ``t#snapshots``, ``t#history``, ``t#files``,
    ``t#manifests``, ``t#partitions`` and ``t#entries`` of the Iceberg table ``t``, as an Arrow
    table; None when the name is not of that form."""
    head, sep, suffix = table.path.rpartition("#")
    if not sep or "/" in suffix or table_kind(head) != ICEBERG:
        return None

    return metadata_table(head, suffix)


def _discover_lakehouse(table: FileTable, kind: str, options: Mapping[str, Any]) -> ScanTable:
    formats = list(table.workspace.plugin.formats.values())
    override = table.format_override
    return lakehouse_scan_table(
        kind,
        table.path,
        override.options if override else {},
        lambda ftype: next((f for f in formats if f.type == ftype), None),
        options,
        table.name,
        table.schema_override,
        diagnostics.table_label(table),
    )


def _near_miss(table: FileTable, schema: str) -> str:
    """A "did you mean" for a table that is not there: a file beside it with a name nearly
    its own, or (``dfs.dta.`x.json` `` read as file ``dta.x.json`` of ``dfs``) a workspace."""
    near = nearest_entry(table.path)
    if near is not None:
        head = table.name.rstrip("/").rpartition("/")[0]
        return f"; did you mean `{head + '/' if head else ''}{near}`?"
    first, dot, _ = table.name.partition(".")
    plugin = table.workspace.plugin
    if dot and "/" not in first and table.workspace.name == f"{plugin.name}.default":
        workspace = closest_name(first, plugin.workspaces)
        if workspace is not None:
            return f"; did you mean [{plugin.name}.{workspace}]?"
    return ""


def discover_file_table(
    table: FileTable, options: Mapping[str, Any], notes: Diagnostics | None = None
) -> ScanTable:
    """List a file table's files, pick its format and discover (or read the provided) schema;
    what the user should hear of it (links left out) goes to ``notes``."""
    ttl_ms = int(options.get("auger.storage.listing_ttl_ms", LISTING_TTL_MS) or 0)
    kind = lakehouse_kind(table, ttl_ms / 1000)
    if kind is not None:
        return _discover_lakehouse(table, kind, options)
    try:
        selection = select_files(table.path, ttl_ms / 1000)
    except UserError as exc:
        if exc.kind is not ErrorKind.VALIDATION:
            raise  # an object store that cannot be asked: its own words, not "not found"
        schema = table.schema.removesuffix(".default")
        message = f"Object '{table.name}' not found within '{schema}'"
        message += _near_miss(table, schema)
        raise UserError.validation(message, [f"Path: {table.path}", *exc.context]) from None
    selection = _linked_files(table, selection, notes)
    # the format comes from the first file that has one: a README listed first is no reason
    # to refuse a directory of JSON files
    known_files = (f.path for f in selection.files if table.workspace.format_for(f.path))
    probe = next(known_files, selection.files[0].path if selection.files else table.path)
    fmt = table.format_override or table.workspace.format_for(probe)
    if fmt is None and selection.is_directory and not selection.files:
        # Drill reads a directory with no visible files (empty, or only ``_SUCCESS``/``.crc``)
        # as an empty table of no columns, not as a file of unknown format. No file will be
        # opened; JSON's rules give a column the query names Drill's nullable INT.
        known = list(table.workspace.plugin.formats.values())
        fmt = next((f for f in known if f.type == "json"), known[0] if known else None)
    if fmt is None:
        raise UserError.validation(
            f"No format plugin for file [{probe.rsplit('/', 1)[-1]}] in schema [{table.schema}]",
            [
                f"Known formats: {', '.join(table.workspace.plugin.formats)}",
                "Fix: use a known extension, or add a format to the workspace config",
            ],
        )
    return discover_table(
        selection,
        fmt,
        options,
        discover_schema,
        table.workspace.format_for if table.format_override is None else None,
        table.name,
        table.path,
        table.schema_override,
        diagnostics.table_label(table),
        lambda glob: _narrowed(table, glob),
    )


def _narrowed(table: FileTable, glob: str) -> str | None:
    """The query over the files ``glob`` selects below ``table`` (a directory), as the user
    writes it; None when the table is a glob itself."""
    if any(ch in table.name for ch in "*?[{"):
        return None
    schema = table.schema.removesuffix(".default")
    return f"SELECT * FROM {schema}.`{table.name.rstrip('/')}/{glob}`"


def plan_file_scan(
    table: FileTable,
    requested: Requested,
    options: Mapping[str, Any],
    allow_missing: bool,
    limit: int | None = None,
    never_missing: set[str] | frozenset[str] = frozenset(),
    notes: Diagnostics | None = None,
) -> PlannedScan:
    """Plan the scan of one file table: files, format, discovered schema, output columns."""
    found = discover_file_table(table, options, notes)
    return build_file_scan(
        found, requested, options, allow_missing, limit, never_missing, notes=notes
    )


def build_file_scan(
    found: ScanTable,
    requested: Requested,
    options: Mapping[str, Any],
    allow_missing: bool,
    limit: int | None = None,
    never_missing: set[str] | frozenset[str] = frozenset(),
    check_types: bool = False,
    notes: Diagnostics | None = None,
    values_read: bool = True,
) -> PlannedScan:
    """The scan spec of a discovered table for what the query requests of it (see
    :func:`~auger.scan.plan.plan_scan`), each named column no file has noted in ``notes``."""
    planned = plan_scan(
        found,
        requested,
        options,
        allow_missing,
        limit,
        never_missing,
        check_types,
        values_read=values_read,
    )
    files = len(found.selection.files)
    for name in planned.missing:
        diagnostics.column_not_found(notes, found.label, name, files, found.schema.names())
    for within, member, siblings in _missing_members(found.schema, requested):
        diagnostics.column_not_found(notes, found.label, member, files, siblings, within)
    return planned


def _missing_members(schema: TupleSchema, requested: Requested) -> list[tuple[str, str, list[str]]]:
    """Each map member the query names that no file has (``m.zz``, read as NULL): the path of
    its map, its name, and the names of the members the map does have (for a "did you
    mean")."""
    out: list[tuple[str, str, list[str]]] = []
    for path in requested.paths.values():
        segments = parse_path(path)
        col = schema.column(segments[0].name)
        for depth, seg in enumerate(segments[1:], 1):
            if col is None or not col.is_map or segments[depth - 1].indexes:
                break  # not a map (or an element of an array of maps): not judged here
            members = col.children or ()
            child = next((c for c in members if c.name.lower() == seg.name.lower()), None)
            if child is None:
                within = format_path([PathSegment(s.name) for s in segments[:depth]])
                found = (within, seg.name, [c.name for c in members])
                if found[:2] not in ((w, m) for w, m, _ in out):
                    out.append(found)
                break
            col = child
    return out
