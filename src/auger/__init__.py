"""auger: Apache Drill's schema-free SQL over raw files, executed by Apache Spark.

>>> import auger
>>> conn = auger.connect()                     # doctest: +SKIP
>>> conn.cursor().execute("SELECT full_name FROM cp.`employee.json` LIMIT 3")  # doctest: +SKIP

The DB-API names (``auger.Error``, ``auger.apilevel``...) are loaded on first use: Spark's
Python workers import ``auger.<package>`` modules to scan files, and importing a package first
runs this file, so it must not pull in the DB-API (and with it the engine's error handling).
"""

from typing import TYPE_CHECKING, Any

from auger.errors import AugerError, ErrorKind, UserError
from auger.version import __version__

if TYPE_CHECKING:
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

#: Names this package re-exports from :mod:`auger.dbapi`, imported when first asked for.
_DBAPI_NAMES = frozenset(
    {
        "DatabaseError",
        "DataError",
        "Error",
        "IntegrityError",
        "InterfaceError",
        "InternalError",
        "NotSupportedError",
        "OperationalError",
        "ProgrammingError",
        "Warning",
        "apilevel",
        "paramstyle",
        "threadsafety",
    }
)


def __getattr__(name: str) -> Any:
    if name in _DBAPI_NAMES:
        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        from auger import dbapi

        value = getattr(dbapi, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'auger' has no attribute {name!r}")


def connect(config=None, user=None):  # type: ignore[no-untyped-def]
    """Open a DB-API connection (one user session) on the embedded engine. See ``auger.dbapi``."""
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
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
