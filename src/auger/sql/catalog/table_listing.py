"""What tables each schema holds, cheaply: the source of ``SHOW TABLES`` and
``INFORMATION_SCHEMA.TABLES|VIEWS|COLUMNS``.

A workspace's tables are its views plus, for writable workspaces, the files and directories
directly in it that a format can read (a read-only workspace such as ``dfs.root`` may be the whole
disk, so only its views are listed). System schemas list their fixed tables. Nothing here opens a
data file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from auger.errors import UserError
from auger.sql.catalog.resolution import IS_SCHEMA_NAME, SYSTEM_SCHEMAS
from auger.sql.catalog.sys_tables import SYS_TABLES
from auger.storage import filesystem as fs
from auger.storage.selection import is_hidden
from auger.storage.temporary import OWNER_MARKER
from auger.storage.views import VIEW_SUFFIX, View, list_views, read_view
from auger.storage.workspace import Workspace

if TYPE_CHECKING:
    from auger.sql.context import StatementContext

__all__ = ["INFO_TABLE_NAMES", "TableEntry", "list_tables"]

#: The tables of ``INFORMATION_SCHEMA`` (each built by ``information_schema.INFO_TABLES``, which
#: lists these tables through this module and so cannot be imported here).
INFO_TABLE_NAMES = ("CATALOGS", "SCHEMATA", "TABLES", "VIEWS", "COLUMNS", "FILES", "PARTITIONS")


@dataclass(frozen=True)
class TableEntry:
    schema: str
    name: str
    type: str  # TABLE, VIEW, SYSTEM_TABLE
    location: str | None = None
    view: View | None = None


def _is_table_entry(ws: Workspace, directory: str, name: str) -> bool:
    if is_hidden(name) or name.endswith(VIEW_SUFFIX):
        return False
    full = fs.join(directory, name)
    if fs.isdir(full):
        # a session's temporary-table folder is no table (it is marked by its owner file)
        return not fs.isfile(fs.join(full, OWNER_MARKER))
    return ws.format_for(full) is not None


def workspace_tables(ws: Workspace) -> list[TableEntry]:
    """The views and (writable workspaces) tables of ``ws`` its session may see: nothing of a
    workspace whose directory is denied, and no entry that is a denied path."""
    out: list[TableEntry] = []
    try:
        ws.resolve("", listing=True)
    except UserError:
        return out
    for name, path in list_views(ws):
        try:
            view = read_view(path)
        except Exception:  # a broken view file is still listed; reading it reports the error
            view = None
        out.append(TableEntry(ws.name, name, "VIEW", path, view))
    if ws.writable:
        try:
            if fs.is_uri(ws.location):
                entries = [fs.basename(e.path) for e in fs.list_dir(ws.location)]
            else:
                entries = sorted(os.listdir(ws.location))
        except (OSError, UserError):
            entries = []
        for name in entries:
            full = fs.join(ws.location, name)
            if _is_table_entry(ws, ws.location, name) and ws.listed(full):
                out.append(TableEntry(ws.name, name, "TABLE", full))
    return out


def system_tables(schema: str) -> list[TableEntry]:
    if schema == "sys":
        return [TableEntry("sys", n, "SYSTEM_TABLE") for n in sorted(SYS_TABLES)]

    return [TableEntry(IS_SCHEMA_NAME, n, "SYSTEM_TABLE") for n in sorted(INFO_TABLE_NAMES)]


def list_tables(statement: StatementContext, schema: str | None = None) -> list[TableEntry]:
    """Every table of every schema (or of one schema, by its full name)."""
    out: list[TableEntry] = []
    for ws in statement.catalog.workspaces():
        if schema is None or ws.name.lower() == schema.lower():
            out.extend(workspace_tables(ws))
    for sys_name in SYSTEM_SCHEMAS:
        if schema is None or sys_name.lower() == schema.lower():
            out.extend(system_tables(sys_name))
    return out
