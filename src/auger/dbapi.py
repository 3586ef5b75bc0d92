"""PEP 249 (DB-API 2.0) over an auger session, plus Arrow, pandas and Spark one call away.

>>> import auger
>>> with auger.connect() as conn:                                   # doctest: +SKIP
...     cur = conn.cursor()
...     cur.execute("SELECT n_name FROM cp.`tpch/nation.parquet` WHERE n_regionkey = ?", (1,))
...     cur.fetchall()

Why it is shaped this way:

- Parameters use ``qmark`` style. Placeholders are found by the SQL tokenizer (so a ``?`` inside a
  string, a backquoted name or a comment is left alone) and each value is written as a typed SQL
  literal, so a parameter can never change the statement's shape.
- A SELECT answers a lazy Spark DataFrame. ``fetchone``/``fetchmany``/iteration stream it one
  partition at a time as Arrow batches (a Spark job per partition, the next one prefetched), so a
  large result is never collected whole before the first row. ``fetchall``/``fetch_arrow_table``
  on an untouched result take Spark's bulk Arrow path instead, which runs all partitions at once.
- Every Spark job a cursor starts runs in a job group of its own, so ``Cursor.cancel()`` (from
  another thread, e.g. the shell's Ctrl-C) cancels exactly that statement and nothing else.
- Errors keep Drill's kind: ``str(exc)`` starts with ``VALIDATION ERROR: ...`` and ``exc.kind`` is
  the :class:`~auger.errors.ErrorKind`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import itertools
import math
import threading
import weakref
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from auger.errors import AugerError, ErrorKind, UserError
from auger.spark.errors import unwrap_spark_error

if TYPE_CHECKING:
    import pyarrow as pa

    from auger.spark import jobs

# pyarrow and auger.spark.jobs are imported where a statement runs, not here: this module is
# also loaded by every `auger` command and by the shell's client of a server (for the error
# classes), and those two imports were most of a warm `auger sql -e` (measured: benchmarks/
# bench_startup.py).

__all__ = [
    "BINARY",
    "DATETIME",
    "NUMBER",
    "ROWID",
    "STRING",
    "Binary",
    "Connection",
    "Cursor",
    "DataError",
    "DatabaseError",
    "Date",
    "DateFromTicks",
    "Error",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "Time",
    "TimeFromTicks",
    "Timestamp",
    "TimestampFromTicks",
    "Warning",
    "apilevel",
    "bind_parameters",
    "connect",
    "paramstyle",
    "threadsafety",
]

apilevel = "2.0"
threadsafety = 1  # threads may share the module, not connections
paramstyle = "qmark"


# ------------------------------------------------------------------ exceptions (PEP 249 tree)
class Warning(Exception):
    """PEP 249's warning class: auger never raises it; a statement's warnings are listed on
    ``Cursor.messages`` as ``(Warning, text)`` and on ``Cursor.warnings`` as text."""


class Error(AugerError):
    """PEP 249 root. ``kind`` is Drill's error kind, ``context`` its context lines.

    ``str(error)`` is Drill's text: ``KIND ERROR: message`` and, after a blank line, the context.
    """

    def __init__(
        self, message: str, kind: ErrorKind | None = None, context: Sequence[str] = ()
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.context = list(context)

    @property
    def summary(self) -> str:
        """The first line of the message (``KIND ERROR: message``)."""
        return str(self).split("\n", 1)[0]


class InterfaceError(Error):
    """Misuse of the interface (closed cursor, bad parameter type)."""


class DatabaseError(Error):
    """An error reported by the engine."""


class DataError(DatabaseError):
    """Bad data: malformed files, failed casts, overflow."""


class OperationalError(DatabaseError):
    """The engine could not run the statement (resources, cancelled, connection lost)."""


class IntegrityError(DatabaseError):
    """Never raised (auger has no constraints); here because PEP 249 names it."""


class InternalError(DatabaseError):
    """A fault inside auger or Spark (Drill's SYSTEM errors)."""


class ProgrammingError(DatabaseError):
    """Bad SQL: parse and validation errors, unknown tables, wrong parameter counts."""


class NotSupportedError(DatabaseError):
    """A statement or method auger does not support."""


CANCELLED_MESSAGE = "EXECUTION ERROR: Query cancelled by the user"

# Drill error kind → PEP 249 class: a table, not an if chain.
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


def to_dbapi_error(exc: BaseException) -> Error:
    """The PEP 249 exception for any error out of the engine or Spark."""
    if isinstance(exc, Error):
        return exc
    if not isinstance(exc, UserError):
        exc = unwrap_spark_error(exc)
    cls = _KIND_TO_CLASS.get(exc.kind, DatabaseError)
    return cls(str(exc), exc.kind, exc.context)


# ------------------------------------------------------------------ PEP 249 types and constructors
class _TypeGroup(frozenset[str]):
    """A PEP 249 type object: equal to every ``type_code`` of its group."""

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return other in self
        return frozenset.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = frozenset.__hash__


STRING = _TypeGroup({"CHARACTER VARYING", "VARCHAR", "CHAR", "CHARACTER"})
BINARY = _TypeGroup({"BINARY VARYING", "VARBINARY", "BINARY"})
NUMBER = _TypeGroup(
    {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "BOOLEAN"}
)
DATETIME = _TypeGroup(
    {"DATE", "TIME", "TIMESTAMP", "INTERVAL", "INTERVAL DAY TO SECOND", "INTERVAL YEAR TO MONTH"}
)
ROWID = _TypeGroup()

Date = dt.date
Time = dt.time
Timestamp = dt.datetime
Binary = bytes


def DateFromTicks(ticks: float) -> dt.date:
    return dt.date.fromtimestamp(ticks)


def TimeFromTicks(ticks: float) -> dt.time:
    return dt.datetime.fromtimestamp(ticks).time()


def TimestampFromTicks(ticks: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ticks)


# ------------------------------------------------------------------ parameter binding
def _literal(value: Any) -> str:
    """A Python value as a typed Drill SQL literal (never bare text from the value)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
            return f"CAST('{text}' AS DOUBLE)"
        # A bare 0.1 is a DECIMAL literal in SQL; a Python float is a DOUBLE.
        return f"CAST({float(value)!r} AS DOUBLE)"
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise InterfaceError(f"Cannot bind the non-finite decimal {value}")
        _sign, digits, exponent = value.as_tuple()
        scale = max(-int(exponent), 0)
        precision = max(len(digits) + max(int(exponent), 0), scale, 1)
        return f"CAST('{value:f}' AS DECIMAL({precision}, {scale}))"
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:  # Drill timestamps have no zone: store the UTC wall clock
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, dt.time):
        return f"TIME '{value.replace(tzinfo=None).isoformat()}'"
    if isinstance(value, bytes | bytearray | memoryview):
        return f"X'{bytes(value).hex()}'"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return _literal(value.item())
    raise InterfaceError(f"Cannot bind a parameter of type {type(value).__name__}")


def bind_parameters(sql: str, params: Sequence[Any] | Mapping[str, Any] | None) -> str:
    """Replace each ``?`` placeholder outside quotes, backquotes and comments with a literal.

    Raises:
        ProgrammingError: the number of values differs from the number of placeholders, or the
            statement cannot be tokenized.
        InterfaceError: parameters are not a sequence, or a value has no SQL literal.
    """
    if params is None:
        return sql
    if isinstance(params, Mapping | str | bytes):
        raise InterfaceError(
            "paramstyle is qmark: pass parameters as a sequence such as a tuple or a list"
        )
    params = list(params)
    # deferred: loads sqlglot (heavy)
    from sqlglot.errors import TokenError

    # deferred: loads sqlglot (heavy)
    from sqlglot.tokens import TokenType

    # deferred: loads sqlglot (heavy)
    from auger.sql.frontend.dialect import AugerDrill

    try:
        tokens = AugerDrill().tokenize(sql)
    except TokenError as exc:
        raise ProgrammingError(
            f"PARSE ERROR: Unable to tokenize the statement: {exc}", ErrorKind.PARSE
        ) from None
    marks = [t for t in tokens if t.token_type == TokenType.PLACEHOLDER and t.text == "?"]
    if len(marks) != len(params):
        raise ProgrammingError(
            f"VALIDATION ERROR: The statement has {len(marks)} parameter markers "
            f"but {len(params)} values were given",
            ErrorKind.VALIDATION,
        )
    out, last = [], 0
    for tok, value in zip(marks, params, strict=True):
        out.append(sql[last : tok.start])
        out.append(_literal(value))
        last = tok.end + 1
    out.append(sql[last:])
    return "".join(out)


# ------------------------------------------------------------------ results in memory
class _TableStream:
    """Batches of a table already in memory, with the same face as a Spark batch stream."""

    def __init__(self, table: pa.Table) -> None:
        self.schema = table.schema
        self._batches = iter(table.to_batches())

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return self

    def __next__(self) -> pa.RecordBatch:
        return next(self._batches)


def _values(column: Any) -> list[Any]:
    """Python values of one Arrow column; timestamps come back zone-less, as Drill's are.

    Spark ships TIMESTAMP as UTC instants (the session time zone is UTC), so the UTC wall clock
    is the Drill value.
    """
    # deferred: loads pyarrow (heavy)
    import pyarrow as pa

    kind = column.type
    if pa.types.is_timestamp(kind) and kind.tz is not None:
        column = column.cast(pa.timestamp(kind.unit))
    return list(column.to_pylist())


def _rows(batch: pa.RecordBatch | pa.Table) -> list[tuple[Any, ...]]:
    cols = [_values(c) for c in batch.columns]
    return list(zip(*cols, strict=True)) if cols else [() for _ in range(batch.num_rows)]


# ------------------------------------------------------------------ cursor
_group_ids = itertools.count(1)
#: Seconds between the cancels of a cancelled statement whose Spark work goes on: a job it
#: submits after a cancel (it was still planning, or between two stages) joins its group.
RECANCEL_INTERVAL = 0.5


class Cursor:
    """A PEP 249 cursor over one connection's session.

    Attributes:
        arraysize: rows ``fetchmany()`` returns when no size is given (PEP 249), default 1.
        rowcount: rows of the result once known (at once for DDL and metadata answers, after
            the last row of a SELECT has been fetched), otherwise -1.
        warnings: warnings of the last statement (columns dropped, schema conflicts resolved,
            columns no file has; records skipped, once its rows are fetched), as text.
        messages: the same as PEP 249's optional ``messages``: ``(Warning, text)`` tuples,
            cleared by each ``execute``.
        scan_statistics: per file scan of the last statement, its files listed, pruned and
            read, rows read and records skipped (the run-time figures once rows are fetched).
        statement: the kind of the last statement (``SELECT``, ``USE``...).
    """

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.arraysize = 1
        self.rowcount = -1
        self.lastrowid = None
        self.closed = False
        self.statement: str | None = None
        self._result: Any = None
        self._description: list[tuple[Any, ...]] | None = None
        self._stream: jobs.BatchStream | _TableStream | None = None
        self._rows: list[tuple[Any, ...]] = []
        self._pos = 0
        self._exhausted = False
        self._fetched = 0
        self._group: str | None = None
        self._cancelled = False
        self._sql = ""
        # set while none of this cursor's calls is running Spark work for its statement
        self._idle = threading.Event()
        self._idle.set()
        self._canceller: threading.Thread | None = None

    # ----- PEP 249 attributes
    @property
    def description(self) -> list[tuple[Any, ...]] | None:
        """``(name, type_code, display_size, internal_size, precision, scale, null_ok)`` per column.

        ``type_code`` is the Drill SQL type name (``INTEGER``, ``CHARACTER VARYING``, ``ARRAY``...),
        equal to the matching PEP 249 type object (``STRING``, ``NUMBER``, ``DATETIME``...).
        """
        return self._description

    @property
    def rownumber(self) -> int | None:
        """Index of the next row in the result (PEP 249 extension), or None without a result."""
        return None if self._result is None else self._fetched

    @property
    def warnings(self) -> list[str]:
        """The last statement's messages as text (see the class's attributes)."""
        return [] if self._result is None else self._result.messages()

    @property
    def messages(self) -> list[tuple[type[Warning], str]]:
        """PEP 249's ``messages``: the last statement's, as ``(Warning, text)``."""
        return [(Warning, text) for text in self.warnings]

    @property
    def scan_statistics(self) -> list[dict[str, Any]]:
        """The last statement's scan figures (see the class's attributes)."""
        return [] if self._result is None else self._result.statistics()

    @property
    def job_group(self) -> str | None:
        """The Spark job group of the current statement (for the Spark UI and cancelling)."""
        return self._group

    def running_stages(self) -> list[tuple[int, int, int]]:
        """The unfinished Spark stages of the running statement, ``(stage id, tasks done,
        tasks)``, for a progress line; empty when nothing runs."""
        if not self._group:
            return []
        # deferred: loads pyarrow (heavy)
        from auger.spark import jobs

        return jobs.running_stages(self._group)

    def _check(self) -> None:
        if self.closed:
            raise InterfaceError("Cursor is closed")
        self.connection._check()

    # ----- running statements
    def execute(self, operation: str, parameters: Sequence[Any] | None = None) -> Cursor:
        """Run one statement; SELECT results are fetched lazily.

        Raises:
            ProgrammingError, DataError, ...: the statement failed; ``str(exc)`` is Drill's text.
        """
        # deferred: loads pyarrow (heavy)
        from auger.spark import jobs

        self._check()
        self._reset()
        sql = bind_parameters(operation, parameters)
        session = self.connection.session
        self._group = f"auger-{session.id}-{next(_group_ids)}"
        self._cancelled = False
        self._sql = sql
        try:
            with self._working(), jobs.job_group(self._group, sql):
                result = session.execute(sql)
            description = _describe(result)
        except Exception as exc:
            self._reset()
            raise self._error(exc) from None
        self._raise_if_cancelled()
        self._result = result
        self._description = description
        self.statement = result.statement
        if result.table is not None:
            self.rowcount = result.table.num_rows
        return self

    def executemany(self, operation: str, seq_of_parameters: Sequence[Sequence[Any]]) -> Cursor:
        """Run the statement once per parameter sequence; the last result stays fetchable."""
        for params in seq_of_parameters:
            self.execute(operation, params)
        return self

    def cancel(self) -> None:
        """Cancel the Spark jobs of the running statement; safe to call from another thread.

        The thread waiting on the statement gets an ``OperationalError``; the session, its
        options and its temporary tables are unaffected.
        """
        # deferred: loads pyarrow (heavy)
        from auger.spark import jobs

        self._cancelled = True
        group = self._group
        if group is None:
            return
        jobs.cancel_group(group)
        if self._canceller is None or not self._canceller.is_alive():
            # until the statement's Spark work is over (or a new statement began)
            self._canceller = jobs.keep_cancelling(
                group,
                self._idle,
                RECANCEL_INTERVAL,
                lambda: self._group == group and not self.closed,
            )

    @contextlib.contextmanager
    def _working(self) -> Iterator[None]:
        """Marks a call running Spark work for the statement (what a cancel keeps cancelling)."""
        self._idle.clear()
        try:
            yield
        finally:
            self._idle.set()

    @property
    def cancelled(self) -> bool:
        """True once ``cancel()`` was called for the current statement."""
        return self._cancelled

    def _raise_if_cancelled(self) -> None:
        """Cancelled before its Spark jobs started (while planning, or Spark was starting)."""
        if self._cancelled:
            raise OperationalError(CANCELLED_MESSAGE, ErrorKind.EXECUTION)

    def _error(self, exc: BaseException) -> Error:
        """The PEP 249 error for a failure of this cursor's statement."""
        if self._cancelled and not isinstance(exc, UserError | Error):
            return OperationalError(CANCELLED_MESSAGE, ErrorKind.EXECUTION)
        return to_dbapi_error(exc)

    def _reset(self) -> None:
        self._release_stream()
        self._result = None
        self._description = None
        self._rows = []
        self._pos = 0
        self._exhausted = False
        self._fetched = 0
        self.rowcount = -1
        self.statement = None

    def _release_stream(self) -> None:
        """Give up a result that is still being streamed: its jobs are cancelled, its stream
        closed. A new statement, ``close()``, the connection's close and garbage collection
        all end here, so an abandoned result never keeps Spark busy."""
        stream, self._stream = self._stream, None
        if stream is None or isinstance(stream, _TableStream) or self._exhausted:
            return
        # deferred: loads pyarrow (heavy)
        from auger.spark import jobs

        if self._group is not None:
            jobs.cancel_group(self._group)
        stream.close()

    def _need_result(self) -> Any:
        self._check()
        if self._result is None:
            raise ProgrammingError("No statement has been executed, or it returned no rows")
        return self._result

    # ----- the row stream
    def _open_stream(self) -> jobs.BatchStream | _TableStream:
        # deferred: loads pyarrow (heavy)
        from auger.spark import jobs

        result = self._need_result()
        if self._stream is None:
            if result.table is not None:
                self._stream = _TableStream(result.table)
            else:
                self._raise_if_cancelled()
                try:
                    limit = jobs.ResultLimit.from_options(self.connection.session.options)
                    self._stream = jobs.BatchStream(
                        result.dataframe, self._group or "", self._sql, limit
                    )
                except jobs.NoArrowSchema:
                    # A type Spark's Python side cannot name in Arrow: take the bulk path.
                    self._stream = _TableStream(self.fetch_arrow_table())
                    self._exhausted = False
                    self.rowcount = -1
                    self._fetched = 0
                except Exception as exc:
                    raise self._error(exc) from None
        return self._stream

    def _next_batch(self) -> bool:
        """Load the next non-empty batch into the row buffer; False at the end."""
        if self._exhausted:
            return False
        stream = self._open_stream()
        while True:
            if self._cancelled and not isinstance(stream, _TableStream):
                self._exhausted = True
                self._release_stream()
                raise OperationalError(CANCELLED_MESSAGE, ErrorKind.EXECUTION)
            try:
                with self._working():
                    batch = next(stream)
            except StopIteration:
                self._finish()
                return False
            except Exception as exc:
                self._exhausted = True
                raise self._error(exc) from None
            if batch.num_rows:
                self._rows, self._pos = _rows(batch), 0
                return True

    def _finish(self) -> None:
        self._exhausted = True
        self._rows, self._pos = [], 0
        if self.rowcount < 0:
            self.rowcount = self._fetched

    def _take(self, n: int | None) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        while n is None or len(out) < n:
            if self._pos >= len(self._rows) and not self._next_batch():
                break
            end = len(self._rows) if n is None else min(len(self._rows), self._pos + n - len(out))
            out.extend(self._rows[self._pos : end])
            self._fetched += end - self._pos
            self._pos = end
        return out

    # ----- fetching
    def fetchone(self) -> tuple[Any, ...] | None:
        """The next row, or None when the result is exhausted."""
        rows = self._take(1)
        return rows[0] if rows else None

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        """Up to ``size`` (default ``arraysize``) more rows; an empty list at the end."""
        return self._take(self.arraysize if size is None else max(size, 0))

    def fetchall(self) -> list[tuple[Any, ...]]:
        """All remaining rows."""
        if self._untouched_dataframe():
            table = self.fetch_arrow_table()
            return _rows(table)
        return self._take(None)

    def _untouched_dataframe(self) -> bool:
        result = self._need_result()
        return result.table is None and self._stream is None and not self._exhausted

    def fetch_arrow_table(self) -> pa.Table:
        """The remaining rows as one ``pyarrow.Table`` (column types as Spark ships them)."""
        # deferred: loads pyarrow (heavy)
        import pyarrow as pa

        # deferred: loads pyarrow (heavy)
        from auger.spark import jobs

        result = self._need_result()
        if self._untouched_dataframe():
            self._raise_if_cancelled()
            limit = jobs.ResultLimit.from_options(self.connection.session.options)
            try:
                with self._working():
                    table = jobs.arrow_table(result.dataframe, self._group or "", self._sql)
                # the result limit holds on the bulk path too (Spark's result-size limit
                # bounds what it collected)
                for _ in limit.batches(iter(table.to_batches())):
                    pass
            except Exception as exc:
                raise self._error(exc) from None
            # Cancelling ends the group's running jobs; a job of the statement that Spark
            # started after that (a later stage) can still finish. The cancel wins anyway.
            self._raise_if_cancelled()
            self._fetched += table.num_rows
            self._finish()
            return table
        if result.table is not None and self._stream is None and not self._exhausted:
            table = result.table
            self._fetched += table.num_rows
            self._finish()
            return table
        stream = self._open_stream()
        schema = stream.schema
        names = schema.names
        head = self._rows[self._pos :]
        self._fetched += len(head)
        self._rows, self._pos = [], 0
        parts: list[pa.Table] = []
        if head:
            parts.append(
                pa.Table.from_pylist([dict(zip(names, r, strict=True)) for r in head], schema)
            )
        if not self._exhausted:
            try:
                rest = list(stream)
            except Exception as exc:
                self._exhausted = True
                raise self._error(exc) from None
            self._fetched += sum(b.num_rows for b in rest)
            if rest:
                parts.append(pa.Table.from_batches(rest, schema))
        self._finish()
        return pa.concat_tables(parts) if parts else schema.empty_table()

    def fetch_df(self) -> Any:
        """The remaining rows as a ``pandas.DataFrame``."""
        return self.fetch_arrow_table().to_pandas()

    fetchdf = fetch_df  # DuckDB's spelling

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        while True:
            row = self.fetchone()
            if row is None:
                return
            yield row

    # ----- PEP 249 no-ops and optional methods
    def setinputsizes(self, sizes: Any) -> None:
        """Does nothing (PEP 249 allows it)."""

    def setoutputsize(self, size: Any, column: Any = None) -> None:
        """Does nothing (PEP 249 allows it)."""

    def nextset(self) -> None:
        """auger statements answer one result set: always None."""
        self._need_result()
        return None

    def close(self) -> None:
        """Release the result (cancelling the jobs of one still being streamed); later calls
        raise ``InterfaceError``. Idempotent."""
        self.closed = True
        self._reset()
        self.connection._forget(self)

    def __del__(self) -> None:
        # A cursor dropped mid-fetch must not leave its statement running. Nothing may be
        # printed from here: at interpreter exit Spark may already be gone.
        with contextlib.suppress(Exception):
            self._release_stream()

    def __enter__(self) -> Cursor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _describe(result: Any) -> list[tuple[Any, ...]]:
    out = []
    for col in result.schema:
        repeated = col.mode.value == "REPEATED"
        out.append(
            (
                col.name,
                "ARRAY" if repeated else col.type.sql_name,
                None,
                None,
                col.precision or None,
                col.scale if col.type.value == "VARDECIMAL" else None,
                repeated or col.mode.value != "REQUIRED",
            )
        )
    return out


# ------------------------------------------------------------------ connection
class Connection:
    """One user session of the embedded engine.

    The PEP 249 exception classes are also attributes (``conn.ProgrammingError``), as the PEP's
    optional extension suggests, so code holding only a connection can catch them.
    """

    Error = Error
    Warning = Warning
    InterfaceError = InterfaceError
    DatabaseError = DatabaseError
    DataError = DataError
    OperationalError = OperationalError
    IntegrityError = IntegrityError
    InternalError = InternalError
    ProgrammingError = ProgrammingError
    NotSupportedError = NotSupportedError

    def __init__(self, session: Any) -> None:
        self.session = session
        self.closed = False
        # Open cursors, held weakly so that dropping one still collects it.
        self._cursors: weakref.WeakSet[Cursor] = weakref.WeakSet()

    def _check(self) -> None:
        if self.closed:
            raise InterfaceError("Connection is closed")

    def cursor(self) -> Cursor:
        self._check()
        cur = Cursor(self)
        self._cursors.add(cur)
        return cur

    def _forget(self, cursor: Cursor) -> None:
        self._cursors.discard(cursor)

    def execute(self, sql: str, parameters: Sequence[Any] | None = None) -> Cursor:
        """Shortcut (as in DuckDB and sqlite3): a new cursor with the statement executed."""
        return self.cursor().execute(sql, parameters)

    def sql(self, sql: str, parameters: Sequence[Any] | None = None) -> Any:
        """The ``pyspark.sql.DataFrame`` of a statement, for PySpark users.

        A SELECT gives its lazy DataFrame (nothing runs until a Spark action); DDL and metadata
        statements run now and give their small answer as a DataFrame.
        """
        self._check()
        try:
            result = self.session.execute(bind_parameters(sql, parameters))
        except Exception as exc:
            raise to_dbapi_error(exc) from None
        frame = result.frame()
        if frame is not None:
            return frame
        return self.session.engine.spark.createDataFrame(result.table)

    def commit(self) -> None:
        """Statements take effect at once; commit has nothing to do."""
        self._check()

    def rollback(self) -> None:
        """auger has no transactions (as Drill)."""
        self._check()
        raise NotSupportedError("UNSUPPORTED_OPERATION ERROR: auger has no transactions")

    def close(self) -> None:
        """Close the open cursors (cancelling what they still stream), then the session: its
        temporary tables are dropped. Idempotent."""
        if not self.closed:
            for cur in list(self._cursors):
                cur.close()
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

    Raises:
        OperationalError, InternalError: the configuration is invalid or the engine cannot start.
    """
    # start-up cost: `import auger` does not load the engine, its sessions or the SQL package
    # deferred: loads pyarrow (heavy)
    from auger.engine import Engine

    try:
        engine = Engine.default() if config is None else Engine(config)
    except UserError as exc:
        raise to_dbapi_error(exc) from None
    return Connection(engine.open_session(user))
