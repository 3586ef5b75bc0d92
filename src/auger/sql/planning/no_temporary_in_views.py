"""Views may not read temporary tables (Drill's rule).

A view outlives the session, a temporary table does not, so a view over one would break at the
session's end. The check runs when a view is created and again whenever one is expanded (a
temporary table may have appeared since under a name the view uses).
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

from auger.errors import UserError
from auger.sql.catalog.resolution import SessionCatalog

__all__ = ["check_no_temporary_tables", "temporary_disallowed"]


def temporary_disallowed(name: str) -> UserError:
    return UserError.validation(
        f"Temporary tables usage is disallowed. Used temporary table name: [{name}]."
    )


def check_no_temporary_tables(
    tables: Iterable[exp.Table], catalog: SessionCatalog, default_schema: str | None
) -> None:
    """Raise when any of ``tables`` (as written in a view's SQL) is a temporary table.

    A bare name is tried as written and qualified by the view's schema path, since a temporary
    table is found both ways.
    """
    for node in tables:
        parts = [p.name for p in node.parts]
        candidates = [parts]
        if default_schema:
            candidates.append([*default_schema.split("."), *parts])
        if any(catalog.is_temporary_table(c) for c in candidates):
            raise temporary_disallowed(parts[-1].lstrip("/"))
