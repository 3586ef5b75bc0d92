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
from typing import TYPE_CHECKING

from auger.errors import UserError
from auger.options import SessionOptions
from auger.spark.errors import unwrap_spark_error
from auger.sql.catalog.resolution import SessionCatalog
from auger.sql.context import StatementContext
from auger.sql.recordings import Recordings
from auger.storage.denied import PathGuard, TemporaryLocations
from auger.storage.temporary import SessionTemporaryTables

if TYPE_CHECKING:
    from auger.engine import Engine
    from auger.sql.context import StatementContext
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
        owner = engine.identity
        self.temporary = SessionTemporaryTables(self.id, user, owner)
        #: what this session may not reach: the engine's denied paths and the temporary
        #: locations of every other session
        self.path_guard = PathGuard(lambda: engine.denied_paths, self._temporary_locations)

    def catalog(self) -> SessionCatalog:
        """What names mean in this session now: the engine's schemas (its denied paths
        applied), the session's temporary tables and default schema. A statement's catalog
        is its own (see :meth:`statement_context`); ``USE`` in it changes the session's."""
        return SessionCatalog(
            self.engine.config, self.path_guard, self.temporary, self.default_schema
        )

    def statement_context(
        self, sql: str, record_scans: bool = False, row_cap: int = 0
    ) -> StatementContext:
        """The one value the SQL layer runs ``sql`` with (see :mod:`auger.sql.context`).

        Args:
            sql: the statement.
            record_scans: whether to record the tables the planner makes DataFrames of (the
                query profile draws its plan with them: ``QueryResult.planned_scans``).
            row_cap: the most rows the client will take of the answer (0: all).
        """
        # start-up cost: the planner's modules load with the first statement, not the session

        return StatementContext(
            sql=sql,
            catalog=self.catalog(),
            options=self.options,
            user=self.user,
            admin=self.admin,
            engine=self.engine,
            recordings=Recordings(scans=[] if record_scans else None),
            row_cap=max(row_cap, 0),
        )

    def _temporary_locations(self) -> TemporaryLocations:
        others: list[str] = []
        for session in self.engine.sessions():
            if session is not self:
                others.extend(session.temporary.locations)
        return TemporaryLocations(
            self.temporary.locations, others, self.engine.temporary_workspace_locations()
        )

    # ----- statements
    def execute(self, sql: str, record_scans: bool = False, row_cap: int = 0) -> QueryResult:
        """Run one statement and return its result (SELECTs stay lazy until fetched).

        With ``record_scans``, the result names the tables its plan read
        (``QueryResult.planned_scans``, for a query profile). ``row_cap``: the most rows the
        caller will take of the answer (0: all), which plans it for those rows.
        """
        # start-up cost: the SQL package (and sqlglot) load with the first statement
        # deferred: loads sqlglot (heavy)
        from auger.sql.router import execute_statement

        if self.closed:
            raise UserError.validation("The session is closed")
        with self._lock, self.engine.running_statement():
            statement = self.statement_context(sql, record_scans, row_cap)
            try:
                result = execute_statement(statement)
            except UserError:
                raise
            except Exception as exc:
                _log.debug("statement failed", exc_info=True)
                raise unwrap_spark_error(exc, sql) from exc
            self.default_schema = statement.default_schema  # ``USE`` changed it
            return result

    def use_schema(self, name: str) -> str:
        """Make ``name`` the default schema (as ``USE`` does); returns its full name."""
        with self._lock:
            catalog = self.catalog()
            full = catalog.use_schema(name)
            self.default_schema = catalog.default_schema
            return full

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
