"""Rule: the first rows of a sorted query are found by their sort key before their other
columns are read.

``SELECT * FROM t ORDER BY amount DESC LIMIT 10`` is Spark's ``TakeOrderedAndProject``: every
row of the table is made a row of all its columns, and compared by its key, to keep ten. Over 6.5
M rows of five columns in Parquet, that took 1.0-1.2 s in Spark, where the key alone took 0.3
s. So where the table's frame reads Parquet files (a Parquet table, the raw-file cache's
entries), which cost little to read twice, of :data:`MIN_BYTES` at least, the query is run as

    SELECT * FROM t WHERE amount >= (SELECT MIN(k) FROM
        (SELECT amount AS k FROM t ORDER BY amount DESC LIMIT 10)) OR amount IS NULL
    ORDER BY amount DESC LIMIT 10

(``<=`` and ``MAX`` for an ascending key): Spark runs the subquery first, reading the key
alone, and the outer query's filter reads the key of each row before its other columns, so
only the few rows at least as far up the order as the tenth are made whole (0.45-0.55 s in
Spark). Through the engine, over the same rows: ``SELECT * ... ORDER BY name LIMIT 5`` of a
Parquet table 2.8 s before, 1.1 s; of 300 MB of CSV held in the raw-file cache 1.4 s, 1.0 s;
``SELECT * ... ORDER BY amount DESC LIMIT 5`` of 300 MB of cached JSON 0.55 s, 0.40 s.

The answer is one the query as written may give: every row of its first ten is kept by the
filter (a row before the tenth in the order has a key at least as far up; a NULL key, however
the query orders NULLs, passes by ``IS NULL``), so the first ten of the filtered rows are the
first ten of the table; rows whose keys tie may be others, as they may be from one run to the
next of the query itself. The subquery has the query's own ``WHERE``, and only the first key of
``ORDER BY`` bounds the rows (the others order ties, which the bound keeps). Left as it is: a
query with groups, aggregates, ``DISTINCT``, windows or ``OFFSET``, a ``LIMIT`` past
:data:`MAX_ROWS`, a first key that is not arithmetic of the table's columns (a function call
could be non-deterministic or costly, a cast of text costs more than reading it again), a query
that reads no column besides its key, and a table whose files are parsed or a view that joins,
groups or sorts (reading it twice would parse, join, group or sort twice).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from auger.sql.planning.typed_casts import is_table_column, may_read_typed, table_name

__all__ = ["MAX_ROWS", "MIN_BYTES", "bound_first_rows"]

#: The largest ``LIMIT`` bounded by its key: the subquery's own top rows stay few.
MAX_ROWS = 10_000

#: The least Parquet a bounded query reads: the subquery is one more Spark job, which a small
#: table does not repay (``SELECT * ... ORDER BY salary DESC LIMIT 5`` of cp.`employee.json`,
#: rows held on the driver: 67 ms as written, 145 ms bounded).
MIN_BYTES = 32 * 1024 * 1024

#: What a bounded sort key may be made of: the table's columns, literals and arithmetic (each
#: deterministic, and as cheap to compute twice as to read). Not a cast: Spark's cast of a
#: string to a number costs more than reading the string, and a cast the raw-file cache's typed
#: copies answer is a column by now (``SELECT * ... ORDER BY CAST(amount AS DOUBLE) LIMIT 5``
#: over cached CSV, whose ``*`` reads no copy: 1.6 s as written, 2.1 s bounded).
_PLAIN = (
    exp.Column,
    exp.Identifier,
    exp.Literal,
    exp.Paren,
    exp.Neg,
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Div,
)

_KEY = "__auger_first_key"


def bound_first_rows(tree: exp.Expression, rereads_cheaply: Callable[[], bool]) -> exp.Expression:
    """``ORDER BY <key> LIMIT n`` with a filter that keeps the rows whose key is at least as
    far up the order as the n-th row's (see the module). ``rereads_cheaply``: whether the
    one table's frame costs little to read twice and is large enough to repay it, asked only
    for a query that qualifies. Runs on the Spark tree, last of the one-table rules."""
    if not may_read_typed(tree) or not isinstance(tree, exp.Select):
        return tree
    order, limit = tree.args.get("order"), tree.args.get("limit")
    if not (isinstance(order, exp.Order) and order.expressions and isinstance(limit, exp.Limit)):
        return tree
    rows = limit.expression
    if not (isinstance(rows, exp.Literal) and rows.is_int and 0 < int(rows.name) <= MAX_ROWS):
        return tree
    if tree.args.get("offset") or tree.args.get("distinct") or tree.args.get("group"):
        return tree
    if any(tree.args.get(k) for k in ("having", "qualify")):
        return tree
    if tree.find(exp.AggFunc, exp.Window) is not None:
        return tree
    first = order.expressions[0]
    key = _resolved(first.this, tree)
    table = table_name(tree)
    columns = list(key.find_all(exp.Column)) if key is not None else []
    if key is None or not columns or not all(isinstance(n, _PLAIN) for n in key.walk()):
        return tree
    if not all(is_table_column(c, table) for c in columns):
        return tree
    if not _reads_more_than(tree, {c.name.lower() for c in columns}):
        return tree
    if not rereads_cheaply():
        return tree
    inner = exp.select(exp.alias_(key.copy(), _KEY, quoted=True))
    inner.set("from_", tree.args["from_"].copy())
    if (where := tree.args.get("where")) is not None:
        inner.set("where", where.copy())
    ordered = first.copy()
    ordered.set("this", key.copy())
    inner.set("order", exp.Order(expressions=[ordered]))
    inner.set("limit", limit.copy())
    descending = bool(first.args.get("desc"))
    bound = exp.Min if descending else exp.Max
    threshold = exp.Subquery(
        this=exp.select(bound(this=exp.column(_KEY, quoted=True))).from_(
            inner.subquery("__auger_first_rows")
        )
    )
    within = (exp.GTE if descending else exp.LTE)(this=key.copy(), expression=threshold)
    kept = exp.or_(within, exp.Is(this=key.copy(), expression=exp.Null()))
    return tree.where(kept, copy=False)


def _resolved(key: exp.Expression, tree: exp.Expression) -> exp.Expression | None:
    """The sort key as an expression of the table: a select alias it names (Spark resolves an
    ``ORDER BY`` name to the select list's alias first) replaced by what it aliases; None for
    a position (``ORDER BY 2``)."""
    if isinstance(key, exp.Literal):
        return None
    if isinstance(key, exp.Column) and not key.table:
        for item in tree.expressions:
            if isinstance(item, exp.Alias) and item.alias.lower() == key.name.lower():
                return item.this
    return key


def _reads_more_than(tree: exp.Expression, key_columns: set[str]) -> bool:
    """Whether the select list reads a column besides the key's (``*`` does)."""
    for item in tree.expressions:
        if item.find(exp.Star) is not None:
            return True
        if any(c.name.lower() not in key_columns for c in item.find_all(exp.Column)):
            return True
    return False
