"""The Arrow Flight SQL endpoint: BI tools and Arrow clients (ADBC, JDBC, ODBC) run SQL here.

It runs beside the REST API in the same process, on pyarrow's Flight server, and shares the REST
API's users, sessions and running queries (so profiles, the console's cancel button and session
clean-up cover Flight SQL queries too).

A statement is two calls. ``GetFlightInfo`` plans it in the caller's session (DDL and metadata
statements run there and then) and answers its Arrow schema and a ticket; ``DoGet`` on that
ticket runs the plan on Spark and streams the batches as Spark produces them, one partition at
a time (:class:`auger.spark.jobs.BatchStream`), so a large result never sits whole on the server.
The ticket names the statement, not the session: a client that keeps neither cookies nor tokens
still reads the answer of the statement it asked for. Each statement's Spark jobs run in a job
group named by its query id, which ``CancelFlightInfo`` and the older ``CancelQuery`` action
cancel, as does a client that goes away or cancels the call mid-stream (noticed at once, not
when the next batch is ready: :class:`auger.server.flight_watch.ClientWatch`).

Prepared statements keep their SQL text; parameters bound through ``DoPut`` are written into it
as typed SQL literals (:func:`auger.dbapi.bind_parameters`, the DB-API's binding), one
execution per parameter row for updates.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import secrets
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.flight as flight

from auger.dbapi import Error, bind_parameters
from auger.errors import UserError
from auger.projection import quoted
from auger.server import flight_catalog as catalog
from auger.server.flight_auth import MIDDLEWARE_KEY, CallSession, FlightAuth, HandshakeHandler
from auger.server.flight_errors import CANCELLED, flight_error
from auger.server.flight_watch import ClientWatch
from auger.server.flightsql_messages import message, pack, unpack
from auger.server.queries import CLIENT_GONE, USER_CANCEL
from auger.server.settings import STOP_WAIT
from auger.spark import jobs

if TYPE_CHECKING:
    from auger.server.app import ServerState
    from auger.server.queries import RunningQuery
    from auger.server.sessions import WebSession

__all__ = ["FlightSqlServer", "start_flight_server"]

_log = logging.getLogger(__name__)

#: Rows per batch of an answer already on the server (DDL, metadata).
_LOCAL_BATCH_ROWS = 65536
_ACTIONS = [
    ("CreatePreparedStatement", "Prepare a statement with ? parameters"),
    ("ClosePreparedStatement", "Forget a prepared statement"),
    ("CancelFlightInfo", "Cancel a running statement"),
    ("CancelQuery", "Cancel a running statement (older form)"),
    ("CloseSession", "End this connection's session, dropping its temporary tables"),
]


@dataclass
class _Pending:
    """A statement planned by GetFlightInfo, waiting for its DoGet."""

    schema: pa.Schema
    table: pa.Table | None = None
    dataframe: Any = None
    rq: RunningQuery | None = None
    web: WebSession | None = None
    created: float = field(default_factory=time.monotonic)


@dataclass
class _Prepared:
    sql: str
    web: WebSession
    params: list[tuple[Any, ...]] = field(default_factory=list)


class FlightSqlServer(flight.FlightServerBase):  # type: ignore[misc]
    """Flight SQL over the REST server's state (engine, sessions, users, running queries)."""

    def __init__(self, state: ServerState, location: str, **kwargs: Any) -> None:
        self.state = state
        self.auth = FlightAuth(state.settings, state.sessions, state.auth)
        super().__init__(
            location,
            auth_handler=HandshakeHandler(),
            middleware={MIDDLEWARE_KEY: self.auth},
            **kwargs,
        )
        self._pending: dict[bytes, _Pending] = {}
        self._prepared: dict[bytes, _Prepared] = {}
        self._lock = threading.Lock()

    def stop(self, wait: float = STOP_WAIT) -> None:
        """Stop serving: no new calls, and up to ``wait`` seconds for the running ones to end.

        Calls still running then are left: gRPC's shutdown has no bound of its own, so it is
        left waiting on a thread of its own, and pyarrow runs it again when the process exits
        (a server still running then may crash the interpreter): such a process ends without
        its exit hooks instead, once the caller has cleaned up (see
        :func:`_end_without_exit_hooks`)."""
        done = threading.Thread(target=self.shutdown, name="auger-flight-stop", daemon=True)
        done.start()
        done.join(wait)
        if not done.is_alive():
            return
        _log.warning(
            "Arrow Flight SQL: calls still open %g s after the server began to stop (a client "
            "that stopped reading its answer); stopping without them",
            wait,
        )
        # exit hooks run last registered first: this one before pyarrow's
        atexit.register(_end_without_exit_hooks)

    # ----- sessions
    def _web(self, context: Any) -> WebSession:
        call: CallSession | None = context.get_middleware(MIDDLEWARE_KEY)
        if call is None or call.web is None:
            raise flight.FlightUnauthenticatedError("This call needs a session")
        return call.web

    # ----- GetFlightInfo and GetSchema
    def get_flight_info(self, context: Any, descriptor: Any) -> flight.FlightInfo:
        try:
            handle, pending = self._plan(context, descriptor)
        except Exception as exc:
            raise flight_error(exc) from None
        endpoint = flight.FlightEndpoint(
            pack(message("TicketStatementQuery")(statement_handle=handle)), []
        )
        return flight.FlightInfo(pending.schema, descriptor, [endpoint], -1, -1)

    def get_schema(self, context: Any, descriptor: Any) -> flight.SchemaResult:
        info = self.get_flight_info(context, descriptor)
        handle = self._ticket_handle(info.endpoints[0].ticket.ticket)
        pending = self._take_pending(handle)
        if pending is not None:
            self._abandon(pending)
        return flight.SchemaResult(info.schema)

    def _plan(self, context: Any, descriptor: Any) -> tuple[bytes, _Pending]:
        command = unpack(descriptor.command or b"")
        if command is None:
            raise UserError.unsupported(
                "Not a Flight SQL command: send one of the arrow.flight.protocol.sql commands"
            )
        name, msg = command
        self._drop_stale()
        if name == "CommandStatementQuery":
            return self._statement(self._web(context), msg.query)
        if name == "CommandPreparedStatementQuery":
            prepared = self._prepared_statement(msg.prepared_statement_handle)
            rows = prepared.params or [()]
            if len(rows) > 1:
                raise UserError.validation(
                    f"A query runs with one row of parameters, not {len(rows)}: bind one row"
                )
            return self._statement(prepared.web, _bind(prepared.sql, rows[0]))
        return self._metadata(context, name, msg)

    def _statement(self, web: WebSession, sql: str) -> tuple[bytes, _Pending]:
        queries = self.state.queries
        rq = queries.start(web, sql)
        try:
            result = self._execute(rq, sql)
            if result.table is not None:
                pending = _Pending(result.table.schema, table=result.table)
            else:
                df = result.dataframe
                try:
                    schema = jobs.stream_schema(df)
                    pending = _Pending(schema, dataframe=df)
                except jobs.NoArrowSchema:  # a type Spark's Python side cannot name in Arrow
                    with jobs.job_group(rq.query_id, sql):
                        table = jobs.arrow_table(df, rq.query_id, sql)
                    pending = _Pending(table.schema, table=table)
        except BaseException as exc:
            self._failed(rq, exc)
            self.auth.release(web)
            raise
        pending.rq, pending.web = rq, web
        rq.profile.columns = list(pending.schema.names)
        handle = rq.query_id.encode()
        with self._lock:
            self._pending[handle] = pending
        return handle, pending

    def _execute(self, rq: RunningQuery, sql: str) -> Any:
        if rq.web.session.closed:
            raise UserError.validation("The session of this connection has ended: connect again")
        rq.profile.run_start = int(time.time() * 1000)
        with jobs.job_group(rq.query_id, sql, self.state.engine.spark):
            result = rq.web.session.execute(sql)
        rq.profile.planned = int(time.time() * 1000)
        rq.profile.warnings = list(result.warnings)
        return result

    def _failed(self, rq: RunningQuery, exc: BaseException) -> None:
        profile = rq.profile
        if rq.cancel_requested.is_set():
            profile.state = "CANCELED"
            profile.error = rq.cancel_reason or USER_CANCEL
        else:
            profile.state = "FAILED"
            profile.error = str(flight_error(exc))
        self.state.queries.finish(rq)

    def _metadata(self, context: Any, name: str, msg: Any) -> tuple[bytes, _Pending]:
        if name == "CommandGetSqlInfo":
            table = catalog.sql_info(list(msg.info))
        elif name == "CommandGetXdbcTypeInfo":
            table = catalog.xdbc_type_info(msg.data_type if msg.data_type else None)
        elif name == "CommandGetTableTypes":
            table = catalog.table_types()
        elif name == "CommandGetCatalogs":
            table = catalog.catalogs(self._runner(context))
        elif name == "CommandGetDbSchemas":
            table = catalog.db_schemas(
                self._runner(context), msg.catalog, msg.db_schema_filter_pattern
            )
        elif name == "CommandGetTables":
            web = self._web(context)
            table = catalog.tables(
                self._runner(context),
                msg.catalog,
                msg.db_schema_filter_pattern,
                msg.table_name_filter_pattern,
                list(msg.table_types),
                self._table_schema_reader(web) if msg.include_schema else None,
            )
        elif name == "CommandGetPrimaryKeys":
            table = catalog.PRIMARY_KEYS_SCHEMA.empty_table()
        elif name in (
            "CommandGetExportedKeys",
            "CommandGetImportedKeys",
            "CommandGetCrossReference",
        ):
            table = catalog.KEYS_SCHEMA.empty_table()
        else:
            raise UserError.unsupported(f"Flight SQL command {name} is not supported by auger")
        handle = secrets.token_bytes(16)
        call: CallSession | None = context.get_middleware(MIDDLEWARE_KEY)
        pending = _Pending(table.schema, table=table, web=call.web if call else None)
        with self._lock:
            self._pending[handle] = pending
        return handle, pending

    def _runner(self, context: Any) -> Callable[[str], pa.Table]:
        web = self._web(context)

        def run(sql: str) -> pa.Table:
            result = web.session.execute(sql)
            if result.table is not None:
                return result.table
            return jobs.to_arrow(result.dataframe)

        return run

    def _table_schema_reader(self, web: WebSession) -> Callable[[str, str], pa.Schema | None]:
        def read(schema_name: str, table_name: str) -> pa.Schema | None:
            parts = [p for p in schema_name.split(".") if p] + [table_name]
            name = ".".join(quoted(p) for p in parts)
            try:
                result = web.session.execute(f"SELECT * FROM {name} LIMIT 0")
                if result.table is not None:
                    return result.table.schema
                return jobs.stream_schema(result.dataframe)
            except Exception:
                _log.debug("no schema for %s", name, exc_info=True)
                return None

        return read

    # ----- DoGet
    def do_get(self, context: Any, ticket: Any) -> Any:
        handle = self._ticket_handle(ticket.ticket)
        pending = self._take_pending(handle)
        if pending is None:
            raise flight.FlightServerError(
                "Unknown or already read ticket: run the statement again (GetFlightInfo)"
            )
        if pending.rq is None and pending.table is not None:  # metadata, answered already
            if pending.web is not None:
                self.auth.release(pending.web)
            return flight.RecordBatchStream(pending.table)
        return flight.GeneratorStream(pending.schema, self._batches(context, pending))

    def _batches(self, context: Any, pending: _Pending) -> Iterator[pa.RecordBatch]:
        rq = pending.rq
        assert rq is not None
        profile = rq.profile
        complete = False
        stream: jobs.BatchStream | None = None
        # a client that leaves (or cancels the call) while Spark works on the next batch stops
        # the statement now, not when that batch is ready to send
        watch = ClientWatch(
            context,
            lambda: self.state.queries.cancel(rq.query_id, CLIENT_GONE),
            name=f"auger-flight-watch-{rq.query_id[:8]}",
        )
        call: CallSession | None = context.get_middleware(MIDDLEWARE_KEY)
        if call is not None:
            call.on_completed(watch.stop)
        watch.start()
        try:
            if rq.cancel_requested.is_set():
                raise flight.FlightCancelledError(CANCELLED)
            # the server's bound on one result, as REST and the DB-API apply it
            limit = jobs.ResultLimit.from_options(rq.web.session.options)
            if pending.table is not None:
                batches: Iterator[pa.RecordBatch] = limit.batches(
                    iter(pending.table.to_batches(max_chunksize=_LOCAL_BATCH_ROWS))
                )
            else:
                stream = jobs.BatchStream(pending.dataframe, rq.query_id, profile.query, limit)
                batches = stream
            for batch in batches:
                if rq.cancel_requested.is_set():
                    raise flight.FlightCancelledError(CANCELLED)
                profile.rows += batch.num_rows
                yield batch
            if rq.cancel_requested.is_set():
                raise flight.FlightCancelledError(CANCELLED)
            complete = True
            profile.state = "COMPLETED"
        except GeneratorExit:
            raise
        except BaseException as exc:
            if rq.cancel_requested.is_set():
                profile.state = "CANCELED"
                profile.error = rq.cancel_reason or USER_CANCEL
                raise flight.FlightCancelledError(CANCELLED) from None
            error = flight_error(exc)
            profile.state = "FAILED"
            profile.error = str(error)
            raise error from None
        finally:
            watch.stop()
            if not complete and profile.state not in ("FAILED", "CANCELED"):
                # the client went away mid-stream (or the call was cancelled)
                self.state.queries.cancel(rq.query_id, CLIENT_GONE)
                profile.state = "CANCELED"
            if stream is not None:
                stream.close()
            profile.stages = jobs.group_stages(rq.query_id)
            self.state.queries.finish(rq)
            if pending.web is not None:
                self.auth.release(pending.web)

    # ----- DoPut
    def do_put(self, context: Any, descriptor: Any, reader: Any, writer: Any) -> None:
        try:
            self._put(context, descriptor, reader, writer)
        except Exception as exc:
            raise flight_error(exc) from None

    def _put(self, context: Any, descriptor: Any, reader: Any, writer: Any) -> None:
        command = unpack(descriptor.command or b"")
        if command is None:
            raise UserError.unsupported("Not a Flight SQL command")
        name, msg = command
        if name == "CommandStatementUpdate":
            count = self._update(self._web(context), msg.query)
            writer.write(
                pa.py_buffer(message("DoPutUpdateResult")(record_count=count).SerializeToString())
            )
            return
        if name == "CommandPreparedStatementQuery":
            prepared = self._prepared_statement(msg.prepared_statement_handle)
            prepared.params = _parameter_rows(reader)
            answer = message("DoPutPreparedStatementResult")(
                prepared_statement_handle=msg.prepared_statement_handle
            )
            writer.write(pa.py_buffer(answer.SerializeToString()))
            return
        if name == "CommandPreparedStatementUpdate":
            prepared = self._prepared_statement(msg.prepared_statement_handle)
            rows = _parameter_rows(reader) or prepared.params or [()]
            total = 0
            for row in rows:
                count = self._update(prepared.web, _bind(prepared.sql, row))
                total = -1 if count < 0 or total < 0 else total + count
            writer.write(
                pa.py_buffer(message("DoPutUpdateResult")(record_count=total).SerializeToString())
            )
            return
        raise UserError.unsupported(f"Flight SQL command {name} cannot be sent with DoPut")

    def _update(self, web: WebSession, sql: str) -> int:
        """Run a statement for its effect; the rows it wrote when it says, else -1."""
        rq = self.state.queries.start(web, sql)
        try:
            result = self._execute(rq, sql)
            count = -1
            if result.table is not None:
                names = [n.lower() for n in result.table.column_names]
                for column in ("number of records written", "rows", "count"):
                    if column in names and result.table.num_rows:
                        value = result.table.column(names.index(column))[0].as_py()
                        if isinstance(value, int):
                            count = value
                        break
            elif result.dataframe is not None:
                with jobs.job_group(rq.query_id, sql, self.state.engine.spark):
                    count = int(result.dataframe.count())
        except BaseException as exc:
            self._failed(rq, exc)
            self.auth.release(web)
            raise
        rq.profile.state = "COMPLETED"
        self.state.queries.finish(rq)
        self.auth.release(web)
        return count

    # ----- actions
    def list_actions(self, context: Any) -> list[tuple[str, str]]:
        return list(_ACTIONS)

    def do_action(self, context: Any, action: Any) -> Iterator[flight.Result]:
        try:
            answers = self._action(context, action.type, action.body.to_pybytes())
        except Exception as exc:
            raise flight_error(exc) from None
        return iter([flight.Result(pa.py_buffer(a)) for a in answers])

    def _action(self, context: Any, kind: str, body: bytes) -> list[bytes]:
        if kind == "CreatePreparedStatement":
            msg = self._unpack_as(body, "ActionCreatePreparedStatementRequest")
            web = self._web(context)
            handle = secrets.token_bytes(16)
            with self._lock:
                self._prepared[handle] = _Prepared(msg.query, web)
            result = message("ActionCreatePreparedStatementResult")(
                prepared_statement_handle=handle
            )
            return [pack(result)]
        if kind == "ClosePreparedStatement":
            msg = self._unpack_as(body, "ActionClosePreparedStatementRequest")
            with self._lock:
                self._prepared.pop(msg.prepared_statement_handle, None)
            return []
        if kind == "CancelFlightInfo":
            request = message("CancelFlightInfoRequest")()
            request.ParseFromString(body)
            status = self._cancel(request.info)
            return [message("CancelFlightInfoResult")(status=status).SerializeToString()]
        if kind == "CancelQuery":
            msg = self._unpack_as(body, "ActionCancelQueryRequest")
            return [pack(message("ActionCancelQueryResult")(result=self._cancel(msg.info)))]
        if kind == "CloseSession":
            call: CallSession | None = context.get_middleware(MIDDLEWARE_KEY)
            if call is not None and call.web is not None:
                self._close_session(call.web)
            return [b"\x08\x01"]  # CloseSessionResult{status: CLOSED}
        raise UserError.unsupported(f"Flight action {kind} is not supported by auger")

    def _cancel(self, info_bytes: bytes) -> int:
        """Cancel the statement of a serialized FlightInfo; the CancelStatus number."""
        try:
            info = flight.FlightInfo.deserialize(info_bytes)
        except Exception as exc:
            raise UserError.validation(f"Cannot read the FlightInfo to cancel: {exc}") from exc
        cancelled = False
        for endpoint in info.endpoints:
            handle = self._ticket_handle(endpoint.ticket.ticket)
            with self._lock:
                pending = self._pending.get(handle)
            if pending is not None and pending.rq is not None:
                # not read yet: cancelled now, its DoGet answers CANCELLED
                self.state.queries.cancel(pending.rq.query_id, USER_CANCEL)
                cancelled = True
            elif self.state.queries.cancel(handle.decode(errors="replace"), USER_CANCEL):
                cancelled = True
        return 1 if cancelled else 3  # CANCELLED or NOT_CANCELLABLE

    def _close_session(self, web: WebSession) -> None:
        with self._lock:
            for handle in [h for h, p in self._prepared.items() if p.web is web]:
                del self._prepared[handle]
        self.state.sessions.close(web)

    # ----- helpers
    def _unpack_as(self, body: bytes, name: str) -> Any:
        found = unpack(body)
        if found is None or found[0] != name:
            raise UserError.validation(f"Expected a {name} message")
        return found[1]

    def _ticket_handle(self, ticket: bytes) -> bytes:
        found = unpack(ticket)
        if found is None or found[0] != "TicketStatementQuery":
            raise flight.FlightServerError("Not a ticket of this server")
        return bytes(found[1].statement_handle)

    def _take_pending(self, handle: bytes) -> _Pending | None:
        with self._lock:
            return self._pending.pop(handle, None)

    def _prepared_statement(self, handle: bytes) -> _Prepared:
        with self._lock:
            prepared = self._prepared.get(bytes(handle))
        if prepared is None or prepared.web.closed:
            raise UserError.validation(
                "Unknown prepared statement (closed, or its session ended): prepare it again"
            )
        return prepared

    def _abandon(self, pending: _Pending) -> None:
        """A planned statement nobody will read: its query ends, its session may close."""
        if pending.rq is not None:
            pending.rq.profile.state = "CANCELED"
            pending.rq.profile.error = CLIENT_GONE
            self.state.queries.finish(pending.rq)
        if pending.web is not None:
            self.auth.release(pending.web)

    def _drop_stale(self) -> None:
        """Forget planned statements whose tickets were never read (the client gave up)."""
        limit = time.monotonic() - self.state.settings.send_timeout
        with self._lock:
            stale = [h for h, p in self._pending.items() if p.created < limit]
            dropped = [self._pending.pop(h) for h in stale]
        for pending in dropped:
            self._abandon(pending)


def _bind(sql: str, row: tuple[Any, ...]) -> str:

    try:
        return bind_parameters(sql, list(row))
    except Error as exc:
        raise UserError.validation(f"Cannot bind the parameters: {exc}") from exc


def _parameter_rows(reader: Any) -> list[tuple[Any, ...]]:
    """The parameter rows a client sent with DoPut, each as a tuple in column order."""
    table = reader.read_all()
    columns = [c.to_pylist() for c in table.columns]
    return [tuple(col[i] for col in columns) for i in range(table.num_rows)]


def _end_without_exit_hooks() -> None:
    """An exit hook, registered once a Flight server could not stop and so run before the
    others: what is written is flushed, and the process ends with status 0 (it stopped as
    asked) before pyarrow's own hook waits for the calls that kept it. The server's sessions
    and files are cleaned up by then, and the JVM that pyspark started ends with this
    process; the hooks skipped have nothing left to do."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


def start_flight_server(state: ServerState, host: str, port: int) -> FlightSqlServer:
    """Start serving Flight SQL on ``host:port`` (a background gRPC server); ``stop()``
    stops it. TLS is used when the settings name a certificate and its key."""
    settings = state.settings
    kwargs: dict[str, Any] = {}
    scheme = "grpc+tcp"
    if settings.tls_certificate:
        with open(settings.tls_certificate, "rb") as f:
            cert = f.read()
        with open(settings.tls_private_key, "rb") as f:
            key = f.read()
        kwargs["tls_certificates"] = [flight.CertKeyPair(cert, key)]
        scheme = "grpc+tls"
    return FlightSqlServer(state, f"{scheme}://{host}:{port}", **kwargs)
