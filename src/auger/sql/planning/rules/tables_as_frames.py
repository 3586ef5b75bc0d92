"""Rule: each table reference becomes the name of its DataFrame in the Spark SQL."""

from __future__ import annotations

from sqlglot import exp

from auger.sql.planning.columns import table_alias
from auger.sql.planning.select_plan import SelectPlan

__all__ = ["tables_as_frames"]


def tables_as_frames(plan: SelectPlan) -> None:
    """``dfs.`logs/2024``` as ``<frame name> AS `logs/2024```: the alias the query's columns use
    is kept, the table is the DataFrame handed to Spark under that name."""
    for n, node in enumerate(plan.tables):
        alias = table_alias(node)
        replacement = exp.Table(this=exp.to_identifier(plan.names[n]))
        replacement.set("alias", exp.TableAlias(this=exp.to_identifier(alias, quoted=True)))
        node.replace(replacement)
