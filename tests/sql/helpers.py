"""Small helpers for SQL-in, rows-out tests."""

from __future__ import annotations

from typing import Any

import pytest

from auger.dbapi import Error


def rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    return conn.cursor().execute(sql).fetchall()


def names(conn: Any, sql: str) -> list[str]:
    return [d[0] for d in conn.cursor().execute(sql).description]


def error(conn: Any, sql: str) -> str:
    """The message of the error ``sql`` raises (executing and fetching)."""
    with pytest.raises(Error) as info:
        conn.cursor().execute(sql).fetchall()
    return str(info.value)
