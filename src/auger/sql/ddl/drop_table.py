"""``DROP TABLE [IF EXISTS] t``: a temporary table of the session first, then a persistent one.

With no schema, or with the default temporary workspace named, the
session's temporary tables are searched first; otherwise (or when none matches) the name is a
persistent table of the named schema or of the default schema. A persistent table is dropped
only when its directory holds files of a single format the workspace can read (Drill's
homogeneity check), so a directory that is not a table, or holds tables of mixed formats, stays.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from sqlglot import exp

from auger.errors import UserError
from auger.sql.ddl.ctas import mutable_workspace
from auger.sql.result import QueryResult, ok_result
from auger.storage import filesystem as fs
from auger.storage import object_tables
from auger.storage.selection import is_hidden
from auger.storage.table_files import remove_tree_atomically
from auger.storage.workspace import Workspace

if TYPE_CHECKING:
    from auger.sql.context import StatementContext

__all__ = ["drop_table", "table_formats"]

_log = logging.getLogger(__name__)

_MIXED = (
    "Table contains different file formats. \n"
    "Drop Table is only supported for directories that contain homogeneous file formats "
    "consumable by Drill"
)


def table_formats(ws: Workspace, path: str) -> set[str | None] | None:
    """The format names of the (visible) files of a table path; None when nothing is there.

    A file no format of the workspace reads counts as ``None``. In an object store, a table
    hidden by a pending marker (being written or removed) counts as nothing.
    """
    if fs.is_uri(path):
        return _object_formats(ws, path)
    if not os.path.lexists(path):
        return None
    if not os.path.isdir(path):
        fmt = ws.format_for(path)
        return {fmt.name if fmt else None}
    found: set[str | None] = set()
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = [d for d in dirnames if not is_hidden(d)]
        for name in filenames:
            if is_hidden(name):
                continue
            fmt = ws.format_for(os.path.join(dirpath, name))
            found.add(fmt.name if fmt else None)
    return found


def _object_formats(ws: Workspace, path: str) -> set[str | None] | None:
    info = fs.file_info(path)
    if info is None:
        return None
    if not info.is_dir:
        fmt = ws.format_for(path)
        return {fmt.name if fmt else None}
    if object_tables.is_pending(path):
        return None
    found: set[str | None] = set()
    for f in object_tables.hide_pending(fs.walk_files(path, _hidden_but_markers), path):
        fmt = ws.format_for(f.path)
        found.add(fmt.name if fmt else None)
    return found


def _hidden_but_markers(name: str) -> bool:
    return is_hidden(name) and name != object_tables.PENDING_MARKER


def _remove(path: str, statement: StatementContext) -> None:
    """Remove a table's directory (or file): renamed out of sight first on local disk, hidden
    by a pending marker first in an object store, so no reader sees half of it."""
    if fs.is_uri(path):
        object_tables.remove_table(path, statement.temporary.owner.engine_id)
    else:
        remove_tree_atomically(path)


def _target(tree: exp.Drop) -> tuple[list[str], str, bool]:
    if tree.args.get("temporary"):
        raise UserError.parse(
            'Encountered "TEMPORARY": DROP TABLE takes no TEMPORARY keyword',
            ["A temporary table is dropped with DROP TABLE name"],
        )
    tables = tree.args.get("tables") or ([tree.this] if tree.this is not None else [])
    if len(tables) != 1 or not isinstance(tables[0], exp.Table):
        raise UserError.parse("DROP TABLE takes exactly one table name")
    parts = [p.name for p in tables[0].parts]
    return parts[:-1], parts[-1].lstrip("/"), bool(tree.args.get("exists"))


def _default_schema_writable(statement: StatementContext) -> bool:
    if not statement.default_schema:
        return False
    found = statement.catalog.find_schema([])
    return isinstance(found, Workspace) and found.writable


def drop_table(tree: exp.Drop, statement: StatementContext) -> QueryResult:
    """Run a DROP TABLE statement."""
    schema_parts, name, if_exists = _target(tree)

    # 1. the session's temporary table of that name (the schema, if named, must be mutable)
    temp_schema = (
        mutable_workspace(statement, schema_parts)
        if schema_parts
        else statement.catalog.temporary_workspace()
    )
    if (
        statement.catalog.is_temporary_workspace(temp_schema)
        and statement.temporary.get(name) is not None
    ):
        _log.info("Temporary table [%s] is being dropped.", name)
        statement.temporary.remove(name)
        return ok_result(True, f"Temporary table [{name}] dropped", "DROP TABLE")

    # 2. a persistent table. A bare name could only have meant a temporary table when the
    # default schema cannot hold tables (none, the root, or a read-only or non-file schema):
    # that is "not found", not a complaint about a schema the user never named.
    if not schema_parts and not _default_schema_writable(statement):
        if if_exists:
            return ok_result(False, f"Table [{name}] not found", "DROP TABLE")
        raise UserError.validation(f"Table [{name}] is not found.")
    ws = mutable_workspace(statement, schema_parts)
    path = ws.resolve(name)
    formats = table_formats(ws, path) if name else None
    if formats is None or formats == {None}:  # nothing there, or nothing Drill could read
        if if_exists:
            return ok_result(False, f"Table [{name}] not found", "DROP TABLE")
        if statement.catalog.is_temporary_workspace(temp_schema):
            # the name could have meant a temporary table: Drill says "is not found." then
            raise UserError.validation(f"Table [{name}] is not found.")
        raise UserError.validation(f"Table [{name}] not found")
    if len(formats) > 1:
        raise UserError.validation(_MIXED)
    try:
        _remove(path, statement)
    except PermissionError as exc:
        raise UserError.permission("Unauthorized to drop table", [str(exc)]) from exc
    except OSError as exc:
        raise UserError("DATA_WRITE", "Failed to drop table", [str(exc)]) from exc
    return ok_result(True, f"Table [{name}] dropped", "DROP TABLE")
