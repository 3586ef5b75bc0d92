"""A user session: identity, options, default schema and (later) temporary tables.

Every client is exactly one session: a DB-API connection, a shell, a REST cookie. Closing the
session releases everything it owns.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from auger.errors import UserError
from auger.options import SessionOptions
from auger.sql.catalog import Catalog, TableRef

if TYPE_CHECKING:
    from auger.engine import Engine
    from auger.sql.result import QueryResult

__all__ = ["UserSession"]

_log = logging.getLogger(__name__)


class UserSession:
    """One user's session on an engine.

    Attributes:
        id: a random UUID, also the name of the session's temporary-table directory.
        user: the user name (the process user when no authentication is configured).
        options: session option values over the engine's system values.
        default_schema: the schema set by ``USE``, or None.
    """

    def __init__(self, engine: Engine, user: str, admin: bool = True) -> None:
        self.id = str(uuid.uuid4())
        self.engine = engine
        self.user = user
        self.admin = admin
        self.options = SessionOptions(engine.system_options)
        self.default_schema: str | None = None
        self.closed = False
        self._lock = threading.RLock()

    @property
    def catalog(self) -> Catalog:
        return self.engine.catalog

    # ----- statements
    def execute(self, sql: str) -> QueryResult:
        """Run one statement and return its result (SELECTs stay lazy until fetched)."""
        from auger.sql.router import execute_statement

        if self.closed:
            raise UserError.validation("The session is closed")
        with self._lock:
            try:
                return execute_statement(sql, self)
            except UserError:
                raise
            except Exception as exc:
                from auger.spark.errors import unwrap_spark_error

                _log.debug("statement failed", exc_info=True)
                raise unwrap_spark_error(exc) from exc

    # ----- names
    def use_schema(self, name: str) -> str:
        found = self.catalog.resolve_schema(name, self.default_schema)
        full = found if isinstance(found, str) else found.name
        self.default_schema = full
        return full

    def resolve_table(self, parts: Sequence[str]) -> TableRef:
        return self.catalog.resolve_table(parts, self.default_schema)

    def table_dataframe(self, ref: TableRef) -> Any:
        raise UserError.unsupported(
            f"Reading {type(ref).__name__} [{ref.name}] is not supported yet"
        )

    def require_admin(self, what: str) -> None:
        if not self.admin:
            raise UserError.permission(
                f"{what} needs an administrator; user [{self.user}] is not one"
            )

    # ----- life cycle
    def close(self) -> None:
        """Release the session (idempotent)."""
        if self.closed:
            return
        self.closed = True
        self.engine.forget_session(self)

    def __enter__(self) -> UserSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
