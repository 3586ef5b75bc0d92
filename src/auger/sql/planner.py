"""SELECT planning: Drill names and semantics in, one Spark DataFrame out.

1. find every table the query reads (CTE and derived-table names excluded);
2. resolve each through the catalog, list its files and discover its schema;
3. compute what each scan must deliver: the columns the query names (or all, for ``*``),
   implicit (``filename``...) and partition (``dirN``) columns, and named-but-absent columns as
   typed nulls (Drill's rule);
4. build one DataFrame per table (the ``auger`` data source, a view's plan, a system table) and
   rewrite the query onto them, with Drill→Spark rewrites and Drill's output names (``EXPR$0``);
5. hand the Spark SQL to Spark with those DataFrames as its tables
   (:mod:`auger.spark.frame_sql`: nothing is registered in the session's catalog).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from auger.errors import ErrorKind, UserError
from auger.scan.plan import (
    ROW_COUNT_COLUMN,
    PlannedScan,
    Requested,
    ScanTable,
    discover_table,
    implicit_labels,
    partition_label,
    plan_scan,
)
from auger.scan.spec import ColumnSource
from auger.sql import diagnostics
from auger.sql.catalog import FileTable, SystemTable, TableRef, ViewTable
from auger.sql.columns import (
    DIV_TAG,
    KVGEN_TAG,
    TABLE_TAG,
    TO_CHAR_TAG,
    analyse_columns,
    column_path,
    table_alias,
)
from auger.sql.compact_columns import compact_columns_scan, read_positions_directly
from auger.sql.local_answer import LocalAnswer, is_star_limit, spark_result_table
from auger.sql.missing_members import null_missing_members
from auger.sql.pruning import prune_scan
from auger.sql.row_counts import count_rows_query, counting_scan, sum_row_weights
from auger.sql.session_user import session_user
from auger.sql.star_columns import spell_out_star
from auger.sql.table_functions import apply_table_function, is_table_function, table_function
from auger.sql.translate import literal_integer_divisions, to_spark_sql
from auger.storage.filesystem import is_uri
from auger.storage.selection import FileSelection, select_files
from auger.types import TupleSchema

if TYPE_CHECKING:
    from auger.session import UserSession

__all__ = ["PlannedScan", "plan_file_scan", "plan_select"]


def _known_names(found: ScanTable, options: Mapping[str, Any]) -> dict[str, str]:
    """Every column name a query may use of a file table -> a Spark type string."""
    from auger.types.spark import column_to_spark

    out: dict[str, str] = {}
    for col in found.schema:
        try:
            out[col.name.lower()] = column_to_spark(col).simpleString()
        except Exception:  # a type Spark cannot express: any type will do for naming
            out[col.name.lower()] = "string"
    for label in implicit_labels(options):
        out[label] = "string"
    dir_label = partition_label(options)
    for level in range(max(found.selection.max_depth, 1)):
        out[f"{dir_label}{level}".lower()] = "string"
    for key in found.hive:
        out.setdefault(key, "string")
    return out


def _check_linked_files(table: FileTable, selection: FileSelection) -> None:
    """A directory or glob scan follows links to files: the files they lead to meet the
    session's denied paths too (the table's own path met them when it was resolved).

    Raises:
        UserError: PERMISSION, when a linked file is (or lies in) a denied path.
    """
    guard = table.workspace.guard
    if guard is None:
        return
    for f in selection.files:
        if is_uri(f.path):
            continue  # an object store has no links
        real = os.path.realpath(f.path)
        if real != f.path:
            guard.check(real, table.name, table.workspace.name)


def discover_file_table(table: FileTable, options: Mapping[str, Any]) -> ScanTable:
    """List a file table's files, pick its format and discover (or read the provided) schema."""
    from auger.spark.discovery import discover_schema

    try:
        selection = select_files(table.path)
    except UserError as exc:
        if exc.kind is not ErrorKind.VALIDATION:
            raise  # an object store that cannot be asked: its own words, not "not found"
        schema = table.schema.removesuffix(".default")
        raise UserError.validation(
            f"Object '{table.name}' not found within '{schema}'",
            [f"Path: {table.path}", *exc.context],
        ) from None
    _check_linked_files(table, selection)
    # the format comes from the first file that has one: a README listed first is no reason
    # to refuse a directory of JSON files
    known_files = (f.path for f in selection.files if table.workspace.format_for(f.path))
    probe = next(known_files, selection.files[0].path if selection.files else table.path)
    fmt = table.format_override or table.workspace.format_for(probe)
    if fmt is None and selection.is_directory and not selection.files:
        # Drill reads a directory with no visible files (empty, or only ``_SUCCESS``/``.crc``)
        # as an empty table of no columns, not as a file of unknown format. No file will be
        # opened; JSON's rules give a column the query names Drill's nullable INT.
        known = list(table.workspace.plugin.formats.values())
        fmt = next((f for f in known if f.type == "json"), known[0] if known else None)
    if fmt is None:
        raise UserError.validation(
            f"No format plugin for file [{probe.rsplit('/', 1)[-1]}] in schema [{table.schema}]",
            [
                f"Known formats: {', '.join(table.workspace.plugin.formats)}",
                "Fix: use a known extension, or add a format to the workspace config",
            ],
        )
    return discover_table(
        selection,
        fmt,
        options,
        discover_schema,
        table.workspace.format_for if table.format_override is None else None,
        table.name,
        table.path,
        table.schema_override,
        diagnostics.table_label(table),
    )


def plan_file_scan(
    table: FileTable,
    requested: Requested,
    options: Mapping[str, Any],
    allow_missing: bool,
    limit: int | None = None,
    never_missing: set[str] | frozenset[str] = frozenset(),
) -> PlannedScan:
    """Plan the scan of one file table: files, format, discovered schema, output columns."""
    found = discover_file_table(table, options)
    return build_file_scan(found, requested, options, allow_missing, limit, never_missing)


def build_file_scan(
    found: ScanTable,
    requested: Requested,
    options: Mapping[str, Any],
    allow_missing: bool,
    limit: int | None = None,
    never_missing: set[str] | frozenset[str] = frozenset(),
    check_types: bool = False,
) -> PlannedScan:
    """The scan spec of a discovered table for what the query requests of it (see
    :func:`~auger.scan.plan.plan_scan`), each named column no file has reported."""
    planned = plan_scan(found, requested, options, allow_missing, limit, never_missing, check_types)
    for name in planned.missing:
        diagnostics.column_not_found(
            found.label, name, len(found.selection.files), found.schema.names()
        )
    return planned


# --------------------------------------------------------------------------- query analysis
def _table_nodes(tree: exp.Expression) -> list[exp.Table]:
    """Physical table references (CTE names and derived tables excluded), in query order."""
    seen: dict[int, exp.Table] = {}
    for scope in traverse_scope(tree):
        for _, (_node, source) in scope.selected_sources.items():
            if isinstance(source, exp.Table) and (
                isinstance(source.this, exp.Identifier) or is_table_function(source)
            ):
                seen.setdefault(id(source), source)
    # Tables in subqueries of non-SELECT wrappers (e.g. CTAS) are found by traverse_scope too.
    return list(seen.values())


def _defined_names(tree: exp.Expression) -> set[str]:
    """Names the query itself defines: select aliases, CTE names, derived-table columns."""
    names: set[str] = set()
    for alias in tree.find_all(exp.Alias):
        names.add(alias.alias.lower())
    for cte in tree.find_all(exp.CTE):
        names.add(cte.alias.lower())
    for ta in tree.find_all(exp.TableAlias):
        names.add(ta.name.lower())
        for col in ta.columns:
            names.add(col.name.lower())
    return names


def _analyse(tree: exp.Expression, tables: list[exp.Table]) -> dict[int, Requested]:
    """Which columns each table must deliver (an over-approximation is harmless)."""
    by_name: dict[str, exp.Table] = {}
    for t in tables:
        by_name.setdefault((t.alias_or_name or t.name).lower(), t)
        by_name.setdefault(t.name.lower(), t)
    req: dict[int, Requested] = {id(t): Requested() for t in tables}

    for star in tree.find_all(exp.Star):
        parent = star.parent
        if isinstance(parent, exp.Column) and parent.table:
            target = by_name.get(parent.table.lower())
            if target is not None:
                req[id(target)].star = True
            continue
        if isinstance(parent, exp.Select | exp.Column):
            for t in tables:
                req[id(t)].star = True
    for col in tree.find_all(exp.Column):
        if isinstance(col.this, exp.Star):
            continue
        parts = [p.name for p in col.parts]
        target = None
        if len(parts) > 1 and parts[0].lower() in by_name:
            target = by_name[parts[0].lower()]
            parts = parts[1:]
        root = parts[0]
        if target is not None:
            # the member path too (``t.nope.x``): a map no file has is planned with its members
            req[id(target)].add(root, ".".join([*parts[:-1], column_path(col)[1]]))
        else:
            for t in tables:
                req[id(t)].add(root)
    return req


#: Views nested deeper than this are taken to reference themselves.
MAX_VIEW_DEPTH = 32


@dataclass(frozen=True)
class PlanContext:
    """Where names are resolved: the session's default schema, or a view's stored schema path.

    ``in_view`` is set while a view's SQL is planned: temporary tables are not allowed there.
    """

    default_schema: str | None = None
    in_view: bool = False
    depth: int = 0


def plan_select(
    tree: exp.Expression,
    session: UserSession,
    context: PlanContext | None = None,
    local: bool = False,
) -> Any:
    """Plan a SELECT (or a set operation) and return the Spark DataFrame that answers it.

    With ``local``, a bare ``SELECT * ... LIMIT n`` whose scan is read on the driver anyway
    returns a :class:`~auger.sql.local_answer.LocalAnswer` instead (see that module).
    """
    from auger.spark.frame_sql import frame_names, sql_over_frames
    from auger.spark.frames import scan_frame
    from auger.sql.dirfunctions import query_directory_functions

    spark = session.engine.spark
    tree = query_directory_functions(tree.copy(), session)
    tables = _table_nodes(tree)
    if context is not None and context.in_view:
        from auger.sql.temporary import check_no_temporary_tables

        check_no_temporary_tables(tables, session, context.default_schema)
    options = session.options.snapshot()
    names = frame_names(len(tables))  # each table's name in the Spark SQL
    limit = _pushable_limit(tree, len(tables))
    counting = count_rows_query(tree, len(tables))
    answer_here = local and len(tables) == 1 and is_star_limit(tree)
    frames: dict[int, Any] = {}
    direct_positions: dict[int, set[int]] = {}
    discovered: dict[int, ScanTable] = {}
    schemas: dict[str, dict[str, str]] = {}
    for n, node in enumerate(tables):
        ref = resolve_table_node(node, session, context)
        if isinstance(ref, FileTable):
            discovered[n] = discover_file_table(ref, options)
            schemas[names[n]] = _known_names(discovered[n], options)
        else:
            frames[n] = _table_frame(ref, session, context)
            schemas[names[n]] = {
                f.name.lower(): f.dataType.simpleString() for f in frames[n].schema.fields
            }
    for n, node in enumerate(tables):
        node.meta[TABLE_TAG] = n
    for k, div in enumerate(tree.find_all(exp.Div)):
        div.meta[DIV_TAG] = k
    for k, fn in enumerate(tree.find_all(exp.Anonymous)):
        if fn.name.upper() == "KVGEN":
            fn.meta[KVGEN_TAG] = k
    for k, to_char in enumerate(tree.find_all(exp.TimeToStr)):
        to_char.meta[TO_CHAR_TAG] = k
    analysis = analyse_columns(tree, names, schemas)
    if analysis is None:  # the coarse rule: every unqualified name for every table
        requested = _analyse(tree, tables)
        defined = _defined_names(tree)
        coarse = {id(t): requested[id(t)] for t in tables}
    starred: dict[str, TupleSchema] = {}  # alias -> schema of a file table under ``*``
    no_columns = False  # some ``*`` is over a table without columns
    for n, node in enumerate(tables):
        if n in discovered:
            star = (analysis.requested[n] if analysis else coarse[id(node)]).star
            if star:
                starred.setdefault(table_alias(node).lower(), discovered[n].schema)
            if analysis is not None:
                planned = build_file_scan(
                    discovered[n], analysis.requested[n], options, True, limit, check_types=True
                )
            else:
                planned = build_file_scan(
                    discovered[n],
                    coarse[id(node)],
                    options,
                    allow_missing=len(tables) == 1,
                    limit=limit,
                    never_missing=defined,
                )
            planned = prune_scan(planned, node)  # files ruled out by WHERE on dirN etc.
            diagnostics.scan_planned(
                discovered[n],
                analysis.requested[n] if analysis else coarse[id(node)],
                planned,
                options,
            )
            if counting:
                weighted = counting_scan(planned)
                if weighted is None:
                    counting = False
                else:
                    planned = weighted
            if not counting and (compact := compact_columns_scan(planned)) is not None:
                # columns[n] as plain string columns, see the module
                planned, direct_positions[n] = compact
            # ``*`` over a table without columns: rows of no columns, as in Drill
            rows_only = star and planned.schema.names() == [ROW_COUNT_COLUMN]
            if answer_here and not counting and not planned.conversions:
                answer = _local_answer(spark, planned, options, rows_only)
                if answer is not None:
                    return answer
            if star and not rows_only:
                _hide_implicit_from_star(node, planned)
            frames[n] = scan_frame(spark, planned, options)
            if rows_only:
                frames[n] = frames[n].drop(ROW_COUNT_COLUMN)
                no_columns = True
            if planned.conversions:
                frames[n] = frames[n].selectExpr(*planned.conversions)
    if starred:
        null_missing_members(tree, starred)
    for n, node in enumerate(tables):
        alias = table_alias(node)
        replacement = exp.Table(this=exp.to_identifier(names[n]))
        replacement.set("alias", exp.TableAlias(this=exp.to_identifier(alias, quoted=True)))
        node.replace(replacement)
    if counting and discovered:
        tree = sum_row_weights(tree)
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
    finish = None
    if len(tables) == 1 and 0 in direct_positions:
        finish = functools.partial(read_positions_directly, positions=direct_positions[0])
    columns = {name for schema in schemas.values() for name in schema}
    tree = session_user(tree, session.user, columns)
    sql = to_spark_sql(tree, finish)
    from auger.spark.errors import unwrap_spark_error

    try:
        frame = sql_over_frames(spark, sql, {names[n]: frames[n] for n in range(len(tables))})
        if local and no_columns and not frame.columns:
            # Arrow batches without columns carry no row count, so Spark would ship no
            # rows: they are counted here and answered as rows of no columns
            return LocalAnswer(_no_columns(frame.count()), frame.schema)
        return frame
    except Exception as exc:
        raise unwrap_spark_error(exc) from exc


def _hide_implicit_from_star(node: exp.Table, planned: PlannedScan) -> None:
    """The scan delivers implicit columns the query names; Drill's ``*`` does not show them."""
    sources = planned.spec.sources
    names = planned.schema.names()
    if any(sources.get(n) in ColumnSource.IMPLICIT for n in names):
        visible = [n for n in names if sources.get(n) not in ColumnSource.IMPLICIT]
        spell_out_star(node, table_alias(node), visible)


def _no_columns(rows: int) -> Any:
    """An Arrow table of ``rows`` rows and no columns."""
    import pyarrow as pa

    return pa.table({"rows": pa.nulls(rows)}).drop_columns(["rows"])


def _local_answer(
    spark: Any, planned: PlannedScan, options: Mapping[str, Any], rows_only: bool = False
) -> Any:
    from auger.spark.local_scan import local_limit_table

    table = local_limit_table(planned, options)
    if table is None or planned.spec.limit is None:
        return None
    # sliced while it has a column: pyarrow slices a table of no columns to the length asked
    # for, whatever it held (an empty file's ``SELECT * ... LIMIT 5`` was five empty rows)
    table = table.slice(0, planned.spec.limit)
    if rows_only:  # only the rows' count was scanned: the answer has no columns
        table = table.drop_columns([ROW_COUNT_COLUMN])
        planned = replace(planned, schema=TupleSchema())
    spark_schema = planned.schema.to_spark()
    table = spark_result_table(table, spark_schema, spark)
    return LocalAnswer(table, spark_schema)


def _table_frame(ref: TableRef, session: UserSession, context: PlanContext | None) -> Any:
    """The DataFrame of a table that is not a file scan: a view, a system or temporary table."""
    spark = session.engine.spark
    if isinstance(ref, ViewTable):
        return view_dataframe(ref, session, context)
    if isinstance(ref, SystemTable):
        if ref.schema == "sys":
            from auger.sql.sys_tables import sys_table

            return _local_frame(spark, sys_table(ref.name, session))
        from auger.sql.information_schema import info_schema_table

        return _local_frame(spark, info_schema_table(ref.name, session))
    return session.table_dataframe(ref)


def _local_frame(spark: Any, table: Any) -> Any:
    """A DataFrame of a small Arrow table; its timestamps stay zone-less, as Drill's are."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampType

    df = spark.createDataFrame(table)
    for f in df.schema.fields:
        if isinstance(f.dataType, TimestampType):
            df = df.withColumn(f.name, F.col(f"`{f.name}`").cast("timestamp_ntz"))
    return df


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


def _pushable_limit(tree: exp.Expression, n_tables: int) -> int | None:
    """A LIMIT that may stop the scan early: one table, no filter/aggregate/order/join."""
    if n_tables != 1 or not isinstance(tree, exp.Select):
        return None
    limit = tree.args.get("limit")
    if limit is None or tree.args.get("offset") is not None:
        return None
    if any(
        tree.args.get(k)
        for k in ("where", "group", "having", "order", "joins", "distinct", "qualify")
    ):
        return None
    if any(isinstance(e, exp.AggFunc) for s in tree.selects for e in s.find_all(exp.AggFunc)):
        return None
    if any(s.find(exp.Explode, exp.Flatten) for s in tree.selects):
        return None
    value = limit.expression
    if isinstance(value, exp.Literal) and value.is_int:
        return int(value.this)
    return None


def resolve_table_node(
    node: exp.Table, session: UserSession, context: PlanContext | None = None
) -> TableRef:
    function = table_function(node) if is_table_function(node) else None
    parts = function.parts if function else [p.name for p in node.parts]
    if context is not None and context.in_view:
        # a view sees no temporary table; its paths meet the session's denied paths (another
        # session's temporary location among them) in the workspace's resolution
        ref = session.catalog.resolve_table(parts, context.default_schema)
    else:
        ref = session.resolve_table(parts)
    if function is not None:
        if not isinstance(ref, FileTable):
            raise UserError.validation(
                f"Table function options apply to file tables only, not [{'.'.join(parts)}]"
            )
        ref = apply_table_function(ref, function)
    return ref


def view_dataframe(ref: ViewTable, session: UserSession, context: PlanContext | None) -> Any:
    """Plan a view's SQL in the schema it was created in; name its columns as it says."""
    from auger.sql.parser import parse_statement

    depth = (context.depth if context else 0) + 1
    if depth > MAX_VIEW_DEPTH:
        raise UserError.validation(
            f"View [{ref.name}] nests deeper than {MAX_VIEW_DEPTH} levels; does it refer to itself?"
        )
    schema_path = ".".join(ref.view.workspace_schema_path) or None
    tree = parse_statement(ref.view.sql)
    df = plan_select(tree, session, PlanContext(schema_path, in_view=True, depth=depth))
    names = ref.view.column_names
    if names and len(names) == len(df.columns) and names != list(df.columns):
        df = df.toDF(*names)
    return df
