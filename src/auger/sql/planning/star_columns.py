"""What Drill's wildcard expands to: the table's columns, not the implicit file columns.

``SELECT *, filename`` shows ``filename`` once, where the query names it, and
``SELECT * ... WHERE filename = 'x'`` shows no ``filename`` at all. The scan delivers the
implicit columns a query names (``filename``, ``fqn``, ``filepath``, ``suffix``...) as ordinary
columns of the table's view, so Spark's ``*`` would list them too; where that happens, the
``*`` that selects straight from the table is spelled out as the table's own columns instead.
"""

from __future__ import annotations

from sqlglot import exp

__all__ = ["spell_out_star"]


def spell_out_star(node: exp.Table, alias: str, visible: list[str]) -> bool:
    """Replace the ``*`` (or ``alias.*``) that reads ``node`` by its ``visible`` columns;
    whether there was one.

    Only the SELECT whose FROM (or JOIN) is this table is touched: a ``*`` over a subquery
    shows what the subquery selected, implicit columns included. A bare ``*`` over a join is
    left to Spark.
    """
    select = node.parent.parent if node.parent is not None else None
    if not isinstance(select, exp.Select) or not visible:
        return False
    joined = bool(select.args.get("joins"))
    columns = [exp.column(name, table=alias, quoted=True) for name in visible]
    items: list[exp.Expression] = []
    changed = False
    for item in select.expressions:
        bare = isinstance(item, exp.Star) and not joined
        qualified = (
            isinstance(item, exp.Column)
            and isinstance(item.this, exp.Star)
            and item.table.lower() == alias.lower()
        )
        if bare or qualified:
            items.extend(c.copy() for c in columns)
            changed = True
        else:
            items.append(item)
    if changed:
        select.set("expressions", items)
    return changed
