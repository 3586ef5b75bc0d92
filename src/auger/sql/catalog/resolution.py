"""Name resolution: what a schema or table name in a statement refers to.

Drill resolves ``a.b.c`` first relative to the session's default schema, then from the root. The
schema part names a workspace (``dfs.tmp``), a plugin's default workspace (``dfs``, ``cp``), or a
system schema (``sys``, ``information_schema``); the last part names a file or directory inside
a workspace (backticked paths with ``/``, leading ``/`` optional), or a system table. A bare name
(or one in the default temporary workspace) names one of the session's temporary tables first.

:class:`SessionCatalog` is the one resolver: the session builds one per statement (its
configuration, denied paths, temporary tables and default schema) and the statement's context
carries it (:mod:`auger.sql.context`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from auger.config import Config, FormatConfig
from auger.errors import UserError, closest_name
from auger.sql.frontend.token_cursor import split_schema_path
from auger.storage.denied import PathGuard
from auger.storage.schema_file import SchemaFile
from auger.storage.temporary import SessionTemporaryTables, TemporaryTable
from auger.storage.views import View, find_view_file, read_view
from auger.storage.workspace import Workspace

__all__ = [
    "FileTable",
    "SessionCatalog",
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


class SessionCatalog:
    """The schemas and tables one session can see, and what its names mean.

    Every workspace of every enabled file plugin (with the session's denied paths applied),
    the system schemas, the session's temporary tables, and its default schema (``USE``).

    Args:
        config: the engine's configuration when the statement started.
        guard: the denied paths of the session, given to every workspace.
        temporary: the session's temporary tables.
        default_schema: the schema set by ``USE``, or None.
    """

    def __init__(
        self,
        config: Config,
        guard: PathGuard | None,
        temporary: SessionTemporaryTables,
        default_schema: str | None = None,
    ) -> None:
        self.config = config
        self.guard = guard
        self.temporary = temporary
        #: the default schema; ``USE`` changes it (and the session keeps what it became)
        self.default_schema = default_schema

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

    def find_root_schema(self, parts: Sequence[str]) -> Workspace | str | None:
        """A workspace, a system schema name, or None for a path of schema names from the
        root."""
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

    def resolve_schema(self, name: str, from_root: bool = False) -> Workspace | str:
        """Resolve ``USE``-style schema names, relative to the default schema first (unless
        ``from_root``).

        Raises:
            UserError: VALIDATION, naming the schema and the default schema.
        """
        return self._resolve_schema(name, None if from_root else self.default_schema)

    def _resolve_schema(self, name: str, default_schema: str | None) -> Workspace | str:
        parts = [p for p in name.split(".") if p]
        candidates = [*_relative_to(default_schema, parts), parts]
        for cand in candidates:
            found = self.find_root_schema(cand)
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

    def resolve_mutable_schema(self, schema_parts: Sequence[str]) -> Workspace:
        """The writable workspace a CREATE/DROP of a view or table targets.

        Raises:
            UserError: VALIDATION, for the root schema, unknown or immutable schemas.
        """
        parts = split_schema_path(list(schema_parts))
        if not parts:
            if not self.default_schema:
                raise UserError.validation(ROOT_IMMUTABLE)
            found = self.resolve_schema(self.default_schema, from_root=True)
        else:
            found = self.resolve_schema(".".join(parts))
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
            found = self.find_root_schema(attempt)
            if found is None:
                continue
            if isinstance(found, str):
                return SystemTable(found, table.lower() if found == "sys" else table.upper())
            view = self.find_view(found, table)
            if view is not None:
                return view
            return FileTable(found.name, table, found, found.resolve(table))
        return None

    def resolve_persistent_table(
        self, parts: Sequence[str], default_schema: str | None
    ) -> TableRef:
        """Resolve a table name's parts to a view, a file or a system table (in that order),
        relative to ``default_schema`` (a view's stored schema path): no temporary table.

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

    # ----- the session's names
    def use_schema(self, name: str) -> str:
        """``USE name``: the schema found becomes the default schema; returns its full name."""
        found = self.resolve_schema(name)
        full = found if isinstance(found, str) else found.name
        self.default_schema = full
        return full

    def find_schema(self, schema_parts: Sequence[str]) -> Workspace | str | None:
        """A schema path resolved as Drill does: under the default schema first, then the root."""
        parts = [x for p in schema_parts for x in p.split(".") if x]
        attempts: list[list[str]] = []
        if self.default_schema:
            attempts.append(self.default_schema.split(".") + parts)
            if self.default_schema.endswith(".default"):  # ``USE dfs``: ``tmp`` means dfs.tmp
                attempts.append(self.default_schema.split(".")[:-1] + parts)
        if parts:
            attempts.append(parts)
        for attempt in attempts:
            found = self.find_root_schema(attempt)
            if found is not None:
                return found
        return None

    def temporary_workspace(self) -> Workspace:
        """The default temporary workspace (``exec.default_temporary_workspace``).

        Raises:
            UserError: VALIDATION, when the configured workspace is gone.
        """
        name = self.config.default_temporary_workspace
        found = self.find_root_schema(name.split("."))
        if not isinstance(found, Workspace) or found.name != name:
            raise UserError.validation("Default temporary workspace is not found")
        return found

    def is_temporary_workspace(self, ws: Workspace | str | None) -> bool:
        """Whether ``ws`` is the default temporary workspace (names compare case-sensitively)."""
        return isinstance(ws, Workspace) and ws.name == self.config.default_temporary_workspace

    def temporary_table(self, parts: Sequence[str]) -> TemporaryTable | None:
        """The session's temporary table a name means, if any.

        Only a bare name, or a name whose schema part resolves to the default temporary
        workspace (``dfs.tmp.t``, ``tmp.t`` after ``USE dfs``), can mean a temporary table.
        """
        if not parts or not self.temporary:
            return None
        name = parts[-1].lstrip("/")
        schema_parts = list(parts[:-1])
        if schema_parts and not self.is_temporary_workspace(self.find_schema(schema_parts)):
            return None
        return self.temporary.get(name)

    def is_temporary_table(self, parts: Sequence[str]) -> bool:
        """Whether a table name (as written in a query) means one of the session's temporary
        tables; views use this to refuse them (a name that resolves nowhere means none)."""
        try:
            return self.temporary_table(parts) is not None
        except UserError:
            return False

    def resolve_table(self, parts: Sequence[str]) -> TableRef:
        """What a table name in the session's query means: a temporary table first, then
        views and files under the default schema.

        Raises:
            UserError: VALIDATION for unknown schemas; PERMISSION for denied paths (another
                session's temporary location among them).
        """
        temp = self.temporary_table(parts)
        if temp is not None:
            ws = self.temporary_workspace()
            return FileTable(ws.name, parts[-1].lstrip("/"), ws, temp.location)
        # a file table's path has met the denied paths in its workspace's resolution
        return self.resolve_persistent_table(parts, self.default_schema)
