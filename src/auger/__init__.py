"""auger: Apache Drill's schema-free SQL over raw files, executed by Apache Spark.

>>> import auger
>>> conn = auger.connect()                     # doctest: +SKIP
>>> conn.cursor().execute("SELECT full_name FROM cp.`employee.json` LIMIT 3")  # doctest: +SKIP
"""

from auger.errors import AugerError, ErrorKind, UserError

__version__ = "0.1.0"


def connect(config=None, user=None):  # type: ignore[no-untyped-def]
    """Open a DB-API connection (one user session) on the embedded engine. See ``auger.dbapi``."""
    from auger.dbapi import connect as _connect

    return _connect(config=config, user=user)


__all__ = ["AugerError", "ErrorKind", "UserError", "__version__", "connect"]
