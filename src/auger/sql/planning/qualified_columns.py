"""Columns qualified by their table's schema as well as its name: ``dfs.tmp.t.b``.

Drill resolves a column qualified by the whole name of a table the query reads (what
SQLAlchemy writes for a schema-qualified table: ``` `dfs.tmp`.t.b ```). The frame Spark reads
goes by the table's last name only, so such a qualifier is cut to that name before planning;
a qualifier that is no table's trailing name (``t.m.a``: member ``a`` of map ``m``) is left
alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

__all__ = ["unqualify_schema_columns"]


def _parts(*names: str) -> list[str]:
    """Dotted names as their parts, lower case (```dfs.tmp``` is ``dfs``, ``tmp``)."""
    return [p.lower() for name in names if name for p in name.split(".")]


def unqualify_schema_columns(tree: exp.Expression, tables: Sequence[exp.Table]) -> None:
    """Cut ``schema.table.column`` to ``table.column`` where ``schema.table`` ends the name of
    one of ``tables`` that has no alias (an aliased table goes by its alias only)."""
    names = [_parts(t.catalog, t.db, t.name) for t in tables if not t.alias and t.db]
    if not names:
        return
    for col in tree.find_all(exp.Column):
        if not col.args.get("db"):
            continue
        qualifier = _parts(col.catalog, col.db, col.table)
        if any(len(n) >= len(qualifier) and n[-len(qualifier) :] == qualifier for n in names):
            col.set("db", None)
            col.set("catalog", None)
