"""PEP 249 (DB-API 2.0) over an auger session, plus Arrow, pandas and Spark one call away.

>>> import auger
>>> with auger.connect() as conn:                                   # doctest: +SKIP
...     cur = conn.cursor()
...     cur.execute("SELECT n_name FROM cp.`tpch/nation.parquet` WHERE n_regionkey = ?", (1,))
...     cur.fetchall()

Parameters use ``qmark`` style and are bound as SQL literals by the tokenizer, never by string
pasting into the statement text, so a parameter cannot change the statement's shape.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from auger.errors import AugerError, ErrorKind, UserError

__all__ = [
    "Connection",
    "Cursor",
    "DataError",
    "DatabaseError",
    "Error",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "Warning",
    "apilevel",
    "connect",
    "paramstyle",
    "threadsafety",
]

apilevel = "2.0"
threadsafety = 1  # threads may share the module, not connections
paramstyle = "qmark"


class Warning(Exception):
    pass


class Error(AugerError):
    """PEP 249 root; ``kind`` carries Drill's error kind, ``context`` its context lines."""

    def __init__(self, message: str, kind: ErrorKind | None = None, context: Sequence[str] = ()):
        super().__init__(message)
        self.kind = kind
        self.context = list(context)


class InterfaceError(Error):
    pass


class DatabaseError(Error):
    pass


class DataError(DatabaseError):
    pass


class OperationalError(DatabaseError):
    pass


class IntegrityError(DatabaseError):
    pass


class InternalError(DatabaseError):
    pass


class ProgrammingError(DatabaseError):
    pass


class NotSupportedError(DatabaseError):
    pass


# Drill error kind → PEP 249 class (STYLE #9: a table, not an if chain).
_KIND_TO_CLASS: dict[ErrorKind, type[Error]] = {
    ErrorKind.PARSE: ProgrammingError,
    ErrorKind.VALIDATION: ProgrammingError,
    ErrorKind.PERMISSION: ProgrammingError,
    ErrorKind.PLAN: ProgrammingError,
    ErrorKind.FUNCTION: DataError,
    ErrorKind.DATA_READ: DataError,
    ErrorKind.DATA_WRITE: DataError,
    ErrorKind.UNSUPPORTED_OPERATION: NotSupportedError,
    ErrorKind.RESOURCE: OperationalError,
    ErrorKind.CONNECTION: OperationalError,
    ErrorKind.EXECUTION: OperationalError,
    ErrorKind.SYSTEM: InternalError,
    ErrorKind.INTERNAL: InternalError,
}


def _to_dbapi_error(exc: UserError) -> Error:
    cls = _KIND_TO_CLASS.get(exc.kind, DatabaseError)
    return cls(str(exc), exc.kind, exc.context)


# ------------------------------------------------------------------ parameter binding
def _literal(value: Any) -> str:
    """A Python value as a Drill SQL literal."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return f"CAST('{value}' AS DOUBLE)"
        return repr(value)
    if isinstance(value, decimal.Decimal):
        digits, exponent = value.as_tuple().digits, int(value.as_tuple().exponent)
        scale = max(-exponent, 0)
        precision = max(len(digits), scale, 1)
        return f"CAST('{value}' AS DECIMAL({precision}, {scale}))"
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, dt.time):
        return f"TIME '{value.isoformat()}'"
    if isinstance(value, bytes | bytearray):
        return f"X'{bytes(value).hex()}'"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    raise InterfaceError(f"Cannot bind a parameter of type {type(value).__name__}")


def bind_parameters(sql: str, params: Sequence[Any] | Mapping[str, Any] | None) -> str:
    """Replace each ``?`` placeholder outside quotes/comments with a literal."""
    if params is None:
        return sql
    if isinstance(params, Mapping):
        raise InterfaceError("paramstyle is qmark: pass parameters as a sequence")
    from sqlglot.tokens import TokenType

    from auger.sql.dialect import AugerDrill

    tokens = [t for t in AugerDrill().tokenize(sql) if t.token_type == TokenType.PLACEHOLDER]
    if len(tokens) != len(params):
        raise ProgrammingError(
            f"The statement has {len(tokens)} parameter markers but {len(params)} values were given"
        )
    out, last = [], 0
    for tok, value in zip(tokens, params, strict=True):
        out.append(sql[last : tok.start])
        out.append(_literal(value))
        last = tok.end + 1
    out.append(sql[last:])
    return "".join(out)


# ------------------------------------------------------------------ cursor
class Cursor:
    """A PEP 249 cursor; rows are streamed from Spark batch by batch."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.arraysize = 1
        self._result: Any = None
        self._description: list[tuple[Any, ...]] | None = None
        self._batches: Iterator[pa.RecordBatch] | None = None
        self._buffer: list[tuple[Any, ...]] = []
        self._rownumber = 0
        self.rowcount = -1
        self.closed = False
        self.warnings: list[str] = []

    @property
    def description(self) -> list[tuple[Any, ...]] | None:
        return self._description

    def _check(self) -> None:
        if self.closed:
            raise InterfaceError("Cursor is closed")
        self.connection._check()

    def execute(self, operation: str, parameters: Sequence[Any] | None = None) -> Cursor:
        self._check()
        sql = bind_parameters(operation, parameters)
        try:
            result = self.connection.session.execute(sql)
            self._description = [
                (
                    col.name,
                    col.type.sql_name if col.mode.value != "REPEATED" else "ARRAY",
                    None,
                    None,
                    col.precision or None,
                    col.scale or None,
                    col.mode.value != "REQUIRED",
                )
                for col in result.schema
            ]
        except UserError as exc:
            self._reset()
            raise _to_dbapi_error(exc) from None
        self._result = result
        self._batches = None
        self._buffer = []
        self._rownumber = 0
        self.warnings = list(result.warnings)
        self.rowcount = result.table.num_rows if result.table is not None else -1
        return self

    def executemany(self, operation: str, seq_of_parameters: Sequence[Sequence[Any]]) -> Cursor:
        for params in seq_of_parameters:
            self.execute(operation, params)
        return self

    def _reset(self) -> None:
        self._result = None
        self._description = None
        self._batches = None
        self._buffer = []
        self.rowcount = -1

    def _need_result(self) -> Any:
        self._check()
        if self._result is None:
            raise ProgrammingError("No statement has been executed, or it returned no rows")
        return self._result

    def _stream(self) -> Iterator[pa.RecordBatch]:
        result = self._need_result()
        if self._batches is None:
            self._batches = _arrow_batches(result)
        return self._batches

    def _fill(self, n: int | None) -> None:
        stream = self._stream()
        while n is None or len(self._buffer) < n:
            batch = next(stream, None)
            if batch is None:
                break
            self._buffer.extend(_rows(batch))

    def fetchone(self) -> tuple[Any, ...] | None:
        self._fill(1)
        if not self._buffer:
            return None
        self._rownumber += 1
        return self._buffer.pop(0)

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        n = self.arraysize if size is None else size
        self._fill(n)
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        self._rownumber += len(out)
        return out

    def fetchall(self) -> list[tuple[Any, ...]]:
        self._fill(None)
        out, self._buffer = self._buffer, []
        self._rownumber += len(out)
        if self.rowcount < 0:
            self.rowcount = self._rownumber
        return out

    def fetch_arrow_table(self) -> pa.Table:
        """The remaining rows as one ``pyarrow.Table``."""
        result = self._need_result()
        if self._batches is None and not self._buffer:
            table = result.to_arrow()
            self._batches = iter(())
            return table
        rows = self.fetchall()
        schema = result.to_arrow().schema if result.table is not None else None
        return pa.Table.from_pylist(
            [dict(zip(self._names(), r, strict=True)) for r in rows], schema=schema
        )

    def fetch_df(self) -> Any:
        """The remaining rows as a ``pandas.DataFrame``."""
        return self.fetch_arrow_table().to_pandas()

    def _names(self) -> list[str]:
        return [d[0] for d in self._description or []]

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        while True:
            row = self.fetchone()
            if row is None:
                return
            yield row

    def setinputsizes(self, sizes: Any) -> None:
        pass

    def setoutputsize(self, size: Any, column: Any = None) -> None:
        pass

    def close(self) -> None:
        self.closed = True
        self._reset()

    def __enter__(self) -> Cursor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _arrow_batches(result: Any) -> Iterator[pa.RecordBatch]:
    """Batches of a result; Spark results stream through ``toLocalIterator``-style chunks."""
    if result.table is not None:
        yield from result.table.to_batches()
        return
    from auger.spark.errors import unwrap_spark_error

    try:
        table = result.to_arrow()
    except UserError:
        raise
    except Exception as exc:
        raise unwrap_spark_error(exc) from exc
    yield from table.to_batches()


def _rows(batch: pa.RecordBatch) -> list[tuple[Any, ...]]:
    cols = [c.to_pylist() for c in batch.columns]
    return list(zip(*cols, strict=True)) if cols else [() for _ in range(batch.num_rows)]


# ------------------------------------------------------------------ connection
class Connection:
    """One user session of the embedded engine."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.closed = False

    def _check(self) -> None:
        if self.closed:
            raise InterfaceError("Connection is closed")

    def cursor(self) -> Cursor:
        self._check()
        return Cursor(self)

    def execute(self, sql: str, parameters: Sequence[Any] | None = None) -> Cursor:
        """Shortcut: a new cursor with the statement executed."""
        return self.cursor().execute(sql, parameters)

    def sql(self, sql: str, parameters: Sequence[Any] | None = None) -> Any:
        """The ``pyspark.sql.DataFrame`` of a SELECT, for PySpark users."""
        self._check()
        try:
            result = self.session.execute(bind_parameters(sql, parameters))
        except UserError as exc:
            raise _to_dbapi_error(exc) from None
        if result.dataframe is not None:
            return result.dataframe
        return self.session.engine.spark.createDataFrame(result.table)

    def commit(self) -> None:
        """Statements take effect at once; commit has nothing to do."""
        self._check()

    def rollback(self) -> None:
        raise NotSupportedError("auger has no transactions")

    def close(self) -> None:
        """Close the session: its temporary tables are dropped."""
        if not self.closed:
            self.closed = True
            self.session.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(config: Any = None, user: str | None = None) -> Connection:
    """Open a connection: one new session on the embedded engine.

    Args:
        config: a TOML path or a dict (merged over the embedded defaults); None for defaults.
        user: the session's user name (default: the OS user).
    """
    from auger.engine import Engine

    try:
        engine = Engine.default() if config is None else Engine(config)
    except UserError as exc:
        raise _to_dbapi_error(exc) from None
    return Connection(engine.open_session(user))
