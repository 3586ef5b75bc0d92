"""The text of a statement's plan, as the engine explains it to a user."""

from __future__ import annotations

from typing import Any


def explained(conn: Any, sql: str) -> str:
    """``EXPLAIN PLAN FOR sql`` through ``conn``: every value of every row, one per line."""
    cur = conn.cursor()
    cur.execute(f"EXPLAIN PLAN FOR {sql}")
    return "\n".join(str(v) for row in cur.fetchall() for v in row)
