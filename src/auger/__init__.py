"""auger: Apache Drill's schema-free SQL over raw files, executed by Apache Spark.

>>> import auger
>>> conn = auger.connect()                     # doctest: +SKIP
>>> conn.cursor().execute("SELECT full_name FROM cp.`employee.json` LIMIT 3")  # doctest: +SKIP
"""

from auger.dbapi import (
    DatabaseError,
    DataError,
    Error,
    IntegrityError,
    InterfaceError,
    InternalError,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
    Warning,
    apilevel,
    paramstyle,
    threadsafety,
)
from auger.errors import AugerError, ErrorKind, UserError
from auger.version import __version__


def connect(config=None, user=None):  # type: ignore[no-untyped-def]
    """Open a DB-API connection (one user session) on the embedded engine. See ``auger.dbapi``."""
    from auger.dbapi import connect as _connect

    return _connect(config=config, user=user)


__all__ = [
    "AugerError",
    "DataError",
    "DatabaseError",
    "Error",
    "ErrorKind",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "UserError",
    "Warning",
    "__version__",
    "apilevel",
    "connect",
    "paramstyle",
    "threadsafety",
]
