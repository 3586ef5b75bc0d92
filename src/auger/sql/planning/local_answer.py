"""``SELECT * FROM <files> [LIMIT n]``: answered from the driver's read, without Spark.

The way a Drill user looks at a new file is ``SELECT * FROM dfs.`path` LIMIT 10``. A pushed
LIMIT small enough is already read on the driver (:mod:`auger.spark.local_scan`); for this one
shape the rows of that read *are* the answer, so handing them to Spark as a local relation,
analysing ``SELECT *`` over it and collecting them back would only add latency (a few tens of
milliseconds of py4j round trips and Arrow copies, several times the read itself).

Without a LIMIT the answer is the whole of the files: when they fit
``auger.scan.local_answer_bytes`` they are read on the driver as well. Spark would read them,
turn every Arrow batch into rows and the rows back into Arrow to ship them to the driver,
which costs several times the read for a wide table.

Only the bare shape qualifies: one file table, a lone ``*``, a literal LIMIT or none, and
nothing else (no WHERE, ORDER BY, DISTINCT, OFFSET...), and a scan that needs no conversion.
The answer carries the Spark schema the DataFrame would have, so types and column metadata are
the same, and it can still build the DataFrame on demand (for ``Connection.sql``, CTAS and
views).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from sqlglot import exp

__all__ = ["LocalAnswer", "is_bare_star", "spark_result_table"]

#: The only parts such a SELECT may have; any other clause makes it more than "the scan's first
#: rows" (a whitelist, so clauses of newer sqlglot versions are excluded too).
_ALLOWED = frozenset({"expressions", "from", "from_", "limit"})


@dataclass(frozen=True)
class LocalAnswer:
    """A SELECT's rows read on the driver, with the Spark schema its DataFrame has."""

    table: pa.Table
    spark_schema: Any


def is_bare_star(tree: exp.Expression) -> bool:
    """Whether the statement is exactly ``SELECT * FROM <one table> [LIMIT <integer>]``."""
    if not isinstance(tree, exp.Select):
        return False
    if any(v for k, v in tree.args.items() if k not in _ALLOWED):
        return False
    selects = tree.expressions
    if len(selects) != 1 or not isinstance(selects[0], exp.Star):
        return False
    source = tree.args.get("from_") or tree.args.get("from")
    if source is None or not isinstance(source.this, exp.Table):
        return False
    if any(source.this.args.get(k) for k in ("joins", "laterals", "pivots")):
        return False
    limit = tree.args.get("limit")
    if limit is None:
        return True
    value = limit.expression
    return isinstance(value, exp.Literal) and value.is_int


def spark_result_table(table: pa.Table, spark_schema: Any, spark: Any) -> pa.Table:
    """The table as ``DataFrame.toArrow()`` would return it for this schema (that method casts
    to ``to_arrow_schema`` with the session's large-types setting)."""
    # deferred: loads pyspark (heavy)
    from pyspark.sql.pandas.types import to_arrow_schema

    large = spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false") == "true"
    target = to_arrow_schema(
        spark_schema,
        error_on_duplicated_field_names_in_struct=True,
        timezone="UTC",
        prefers_large_types=large,
    )
    return table if table.schema.equals(target) else table.cast(target)
