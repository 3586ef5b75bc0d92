"""auger's errors as Flight statuses: Drill's text, the closest gRPC code, no traceback.

A :class:`~auger.errors.UserError` keeps its whole text (``VALIDATION ERROR: ...`` and its
context lines) as the status message, and its kind picks the code:

=====================================================  ==================  ==================
auger's error kind                                     gRPC status         ADBC status
=====================================================  ==================  ==================
PERMISSION                                             PERMISSION_DENIED   UNAUTHORIZED
RESOURCE (memory, a result past its limit), CONNECTION UNAVAILABLE         IO
SYSTEM, INTERNAL, and any exception that is not ours   INTERNAL            INTERNAL
a cancelled statement                                  CANCELLED           CANCELLED
PARSE, VALIDATION, FUNCTION, PLAN, DATA_READ,          UNKNOWN             UNKNOWN
DATA_WRITE, EXECUTION, UNSUPPORTED_OPERATION
=====================================================  ==================  ==================

(Bad credentials are UNAUTHENTICATED, from :mod:`auger.server.flight_auth`.)

Why not INVALID_ARGUMENT, NOT_FOUND or UNIMPLEMENTED for the statements a user must fix:
pyarrow's Python Flight server sends a clean status only for its own Flight error classes,
whose codes are the ones above. It gives INVALID_ARGUMENT (``ArrowInvalid``, ``ValueError``),
NOT_FOUND (``KeyError``) and UNIMPLEMENTED (``NotImplementedError``) only to an ordinary
Python exception, and then appends that exception's Python traceback to the message every
client shows; RESOURCE_EXHAUSTED no Arrow status reaches at all (Arrow's own client reads it
as UNAVAILABLE, the code used here). So every error leaves as a Flight class. Arrow's gRPC
transport appends the Flight code's name to the message (``... . Detail: Failed``), which no
pyarrow server can avoid. Spark's failures become ``UserError`` first, in the one place that does it
(:func:`auger.spark.errors.unwrap_spark_error`); anything else is logged on the server and
answered as ``SYSTEM ERROR`` with an INTERNAL code.
"""

from __future__ import annotations

import logging

import pyarrow.flight as flight

from auger.errors import ErrorKind, UserError
from auger.spark.errors import unwrap_spark_error

__all__ = ["CANCELLED", "flight_error"]

_log = logging.getLogger(__name__)

CANCELLED = "Cancelled by the user"

_CODES: dict[ErrorKind, type[Exception]] = {
    ErrorKind.PERMISSION: flight.FlightUnauthorizedError,
    ErrorKind.RESOURCE: flight.FlightUnavailableError,
    ErrorKind.CONNECTION: flight.FlightUnavailableError,
    ErrorKind.INTERNAL: flight.FlightInternalError,
    ErrorKind.SYSTEM: flight.FlightInternalError,
}


def flight_error(exc: BaseException) -> Exception:
    """The exception to raise from a Flight handler for ``exc``."""
    if isinstance(exc, flight.FlightError):
        return exc
    if not isinstance(exc, UserError):
        _log.info("Flight SQL call failed", exc_info=exc)
        try:
            exc = unwrap_spark_error(exc)
        except Exception:
            pass
    if isinstance(exc, UserError):
        return _CODES.get(exc.kind, flight.FlightServerError)(str(exc))
    return flight.FlightInternalError(f"SYSTEM ERROR: {type(exc).__name__}: {exc}")
