"""Rule: Drill's semantics spelled in Spark SQL where the two differ on the same text."""

from __future__ import annotations

from sqlglot import exp

from auger.errors import UserError
from auger.sql.frontend.translate import literal_integer_divisions
from auger.sql.planning.columns import DIV_TAG, KVGEN_TAG, TO_CHAR_TAG
from auger.sql.planning.row_counts import sum_row_weights
from auger.sql.planning.select_plan import SelectPlan
from auger.sql.planning.session_user import session_user

__all__ = ["drill_to_spark"]


def drill_to_spark(plan: SelectPlan) -> None:
    """Counting scans' row weights summed; integer division, KVGEN of an object and TO_CHAR of a
    number as Drill means them (known from the column analysis, else integer division of
    literals only); ``CURRENT_USER`` and its kin as the session's user."""
    tree = plan.tree
    if plan.counting and plan.discovered:
        tree = sum_row_weights(tree)
    analysis = plan.analysis
    if analysis is None:
        tree = literal_integer_divisions(tree)
    else:
        if analysis.integer_divisions:
            tree = _integer_divisions(tree, analysis.integer_divisions)
        if analysis.kvgen_mixed:
            raise UserError.unsupported(
                "kvgen function only supports maps whose values are all of one type",
                [f"Members: {', '.join(next(iter(analysis.kvgen_mixed.values())))}"],
            )
        if analysis.kvgen_members:
            tree = _kvgen_over_structs(tree, analysis.kvgen_members)
        if analysis.numeric_to_char:
            tree = _numeric_to_char(tree, analysis.numeric_to_char)
    columns = {name for schema in plan.schemas.values() for name in schema}
    plan.tree = session_user(tree, plan.statement.user, columns)


def _kvgen_over_structs(tree: exp.Expression, members: dict[int, list[str]]) -> exp.Expression:
    """KVGEN of a JSON object (a Spark struct): the entries of a map built from its members."""

    def fix(node: exp.Expression) -> exp.Expression:
        tag = node.meta.get(KVGEN_TAG) if isinstance(node, exp.Anonymous) else None
        if tag is None or tag not in members:
            return node
        arg = node.expressions[0]
        pairs: list[exp.Expression] = []
        for name in members[tag]:
            pairs.append(exp.Literal.string(name))
            pairs.append(exp.Dot(this=arg.copy(), expression=exp.to_identifier(name, quoted=True)))
        return exp.Anonymous(
            this="MAP_ENTRIES", expressions=[exp.Anonymous(this="MAP", expressions=pairs)]
        )

    return tree.transform(fix)


def _numeric_to_char(tree: exp.Expression, tags: set[int]) -> exp.Expression:
    """``TO_CHAR(number, '#,###.##')``: Spark's FORMAT_NUMBER takes the same decimal pattern."""

    def fix(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.TimeToStr) and node.meta.get(TO_CHAR_TAG) in tags:
            return exp.Anonymous(this="FORMAT_NUMBER", expressions=[node.this, node.args["format"]])
        return node

    return tree.transform(fix)


def _integer_divisions(tree: exp.Expression, tags: set[int]) -> exp.Expression:
    """Drill divides two integers as integers: ``7 / 2`` is 3 (Spark's ``DIV``)."""

    def fix(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Div) and node.meta.get(DIV_TAG) in tags:
            return exp.IntDiv(this=node.this, expression=node.expression)
        return node

    return tree.transform(fix)
