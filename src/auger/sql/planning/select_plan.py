"""A SELECT on its way from Drill's query tree to a Spark DataFrame: what the planner's rules
(:mod:`auger.sql.planning.rules`) read and write.

:func:`~auger.sql.planning.planner.plan_select` makes one :class:`SelectPlan` and runs the rules
over it in order; each rule fills in what the later ones need. A rule that can answer the query
on its own (a small ``LIMIT`` read on the driver) sets :attr:`SelectPlan.answer`, and the rules
after it do not run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from auger.scan.plan import Requested, ScanTable
from auger.sql.catalog.resolution import ViewTable
from auger.sql.context import StatementContext
from auger.sql.planning.columns import Analysis
from auger.types import TupleSchema

__all__ = ["PlanContext", "SelectPlan"]


@dataclass(frozen=True)
class PlanContext:
    """Where names are resolved: the session's default schema, or a view's stored schema path.

    ``in_view`` is set while a view's SQL is planned: temporary tables are not allowed there.
    """

    default_schema: str | None = None
    in_view: bool = False
    depth: int = 0


@dataclass
class SelectPlan:
    """The state of one SELECT being planned; the rules fill it in, in order.

    Attributes:
        tree: the query, a copy the rules rewrite in place and replace.
        statement: the statement's context (catalog, options, user, Spark, recordings): with
            the plan, all a rule reads and writes.
        context: where names resolve (a view's schema), or None for the session's default.
        local: whether a small answer read on the driver may be returned instead of a DataFrame.
        view_frame: plans a view's SQL (the planner itself, one level deeper).
        spark: the Spark session.
        options: the session's options, as one snapshot for the whole statement.
        schema_only: the plan is for its schema alone (``DESCRIBE``): no value is read.
        tables: the physical table references of the query, in query order.
        names: each table's name in the Spark SQL, by position.
        limit: a ``LIMIT`` the scan may stop at, if any.
        counting: whether the query only counts rows (scans send one weighted row per batch).
        answer_here: whether a bare ``SELECT * [LIMIT n]`` may be answered on the driver.
        discovered: file tables (by position) with their files and discovered schema.
        frames: each table's DataFrame, by position.
        schemas: each Spark table name's columns (lower-cased) and Spark types.
        analysis: which columns each table must deliver, or None where the query could not be
            qualified (then ``coarse`` holds Drill's coarse rule).
        coarse: the coarse rule's requests, by table node id.
        defined: names the query itself defines (aliases, CTE names), for the coarse rule.
        starred: table alias -> schema, for file tables read under ``*``.
        direct_positions: ``columns[n]`` positions read as plain columns, by table position.
        typed_casts: casts of text columns to numbers the table's frame delivers as columns
            ((column, target) → frame column, :mod:`auger.sql.planning.typed_casts`), by table
            position.
        no_columns: some ``*`` is over a table without columns.
        answer: what the query answers, once a rule knows it.
    """

    tree: exp.Expression
    statement: StatementContext
    context: PlanContext | None
    local: bool
    view_frame: Callable[[ViewTable], Any]
    spark: Any = None
    options: Mapping[str, Any] = field(default_factory=dict)
    schema_only: bool = False
    tables: list[exp.Table] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    limit: int | None = None
    counting: bool = False
    answer_here: bool = False
    discovered: dict[int, ScanTable] = field(default_factory=dict)
    frames: dict[int, Any] = field(default_factory=dict)
    schemas: dict[str, dict[str, str]] = field(default_factory=dict)
    analysis: Analysis | None = None
    coarse: dict[int, Requested] = field(default_factory=dict)
    defined: set[str] = field(default_factory=set)
    starred: dict[str, TupleSchema] = field(default_factory=dict)
    direct_positions: dict[int, set[int]] = field(default_factory=dict)
    typed_casts: dict[int, dict[tuple[str, str], str]] = field(default_factory=dict)
    no_columns: bool = False
    answer: Any = None

    def requested(self, n: int) -> Requested:
        """What the query requests of table ``n``, by whichever rule could tell."""
        if self.analysis is not None:
            return self.analysis.requested[n]
        return self.coarse[id(self.tables[n])]
