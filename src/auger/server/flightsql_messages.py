"""The Flight SQL protocol's protobuf messages, as the server reads and writes them.

Flight SQL clients send their commands as ``google.protobuf.Any`` values whose type URL names a
message of the ``arrow.flight.protocol.sql`` package. The messages are small and stable (a few
string, bytes and integer fields each), so they are declared here from their field numbers and
built by protobuf's own runtime (:mod:`google.protobuf.message_factory`) in a private descriptor
pool, instead of depending on a generated module: no package on PyPI ships one that installs
beside SQLAlchemy 2 (``flightsql-dbapi`` pins SQLAlchemy below 2), and protobuf's runtime
already does the encoding. Only the messages the server handles are declared; an unknown
command is refused with a clear error.

Fields the protocol marks ``optional`` are declared as plain proto3 fields: the server treats an
empty catalog or pattern as "not given", which is what every client means by it.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory

__all__ = ["PACKAGE", "message", "pack", "unpack"]

PACKAGE = "arrow.flight.protocol.sql"
_TYPE_URL_PREFIX = "type.googleapis.com/"

_F = descriptor_pb2.FieldDescriptorProto
_TYPES = {
    "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES,
    "uint32": _F.TYPE_UINT32,
    "int32": _F.TYPE_INT32,
    "int64": _F.TYPE_INT64,
    "bool": _F.TYPE_BOOL,
}

#: message name -> its fields: (name, number, type, repeated)
_MESSAGES: dict[str, list[tuple[str, int, str, bool]]] = {
    "CommandGetSqlInfo": [("info", 1, "uint32", True)],
    "CommandGetXdbcTypeInfo": [("data_type", 1, "int32", False)],
    "CommandGetCatalogs": [],
    "CommandGetDbSchemas": [
        ("catalog", 1, "string", False),
        ("db_schema_filter_pattern", 2, "string", False),
    ],
    "CommandGetTables": [
        ("catalog", 1, "string", False),
        ("db_schema_filter_pattern", 2, "string", False),
        ("table_name_filter_pattern", 3, "string", False),
        ("table_types", 4, "string", True),
        ("include_schema", 5, "bool", False),
    ],
    "CommandGetTableTypes": [],
    "CommandGetPrimaryKeys": [
        ("catalog", 1, "string", False),
        ("db_schema", 2, "string", False),
        ("table", 3, "string", False),
    ],
    "CommandGetExportedKeys": [
        ("catalog", 1, "string", False),
        ("db_schema", 2, "string", False),
        ("table", 3, "string", False),
    ],
    "CommandGetImportedKeys": [
        ("catalog", 1, "string", False),
        ("db_schema", 2, "string", False),
        ("table", 3, "string", False),
    ],
    "CommandGetCrossReference": [
        ("pk_catalog", 1, "string", False),
        ("pk_db_schema", 2, "string", False),
        ("pk_table", 3, "string", False),
        ("fk_catalog", 4, "string", False),
        ("fk_db_schema", 5, "string", False),
        ("fk_table", 6, "string", False),
    ],
    "ActionCreatePreparedStatementRequest": [
        ("query", 1, "string", False),
        ("transaction_id", 2, "bytes", False),
    ],
    "ActionCreatePreparedStatementResult": [
        ("prepared_statement_handle", 1, "bytes", False),
        ("dataset_schema", 2, "bytes", False),
        ("parameter_schema", 3, "bytes", False),
    ],
    "ActionClosePreparedStatementRequest": [("prepared_statement_handle", 1, "bytes", False)],
    "CommandStatementQuery": [("query", 1, "string", False), ("transaction_id", 2, "bytes", False)],
    "TicketStatementQuery": [("statement_handle", 1, "bytes", False)],
    "CommandPreparedStatementQuery": [("prepared_statement_handle", 1, "bytes", False)],
    "CommandStatementUpdate": [
        ("query", 1, "string", False),
        ("transaction_id", 2, "bytes", False),
    ],
    "CommandPreparedStatementUpdate": [("prepared_statement_handle", 1, "bytes", False)],
    "DoPutUpdateResult": [("record_count", 1, "int64", False)],
    "DoPutPreparedStatementResult": [("prepared_statement_handle", 1, "bytes", False)],
    # the older cancel action: the FlightInfo to cancel, serialized; the answer's ``result`` is
    # the CancelResult enum (1 cancelled, 2 cancelling, 3 not cancellable), sent as its number
    "ActionCancelQueryRequest": [("info", 1, "bytes", False)],
    "ActionCancelQueryResult": [("result", 1, "int32", False)],
}

#: Flight's own cancel action (``CancelFlightInfo``, package ``arrow.flight.protocol``): the
#: request holds the FlightInfo as an embedded message, which reads as bytes on the wire; the
#: answer's status is the CancelStatus enum, sent as its number.
_FLIGHT_MESSAGES: dict[str, list[tuple[str, int, str, bool]]] = {
    "CancelFlightInfoRequest": [("info", 1, "bytes", False)],
    "CancelFlightInfoResult": [("status", 1, "int32", False)],
}


def _file(name: str, package: str, messages: dict[str, list[tuple[str, int, str, bool]]]) -> Any:
    proto = descriptor_pb2.FileDescriptorProto(name=name, package=package, syntax="proto3")
    for message_name, fields in messages.items():
        msg = proto.message_type.add(name=message_name)
        for field_name, number, type_name, repeated in fields:
            msg.field.add(
                name=field_name,
                number=number,
                type=_TYPES[type_name],
                label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL,
            )
    return proto


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_file("auger_flight_sql.proto", PACKAGE, _MESSAGES))
_POOL.Add(_file("auger_flight.proto", "arrow.flight.protocol", _FLIGHT_MESSAGES))
_CLASSES: dict[str, Any] = {}


def message(name: str) -> Any:
    """The message class of a Flight SQL message (``CommandStatementQuery``...), or of one of
    Flight's (``CancelFlightInfoRequest``...)."""
    cls = _CLASSES.get(name)
    if cls is None:
        full = f"{PACKAGE}.{name}" if name in _MESSAGES else f"arrow.flight.protocol.{name}"
        cls = message_factory.GetMessageClass(_POOL.FindMessageTypeByName(full))
        _CLASSES[name] = cls
    return cls


def pack(msg: Any) -> bytes:
    """``msg`` wrapped in an ``Any``, serialized: how commands, tickets and results travel."""
    wrapper = any_pb2.Any()
    wrapper.Pack(msg)
    return bytes(wrapper.SerializeToString())


def unpack(data: bytes) -> tuple[str, Any] | None:
    """The short name and the parsed message of an ``Any``-wrapped Flight SQL message; None
    when ``data`` is not one this server knows."""
    wrapper = any_pb2.Any()
    try:
        wrapper.ParseFromString(data)
    except Exception:
        return None
    full = wrapper.type_url[len(_TYPE_URL_PREFIX) :] if wrapper.type_url else ""
    package, _, name = full.rpartition(".")
    if package != PACKAGE or name not in _MESSAGES:
        return None
    msg = message(name)()
    msg.ParseFromString(wrapper.value)
    return name, msg
