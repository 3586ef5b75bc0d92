"""A user session: identity, options, default schema and temporary tables.

Every client is exactly one session: a DB-API connection, a shell, a REST cookie. Closing the
session releases everything it owns; in particular its temporary tables: they live in the
session's own folder(s) of the default temporary workspace, are found by the names the user gave
them (case-insensitively, before persistent tables and views), and are deleted with the session.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from auger.errors import UserError
from auger.options import SessionOptions
from auger.spark.errors import statement_context, unwrap_spark_error
from auger.sql.catalog.resolution import Catalog, FileTable, TableRef
from auger.storage.denied import PathGuard, TemporaryLocations
from auger.storage.temporary import EngineIdentity, SessionTemporaryTables, TemporaryTable
from auger.storage.workspace import Workspace

if TYPE_CHECKING:
    from auger.engine import Engine
    from auger.sql.result import QueryResult

__all__ = ["UserSession"]

_log = logging.getLogger(__name__)


class UserSession:
    """One user's session on an engine.

    Attributes:
        id: a random UUID, also the name of the session's temporary-table folder.
        user: the user name (the process user when no authentication is configured).
        options: session option values over the engine's system values.
        default_schema: the schema set by ``USE``, or None.
        temporary: the session's temporary tables and the locations holding them.
    """

    def __init__(self, engine: Engine, user: str, admin: bool = True) -> None:
        self.id = str(uuid.uuid4())
        self.engine = engine
        self.user = user
        self.admin = admin
        self.options = SessionOptions(engine.system_options, None if admin else user)
        self.default_schema: str | None = None
        self.closed = False
        self._lock = threading.RLock()
        owner = getattr(engine, "identity", None) or EngineIdentity.current("unknown")
        self.temporary = SessionTemporaryTables(self.id, user, owner)
        #: what this session may not reach: the engine's denied paths and the temporary
        #: locations of every other session
        self.path_guard = PathGuard(
            lambda: getattr(engine, "denied_paths", ()), self._temporary_locations
        )

    @property
    def catalog(self) -> Catalog:
        """The engine's schemas as this session sees them (its denied paths applied)."""
        return Catalog(self.engine.config, self.path_guard)

    def _temporary_locations(self) -> TemporaryLocations:
        others: list[str] = []
        for session in self.engine.sessions():
            if session is not self:
                others.extend(session.temporary.locations)
        return TemporaryLocations(
            self.temporary.locations, others, self.engine.temporary_workspace_locations()
        )

    # ----- statements
    def execute(self, sql: str) -> QueryResult:
        """Run one statement and return its result (SELECTs stay lazy until fetched)."""
        # start-up cost: the SQL package (and sqlglot) load with the first statement
        from auger.sql.router import execute_statement

        if self.closed:
            raise UserError.validation("The session is closed")
        with self._lock, statement_context(sql):
            try:
                return execute_statement(sql, self)
            except UserError:
                raise
            except Exception as exc:
                _log.debug("statement failed", exc_info=True)
                raise unwrap_spark_error(exc) from exc

    # ----- names
    def use_schema(self, name: str) -> str:
        found = self.catalog.resolve_schema(name, self.default_schema)
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
            found = self.catalog.find_schema(attempt)
            if found is not None:
                return found
        return None

    def temporary_workspace(self) -> Workspace:
        """The default temporary workspace (``exec.default_temporary_workspace``).

        Raises:
            UserError: VALIDATION, when the configured workspace is gone.
        """
        name = self.engine.config.default_temporary_workspace
        found = self.catalog.find_schema(name.split("."))
        if not isinstance(found, Workspace) or found.name != name:
            raise UserError.validation("Default temporary workspace is not found")
        return found

    def is_temporary_workspace(self, ws: Workspace | str | None) -> bool:
        """Whether ``ws`` is the default temporary workspace (names compare case-sensitively)."""
        return (
            isinstance(ws, Workspace) and ws.name == self.engine.config.default_temporary_workspace
        )

    @property
    def temporary_tables(self) -> dict[str, str]:
        """Lower-cased temporary table name → generated name ``<session id>/<uuid>``."""
        return {key: t.generated for key, t in self.temporary.tables.items()}

    @property
    def temporary_locations(self) -> set[str]:
        """Every session temporary location this session has created."""
        return set(self.temporary.locations)

    def resolve_temporary_table_name(self, name: str) -> str | None:
        """The generated name of the temporary table ``name`` (any case), or None."""
        table = self.temporary.get(name)
        return None if table is None else table.generated

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
        """Whether a table name (as written in a query) means one of this session's temporary
        tables; views use this to refuse them."""
        return self.temporary_table(parts) is not None

    def resolve_table(self, parts: Sequence[str]) -> TableRef:
        """What a table name in this session's query means: a temporary table first, then
        views and files through the catalog.

        Raises:
            UserError: VALIDATION for unknown schemas; PERMISSION for denied paths (another
                session's temporary location among them).
        """
        temp = self.temporary_table(parts)
        if temp is not None:
            ws = self.temporary_workspace()
            return FileTable(ws.name, parts[-1].lstrip("/"), ws, temp.location)
        # a file table's path has met the denied paths in its workspace's resolution
        return self.catalog.resolve_table(parts, self.default_schema)

    def require_admin(self, what: str) -> None:
        if not self.admin:
            raise UserError.permission(
                f"{what} needs an administrator; user [{self.user}] is not one"
            )

    # ----- life cycle
    def close(self) -> None:
        """Release the session (idempotent): every temporary location it used is deleted."""
        if self.closed:
            return
        self.closed = True
        try:
            self.temporary.close()
        finally:
            self.engine.forget_session(self)

    def __enter__(self) -> UserSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
