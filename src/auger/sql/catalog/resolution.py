"""Name resolution: what a table name in a query refers to.

Drill resolves ``a.b.c`` first relative to the session's default schema, then from the root. The
schema part names a workspace (``dfs.tmp``), a plugin's default workspace (``dfs``, ``cp``), or a
system schema (``sys``, ``information_schema``); the last part names a file or directory inside
a workspace (backticked paths with ``/``, leading ``/`` optional), or a system table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from auger.config import Config, FormatConfig
from auger.errors import UserError, closest_name
from auger.sql.frontend.token_cursor import split_schema_path
from auger.storage.denied import PathGuard
from auger.storage.schema_file import SchemaFile
from auger.storage.views import View, find_view_file, read_view
from auger.storage.workspace import Workspace

__all__ = [
    "Catalog",
    "FileTable",
    "SystemTable",
    "TableRef",
    "ViewTable",
    "display_schema",
]

ROOT_IMMUTABLE = (
    "Root schema is immutable. Drill does not allow creating or deleting tables or views in the "
    "root schema. Select a schema using 'USE schema' command."
)


def display_schema(name: str) -> str:
    """A schema name as Drill prints it in messages: a plugin's default workspace by plugin."""
    return name.removesuffix(".default")


#: Drill's system schemas, spelled as Drill lists them (``information_schema`` in lower case).
IS_SCHEMA_NAME = "information_schema"
SYSTEM_SCHEMAS = ("sys", IS_SCHEMA_NAME)


@dataclass(frozen=True)
class TableRef:
    """Base of everything a table name can resolve to."""

    schema: str  # the full schema name it lives in, e.g. ``dfs.tmp``
    name: str  # the table name within that schema


@dataclass(frozen=True)
class FileTable(TableRef):
    workspace: Workspace
    path: str  # absolute path of the file, directory or glob
    #: a table function's format (``table(t(type => 'text', ...))``), else the workspace's
    format_override: FormatConfig | None = None
    #: a table function's inline schema, used instead of the table's ``.drill.schema``
    schema_override: SchemaFile | None = None


@dataclass(frozen=True)
class SystemTable(TableRef):
    pass


@dataclass(frozen=True)
class ViewTable(TableRef):
    """A view stored as ``<name>.view.drill`` in a workspace directory."""

    workspace: Workspace
    path: str  # the view file
    view: View


def _relative_to(default_schema: str | None, parts: list[str]) -> list[list[str]]:
    """Schema paths ``parts`` may mean under the default schema (``USE dfs`` selects the
    plugin, whose sub-schemas are its workspaces, and its ``default`` workspace)."""
    if not default_schema:
        return []
    base = default_schema.split(".")
    out = [base + parts]
    if parts and len(base) == 2 and base[1] == "default":
        out.append(base[:1] + parts)
    return out


class Catalog:
    """The schemas a session can see: every workspace of every file plugin, plus system ones."""

    def __init__(self, config: Config, guard: PathGuard | None = None) -> None:
        self.config = config
        #: the denied paths of the session this catalog serves, given to every workspace
        self.guard = guard

    def workspaces(self) -> list[Workspace]:
        out = []
        for plugin in self.config.plugins.values():
            if not plugin.enabled or not plugin.is_file_based:
                continue
            for ws in plugin.workspaces.values():
                out.append(Workspace(plugin, ws, self.guard))
        return out

    def schema_names(self) -> list[str]:
        """Drill's ``SHOW SCHEMAS`` list."""
        names = [w.name for w in self.workspaces()]
        names += [
            p for p in self.config.plugins if p not in {w.plugin.name for w in self.workspaces()}
        ]
        return sorted(names) + list(SYSTEM_SCHEMAS)

    def find_schema(self, parts: Sequence[str]) -> Workspace | str | None:
        """A workspace, a system schema name, or None for a path of schema names."""
        if not parts:
            return None
        if len(parts) == 1:
            for sys_name in SYSTEM_SCHEMAS:
                if parts[0].lower() == sys_name.lower():
                    return sys_name
        if len(parts) > 2:
            return None
        plugin = self.config.plugins.get(parts[0])
        if plugin is None:
            lowered = {k.lower(): v for k, v in self.config.plugins.items()}
            plugin = lowered.get(parts[0].lower())
        if plugin is None or not plugin.enabled or not plugin.is_file_based:
            return None
        ws_name = parts[1] if len(parts) == 2 else "default"
        ws = plugin.workspaces.get(ws_name)
        if ws is None:
            ws = {k.lower(): v for k, v in plugin.workspaces.items()}.get(ws_name.lower())
        return None if ws is None else Workspace(plugin, ws, self.guard)

    def resolve_schema(self, name: str, default_schema: str | None) -> Workspace | str:
        """Resolve ``USE``-style schema names, relative to the default schema first."""
        parts = [p for p in name.split(".") if p]
        candidates = [*_relative_to(default_schema, parts), parts]
        for cand in candidates:
            found = self.find_schema(cand)
            if found is not None:
                return found
        context = (
            f"Current default schema: {default_schema}"
            if default_schema
            else "Current default schema: No default schema selected"
        )
        raise UserError.validation(
            f"Schema [{name}] is not valid with respect to either root schema or current "
            "default schema." + self.schema_hint(name),
            [context],
        )

    def schema_hint(self, name: str) -> str:
        """`` Did you mean [dfs.tmp]?`` for a schema name nearly right, else nothing."""
        known = [n.removesuffix(".default") for n in self.schema_names()]
        close = closest_name(name, known)
        return f" Did you mean [{close}]?" if close else ""

    def resolve_mutable_schema(
        self, schema_parts: Sequence[str], default_schema: str | None
    ) -> Workspace:
        """The writable workspace a CREATE/DROP of a view or table targets.

        Raises:
            UserError: VALIDATION, for the root schema, unknown or immutable schemas.
        """
        parts = split_schema_path(list(schema_parts))
        if not parts:
            if not default_schema:
                raise UserError.validation(ROOT_IMMUTABLE)
            found = self.resolve_schema(default_schema, None)
        else:
            found = self.resolve_schema(".".join(parts), default_schema)
        if isinstance(found, str):
            raise UserError.validation(
                f"Unable to create or drop objects. Schema [{found}] is immutable."
            )
        if not found.writable:
            raise UserError.validation(
                f"Unable to create or drop objects. Schema [{display_schema(found.name)}] "
                "is immutable."
            )
        return found

    def find_view(self, ws: Workspace, name: str) -> ViewTable | None:
        """The view ``name`` in workspace ``ws``, if one is stored there."""
        if any(ch in name for ch in "*?[{"):
            return None
        path = find_view_file(ws, name)  # refuses names that escape the workspace
        if path is None:
            return None
        return ViewTable(ws.name, name.lstrip("/"), ws, path, read_view(path))

    def _lookup(
        self, schema_parts: list[str], table: str, default_schema: str | None
    ) -> TableRef | None:
        attempts: list[list[str]] = _relative_to(default_schema, schema_parts)
        if schema_parts:
            attempts.append(schema_parts)
        for attempt in attempts:
            found = self.find_schema(attempt)
            if found is None:
                continue
            if isinstance(found, str):
                return SystemTable(found, table.lower() if found == "sys" else table.upper())
            view = self.find_view(found, table)
            if view is not None:
                return view
            return FileTable(found.name, table, found, found.resolve(table))
        return None

    def resolve_table(self, parts: Sequence[str], default_schema: str | None) -> TableRef:
        """Resolve a table name's parts to a view, a file or a system table (in that order).

        Raises:
            UserError: VALIDATION, naming the table and the schema searched.
        """
        table = parts[-1]
        schema_parts = split_schema_path(list(parts[:-1]))
        found_ref = self._lookup(schema_parts, table, default_schema)
        # ``cp.employee.json`` unquoted: the trailing parts are a dotted file name
        for cut in range(len(parts) - 2, 0, -1):
            if found_ref is not None:
                break
            found_ref = self._lookup(
                split_schema_path(list(parts[:cut])), ".".join(parts[cut:]), default_schema
            )
        if found_ref is not None:
            return found_ref
        if not schema_parts and not default_schema:
            raise UserError.validation(
                f"Object '{table}' not found: no default schema selected",
                ["Fix: qualify the table (dfs.tmp.`name`) or select a schema with USE"],
            )
        where = ".".join(schema_parts) or str(default_schema)
        raise UserError.validation(
            f"Schema [{where}] is not valid with respect to either root schema or current "
            "default schema." + self.schema_hint(where),
            [f"Current default schema: {default_schema or 'No default schema selected'}"],
        )
