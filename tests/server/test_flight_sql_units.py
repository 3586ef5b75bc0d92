"""The Flight SQL endpoint's parts that need no server: its protobuf messages, the SqlInfo and
type-info answers, its settings."""

from __future__ import annotations

import base64
import threading

import pyarrow.flight as flight
import pytest

from auger.errors import UserError
from auger.server import flight_catalog as catalog
from auger.server.flight_auth import _basic
from auger.server.flight_errors import flight_error
from auger.server.flight_watch import ClientWatch
from auger.server.flightsql_messages import message, pack, unpack
from auger.server.settings import ServerSettings


def test_commands_round_trip_through_any() -> None:
    data = pack(message("CommandGetTables")(table_types=["TABLE"], include_schema=True))
    name, msg = unpack(data)  # type: ignore[misc]
    assert name == "CommandGetTables"
    assert list(msg.table_types) == ["TABLE"] and msg.include_schema


def test_type_url_names_the_flight_sql_package() -> None:
    data = pack(message("CommandStatementQuery")(query="SELECT 1"))
    assert b"type.googleapis.com/arrow.flight.protocol.sql.CommandStatementQuery" in data


def test_unknown_or_garbled_commands_are_not_read() -> None:
    assert unpack(b"\xff\xff not protobuf") is None
    assert unpack(b"") is None


def test_sql_info_answers_what_is_asked_in_a_dense_union() -> None:
    table = catalog.sql_info([0, 3, 504, 508, 99999])
    assert table.schema.equals(catalog.SQL_INFO_SCHEMA)
    values = dict(zip(table.column(0).to_pylist(), table.column(1).to_pylist(), strict=True))
    assert values[0] == "auger" and values[3] is False and values[504] == "`"
    assert "USE" in values[508]
    assert 99999 not in values  # unknown ids are left out
    assert catalog.sql_info([]).num_rows > 10  # none asked: all of them


def test_xdbc_type_info_filters_by_type() -> None:
    every = catalog.xdbc_type_info(None)
    assert every.schema.equals(catalog.XDBC_TYPE_INFO_SCHEMA)
    assert catalog.xdbc_type_info(-5).column("type_name").to_pylist() == ["BIGINT"]
    assert catalog.xdbc_type_info(12345).num_rows == 0


def test_user_errors_keep_drill_text_with_a_flight_code() -> None:
    err = flight_error(UserError.validation("Object 'x' not found", ["SQL Query: SELECT 1"]))
    assert isinstance(err, flight.FlightServerError)
    assert str(err).startswith("VALIDATION ERROR: Object 'x' not found")
    assert isinstance(flight_error(UserError.permission("no")), flight.FlightUnauthorizedError)
    assert isinstance(flight_error(UserError.system("boom")), flight.FlightInternalError)
    assert isinstance(flight_error(UserError.parse("bad")), flight.FlightError)


def test_basic_credentials_with_or_without_padding() -> None:
    raw = base64.b64encode(b"alice:wonder land").decode()
    assert _basic(raw) == ("alice", "wonder land")
    assert _basic(raw.rstrip("=")) == ("alice", "wonder land")
    with pytest.raises(flight.FlightUnauthenticatedError):
        _basic("%%%")


def test_flight_settings() -> None:
    assert ServerSettings.from_config({}).flight_port == 0  # off by default
    assert ServerSettings.from_config({"flight_port": 32010}).flight_port == 32010
    with pytest.raises(UserError, match="flight_port"):
        ServerSettings.from_config({"flight_port": 70000})
    with pytest.raises(UserError, match="tls_private_key"):
        ServerSettings.from_config({"tls_certificate": "/x.pem"})


class _Call:
    """A call's context as the watch sees it: cancelled or not."""

    def __init__(self) -> None:
        self.cancelled = threading.Event()
        self.looks = 0

    def is_cancelled(self) -> bool:
        self.looks += 1
        return self.cancelled.is_set()


def test_client_watch_acts_once_when_the_call_is_cancelled() -> None:
    call, gone = _Call(), threading.Event()
    actions: list[int] = []
    watch = ClientWatch(call, lambda: (actions.append(1), gone.set()), interval=0.01).start()
    call.cancelled.set()
    assert gone.wait(60)
    watch.stop()
    assert actions == [1]


def test_client_watch_leaves_the_context_alone_once_stopped() -> None:
    call = _Call()
    watch = ClientWatch(call, lambda: None, interval=0.001).start()
    watch.stop()
    looks = call.looks
    call.cancelled.set()
    watch.stop()  # stopping twice is harmless
    assert call.looks == looks
    ClientWatch(call, lambda: None).stop()  # never started: nothing to stop
