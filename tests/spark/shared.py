"""What Spark tests of the engine share: a statement's plan as the engine explains it, a
connection with the raw-file cache on."""

from __future__ import annotations

from typing import Any


def explained(conn: Any, sql: str) -> str:
    """``EXPLAIN PLAN FOR sql`` through ``conn``: every value of every row, one per line."""
    cur = conn.cursor()
    cur.execute(f"EXPLAIN PLAN FOR {sql}")
    return "\n".join(str(v) for row in cur.fetchall() for v in row)


def cached_connection(make_conn: Any, location: Any) -> Any:
    """A connection whose raw-file cache is on, at ``location``, and whose scans run in Spark
    (none of their rows read on the driver, however few)."""
    conn = make_conn()
    cur = conn.cursor()
    cur.execute(f"ALTER SESSION SET `auger.cache.location` = '{location}'")
    cur.execute("ALTER SESSION SET `auger.cache.enabled` = true")
    cur.execute("ALTER SESSION SET `auger.scan.local_bytes` = 0")
    return conn
