"""auger's errors as Flight statuses: Drill's text, the matching gRPC code, no traceback.

A :class:`~auger.errors.UserError` keeps its whole text (``VALIDATION ERROR: ...`` and its
context lines) as the status message; its kind picks the code a client can act on: a missing
right is PERMISSION_DENIED, a resource or connection problem UNAVAILABLE, a system error
INTERNAL, and a statement the user must fix (parse, validation, function, unsupported, data
errors) UNKNOWN, which Flight calls "failed". pyarrow's Python server sends a status without a
traceback only for its own Flight error classes; any other exception (``ArrowInvalid``, which
would give INVALID_ARGUMENT) carries the Python traceback to the client, so every error leaves
as one of the Flight classes. Spark's failures become ``UserError`` first, in the one place
that does it (:func:`auger.spark.errors.unwrap_spark_error`); anything else is logged on the
server and answered as ``SYSTEM ERROR`` with an INTERNAL code.
"""

from __future__ import annotations

import logging

import pyarrow.flight as flight

from auger.errors import ErrorKind, UserError

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
        from auger.spark.errors import unwrap_spark_error

        _log.info("Flight SQL call failed", exc_info=exc)
        try:
            exc = unwrap_spark_error(exc)
        except Exception:
            pass
    if isinstance(exc, UserError):
        return _CODES.get(exc.kind, flight.FlightServerError)(str(exc))
    return flight.FlightInternalError(f"SYSTEM ERROR: {type(exc).__name__}: {exc}")
