"""The ``auger`` dialects: embedded (``auger://``) and over Drill's REST API (``auger+http://``).

Both share the SQL they write (:mod:`auger.sqlalchemy.compiler`) and what the inspector asks
(:mod:`auger.sqlalchemy.reflection`); they differ only in how a DB-API connection is opened. A
pooled connection is one auger session, so ``USE``, session options and temporary tables last
as long as the pool keeps it; the URL's database (``/dfs.tmp``) is the schema each new
connection starts in. auger has no transactions: commit and rollback do nothing.
"""

from __future__ import annotations

import types
from typing import Any

from sqlalchemy.engine import default, reflection
from sqlalchemy.engine.interfaces import ReflectedColumn, ReflectedPrimaryKeyConstraint
from sqlalchemy.engine.url import URL
from sqlalchemy.sql import compiler

import auger.dbapi
from auger.cli.remote import RemoteConnection, connect_remote
from auger.engine import Engine
from auger.errors import ErrorKind
from auger.sqlalchemy.compiler import AugerCompiler, AugerIdentifierPreparer, AugerTypeCompiler
from auger.sqlalchemy.reflection import (
    COLUMNS_SQL,
    SCHEMAS_SQL,
    TABLES_SQL,
    VIEW_DEFINITION_SQL,
    VIEWS_SQL,
    column_info,
    columns_from_description,
    no_such_table,
)

__all__ = ["AugerDialect", "AugerHttpDialect", "AugerHttpsDialect"]


def _schema_of(url: URL) -> str | None:
    """The default schema a URL names: ``/dfs.tmp`` (or ``/dfs/tmp``, as sqlalchemy-drill's
    URLs write it) is ``dfs.tmp``."""
    if not url.database:
        return None
    return url.database.strip("/").replace("/", ".") or None


class _AugerBase(default.DefaultDialect):
    """What both dialects share: SQL writing, reflection, no transactions."""

    name = "auger"
    preparer: type[compiler.IdentifierPreparer] = AugerIdentifierPreparer
    statement_compiler = AugerCompiler
    type_compiler_cls = AugerTypeCompiler
    default_paramstyle = "qmark"
    supports_statement_cache = True
    supports_alter = False
    supports_native_boolean = True
    supports_native_decimal = True
    supports_sane_rowcount = False
    supports_sane_multi_rowcount = False
    supports_default_values = False
    supports_empty_insert = False
    supports_multivalues_insert = False
    supports_sequences = False
    supports_views = True
    postfetch_lastrowid = False
    returns_native_bytes = True

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.url_schema: str | None = None

    @classmethod
    def import_dbapi(cls) -> types.ModuleType:
        # auger's PEP 249 module: its exception classes are the ones both connections raise
        return auger.dbapi

    # ----- transactions: Drill has none
    def do_begin(self, dbapi_connection: Any) -> None:
        pass

    def do_commit(self, dbapi_connection: Any) -> None:
        pass

    def do_rollback(self, dbapi_connection: Any) -> None:
        pass

    def _get_default_schema_name(self, connection: Any) -> Any:  # None: no default schema
        return self.url_schema

    def _get_server_version_info(self, connection: Any) -> tuple[int, ...] | None:
        return None

    def _use_schema(self, conn: Any, schema: str | None) -> Any:
        """Make ``schema`` the new connection's default schema, as the URL asks."""
        if schema:
            quoted = ".".join(f"`{part.replace('`', '``')}`" for part in schema.split("."))
            try:
                conn.cursor().execute(f"USE {quoted}")
            except Exception:
                conn.close()
                raise
        return conn

    def is_disconnect(self, e: Any, connection: Any, cursor: Any) -> bool:
        """A server that cannot be reached: the pool drops the connection."""
        return isinstance(e, auger.dbapi.Error) and e.kind is ErrorKind.CONNECTION

    # ----- reflection
    def _schema(self, schema: str | None) -> str | None:
        return schema if schema is not None else self.default_schema_name

    @reflection.cache
    def get_schema_names(self, connection: Any, **kw: Any) -> list[str]:
        return [r[0] for r in connection.exec_driver_sql(SCHEMAS_SQL)]

    @reflection.cache
    def get_table_names(self, connection: Any, schema: str | None = None, **kw: Any) -> list[str]:
        """Tables of ``schema`` (default: the URL's). A file workspace lists its views and,
        when writable, the files and directories a format reads; a read-only one such as
        ``dfs.root`` or ``cp`` lists no files (it may be a whole disk), but a file in it is
        still reflected by name (``get_columns``, ``has_table``)."""
        schema = self._schema(schema)
        if schema is None:
            return []
        return [r[0] for r in connection.exec_driver_sql(TABLES_SQL, (schema,))]

    @reflection.cache
    def get_view_names(self, connection: Any, schema: str | None = None, **kw: Any) -> list[str]:
        schema = self._schema(schema)
        if schema is None:
            return []
        return [r[0] for r in connection.exec_driver_sql(VIEWS_SQL, (schema,))]

    @reflection.cache
    def get_view_definition(
        self, connection: Any, view_name: str, schema: str | None = None, **kw: Any
    ) -> str:
        schema = self._schema(schema)
        row = connection.exec_driver_sql(VIEW_DEFINITION_SQL, (schema, view_name)).first()
        if row is None:
            raise no_such_table(view_name, schema)
        return str(row[0])

    @reflection.cache
    def get_columns(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[ReflectedColumn]:
        """The columns INFORMATION_SCHEMA stores for the table (views, provided schemas,
        system tables), else those of the table's plan.

        Raises:
            NoSuchTableError: neither knows the table.
        """
        schema = self._schema(schema)
        if schema is not None:
            rows = connection.exec_driver_sql(COLUMNS_SQL, (schema, table_name)).fetchall()
            if rows:
                return [
                    column_info(name, dtype, nullable != "NO", length, precision, scale)
                    for name, dtype, nullable, length, precision, scale in rows
                ]
        description = self._planned_description(connection, table_name, schema)
        if description is None:
            raise no_such_table(table_name, schema)
        return columns_from_description(description)

    def _planned_description(
        self, connection: Any, table_name: str, schema: str | None
    ) -> Any | None:
        """The result description of ``SELECT * FROM table LIMIT 0``, or None when the table
        cannot be planned (it does not exist, or its files cannot be read)."""
        prep = self.identifier_preparer
        name = prep.quote(table_name)
        if schema is not None:
            name = f"{prep.quote_schema(schema)}.{name}"
        try:
            result = connection.exec_driver_sql(f"SELECT * FROM {name} LIMIT 0")
        except Exception as err:  # the statement's DB-API error, wrapped by SQLAlchemy
            if isinstance(getattr(err, "orig", None), auger.dbapi.DatabaseError):
                return None
            raise
        description = result.cursor.description
        result.close()
        return description

    def has_table(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> bool:
        schema = self._schema(schema)
        if schema is not None and table_name in self.get_table_names(connection, schema):
            return True
        if schema is not None and table_name in self.get_view_names(connection, schema):
            return True
        return self._planned_description(connection, table_name, schema) is not None

    def get_pk_constraint(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> ReflectedPrimaryKeyConstraint:
        return {"constrained_columns": [], "name": None}

    def get_foreign_keys(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[Any]:
        return []

    def get_indexes(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[Any]:
        return []

    def get_unique_constraints(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[Any]:
        return []

    def get_check_constraints(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[Any]:
        return []


class AugerDialect(_AugerBase):
    """``auger://[user@]/[schema][?config=/path/auger.toml]``: the embedded engine.

    All connections of one SQLAlchemy engine are sessions of one auger engine: the process's
    default engine, or one started from ``config`` for this SQLAlchemy engine.
    """

    driver = "embedded"
    supports_statement_cache = True  # SQLAlchemy asks each dialect class itself

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._engine: Engine | None = None

    def create_connect_args(self, url: URL) -> Any:
        self.url_schema = _schema_of(url)
        unknown = set(url.query) - {"config"}
        if unknown or url.host or url.port:
            port = f":{url.port}" if url.port else ""
            what = ", ".join(sorted(unknown)) or f"host ({url.host or ''}{port})"
            raise auger.dbapi.InterfaceError(
                f"The auger:// URL takes no {what}: the embedded engine runs in this process. "
                "Write auger:///dfs.tmp?config=/path/auger.toml, or auger+http://host:8047/dfs.tmp "
                "for a server."
            )
        config = url.query.get("config")
        return [], {
            "config": config if isinstance(config, str) else None,
            "user": url.username,
            "schema": self.url_schema,
        }

    def connect(self, *cargs: Any, **cparams: Any) -> Any:
        config, user, schema = cparams["config"], cparams["user"], cparams["schema"]
        if config is None:
            conn = auger.dbapi.connect(user=user)
        else:
            if self._engine is None or self._engine.closed:
                try:
                    self._engine = Engine(config)
                except auger.UserError as err:
                    raise auger.dbapi.to_dbapi_error(err) from None
            conn = auger.dbapi.Connection(self._engine.open_session(user))
        return self._use_schema(conn, schema)


class AugerHttpDialect(_AugerBase):
    """``auger+http://[user:password@]host[:8047]/[schema]``: a running ``auger serve`` (or a
    Drill) over Drill's REST API; each pooled connection holds one server session."""

    driver = "http"
    supports_statement_cache = True  # SQLAlchemy asks each dialect class itself
    scheme = "http"

    def create_connect_args(self, url: URL) -> Any:
        self.url_schema = _schema_of(url)
        if not url.host:
            raise auger.dbapi.InterfaceError(
                f"The auger+{self.scheme}:// URL needs the server's host: "
                f"auger+{self.scheme}://host:8047/dfs.tmp"
            )
        if url.query:
            raise auger.dbapi.InterfaceError(
                f"The auger+{self.scheme}:// URL takes no options ({', '.join(sorted(url.query))})"
            )
        return [], {
            "url": f"{self.scheme}://{url.host}:{url.port or 8047}",
            "user": url.username,
            "password": url.password,
            "schema": self.url_schema,
        }

    def connect(self, *cargs: Any, **cparams: Any) -> Any:
        conn: RemoteConnection = connect_remote(
            cparams["url"], user=cparams["user"], password=cparams["password"]
        )
        return self._use_schema(conn, cparams["schema"])


class AugerHttpsDialect(AugerHttpDialect):
    """``auger+https://``: as ``auger+http://``, over TLS."""

    driver = "https"
    supports_statement_cache = True  # SQLAlchemy asks each dialect class itself
    scheme = "https"
