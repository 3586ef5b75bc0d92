"""What a Flight SQL client receives for each of auger's errors: the gRPC status (read through
the ADBC driver's status code) and Drill's text whole, with no Python traceback.

The statuses are produced by pyarrow's own Flight server and transport, so the server here is a
small pyarrow Flight server that fails its calls with :func:`flight_error` of each error; the
statements of a real ``auger serve`` are in ``test_flight_sql.py``."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.flight as flight
import pytest

from auger.errors import ErrorKind, UserError
from auger.server.flight_errors import CANCELLED, flight_error
from auger.server.flightsql_messages import message, pack, unpack

adbc = pytest.importorskip("adbc_driver_flightsql.dbapi")
from adbc_driver_manager import AdbcStatusCode  # noqa: E402

CONTEXT = ["SQL Query: SELECT * FROM t", "                            ^", "Path: /data/t"]

#: each kind of error, the ADBC status its client reports, and the DB-API exception class
EXPECTED: dict[str, tuple[AdbcStatusCode, type[Exception]]] = {
    "PERMISSION": (AdbcStatusCode.UNAUTHORIZED, adbc.ProgrammingError),
    "RESOURCE": (AdbcStatusCode.IO, adbc.OperationalError),
    "CONNECTION": (AdbcStatusCode.IO, adbc.OperationalError),
    "SYSTEM": (AdbcStatusCode.INTERNAL, adbc.InternalError),
    "INTERNAL": (AdbcStatusCode.INTERNAL, adbc.InternalError),
    "PARSE": (AdbcStatusCode.UNKNOWN, adbc.OperationalError),
    "VALIDATION": (AdbcStatusCode.UNKNOWN, adbc.OperationalError),
    "FUNCTION": (AdbcStatusCode.UNKNOWN, adbc.OperationalError),
    "PLAN": (AdbcStatusCode.UNKNOWN, adbc.OperationalError),
    "DATA_READ": (AdbcStatusCode.UNKNOWN, adbc.OperationalError),
    "DATA_WRITE": (AdbcStatusCode.UNKNOWN, adbc.OperationalError),
    "EXECUTION": (AdbcStatusCode.UNKNOWN, adbc.OperationalError),
    "UNSUPPORTED_OPERATION": (AdbcStatusCode.UNKNOWN, adbc.OperationalError),
}


def _error(name: str) -> Exception:
    """The exception a handler raises for the statement ``name``."""
    if name == "CANCEL":
        return flight.FlightCancelledError(CANCELLED)
    if name == "PYTHON":  # a bug of ours: no UserError, no Spark error
        return flight_error(ZeroDivisionError("division by zero"))
    return flight_error(UserError(name, f"Something about {name.lower()}", CONTEXT))


class _Failing(flight.FlightServerBase):  # type: ignore[misc]
    """Fails each statement with the error its text names: when it is planned
    (``GetFlightInfo``), or after a first batch of its stream when it starts with ``stream:``."""

    SCHEMA = pa.schema([("n", pa.int64())])

    def get_flight_info(self, context: Any, descriptor: Any) -> flight.FlightInfo:
        found = unpack(descriptor.command)
        assert found is not None
        query = found[1].query
        if not query.startswith("stream:"):
            raise _error(query)
        ticket = pack(message("TicketStatementQuery")(statement_handle=query.encode()))
        endpoint = flight.FlightEndpoint(ticket, [])
        return flight.FlightInfo(self.SCHEMA, descriptor, [endpoint], -1, -1)

    def do_get(self, context: Any, ticket: Any) -> Any:
        found = unpack(ticket.ticket)
        assert found is not None
        name = found[1].statement_handle.decode().removeprefix("stream:")

        def batches() -> Iterator[pa.RecordBatch]:
            yield pa.record_batch([pa.array([1, 2])], schema=self.SCHEMA)
            raise _error(name)

        return flight.GeneratorStream(self.SCHEMA, batches())


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    # pyarrow's Flight client answers a CANCELLED status with a SIGINT of its own process (its
    # Ctrl-C path); ignored meanwhile so that only the call sees the cancel
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    server = _Failing("grpc://127.0.0.1:0")
    try:
        yield f"grpc://127.0.0.1:{server.port}"
    finally:
        server.shutdown()
        signal.signal(signal.SIGINT, previous)


def _fail(url: str, statement: str) -> Any:
    """The DB-API error ADBC raises for ``statement``."""
    with (
        adbc.connect(url, autocommit=True) as conn,
        conn.cursor() as cur,
        pytest.raises(adbc.Error) as err,
    ):
        cur.execute(statement)
        cur.fetchall()
    return err.value


def _server_text(error: Any) -> str:
    """The status message as the server sent it: ADBC puts its status name and ``[FlightSQL]``
    before it, and the gRPC code and call after it."""
    text = str(error)
    assert "Traceback" not in text and "Python exception" not in text, text
    _, _, sent = text.partition("[FlightSQL] ")
    return sent


def test_every_error_kind_is_expected() -> None:
    assert set(EXPECTED) == {kind.value for kind in ErrorKind}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_user_errors_keep_drill_text_with_their_status(url: str, kind: str) -> None:
    status, exc_class = EXPECTED[kind]
    error = _fail(url, kind)
    assert error.status_code == status
    assert isinstance(error, exc_class)
    drill = str(UserError(kind, f"Something about {kind.lower()}", CONTEXT))
    assert drill.count("\n") == 4  # the context lines travel, each on its own line
    assert _server_text(error).startswith(drill + ". Detail: ")


def test_a_cancelled_statement_is_cancelled(url: str) -> None:
    error = _fail(url, "CANCEL")
    assert error.status_code == AdbcStatusCode.CANCELLED
    assert _server_text(error).startswith(CANCELLED + ". Detail: Cancelled")


def test_an_unexpected_exception_is_an_internal_system_error(url: str) -> None:
    error = _fail(url, "PYTHON")
    assert error.status_code == AdbcStatusCode.INTERNAL
    assert _server_text(error).startswith("SYSTEM ERROR: division by zero. Detail: Internal")


def test_an_error_mid_stream_keeps_its_status_and_text(url: str) -> None:
    with adbc.connect(url, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("stream:VALIDATION")
        with pytest.raises(adbc.Error) as err:
            cur.fetch_arrow_table()
    assert err.value.status_code == AdbcStatusCode.UNKNOWN
    drill = str(UserError.validation("Something about validation", CONTEXT))
    assert _server_text(err.value).startswith(drill + ". Detail: Failed")


def test_pyarrow_client_sees_the_flight_classes(url: str) -> None:
    client = flight.FlightClient(url)
    try:
        descriptor = flight.FlightDescriptor.for_command(
            pack(message("CommandStatementQuery")(query="PERMISSION"))
        )
        with pytest.raises(flight.FlightUnauthorizedError) as err:
            client.get_flight_info(descriptor)
        assert str(err.value).startswith("PERMISSION ERROR: Something about permission\n\n")
    finally:
        client.close()
