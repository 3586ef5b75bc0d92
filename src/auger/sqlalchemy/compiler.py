"""How SQLAlchemy writes SQL for auger: Drill's backtick quoting, Drill's type names in CAST and
Drill's ``LIMIT``/``OFFSET``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.sql import compiler


class AugerIdentifierPreparer(compiler.IdentifierPreparer):
    """Every identifier in backticks, and a schema name quoted part by part.

    Quoting every name (rather than only those SQLAlchemy thinks need it) spares a list of
    Drill's reserved words that would drift from the parser's, and keeps file names such as
    ``employee.json`` or ``tpch/nation.parquet`` whole. A schema such as ``dfs.tmp`` is a
    plugin and a workspace, so it is written ```dfs`.`tmp```.
    """

    def __init__(self, dialect: Any) -> None:
        super().__init__(dialect, initial_quote="`", final_quote="`", escape_quote="`")

    def _requires_quotes(self, value: str) -> bool:
        return True

    def quote_schema(self, schema: str) -> str:
        return ".".join(self.quote(part) for part in schema.split("."))


class AugerCompiler(compiler.SQLCompiler):
    """Drill's SELECT: a column is qualified by its table's name alone, and ``OFFSET`` may
    stand without ``LIMIT`` (there is no ``LIMIT -1``)."""

    def visit_column(
        self,
        column: Any,
        add_to_result_map: Any = None,
        include_table: bool = True,
        result_map_targets: tuple[Any, ...] = (),
        ambiguous_table_name_map: Any = None,
        **kwargs: Any,
    ) -> str:
        # A table is known in its query by its last name (``t.csvh`` for ``dfs.tmp.`t.csvh```);
        # a column reference spelled with the schema too (``dfs.tmp.`t.csvh`.a``) is not one.
        table = column.table
        bare_table = (
            include_table
            and table is not None
            and table.named_with_column
            and bool(self.preparer.schema_for_object(table))
        )
        text = super().visit_column(
            column,
            add_to_result_map=add_to_result_map,
            include_table=include_table and not bare_table,
            result_map_targets=result_map_targets,
            ambiguous_table_name_map=ambiguous_table_name_map,
            **kwargs,
        )
        return f"{self.preparer.quote(table.name)}.{text}" if bare_table else text

    def limit_clause(self, select: Any, **kw: Any) -> str:
        text = ""
        if select._limit_clause is not None:
            text += "\n LIMIT " + self.process(select._limit_clause, **kw)
        if select._offset_clause is not None:
            text += "\n OFFSET " + self.process(select._offset_clause, **kw)
        return text


class AugerTypeCompiler(compiler.GenericTypeCompiler):
    """SQLAlchemy's generic types under the names Drill's CAST accepts."""

    def visit_datetime(self, type_: Any, **kw: Any) -> str:
        return "TIMESTAMP"

    def visit_DATETIME(self, type_: Any, **kw: Any) -> str:
        return "TIMESTAMP"

    def visit_text(self, type_: Any, **kw: Any) -> str:
        return "VARCHAR"

    def visit_TEXT(self, type_: Any, **kw: Any) -> str:
        return "VARCHAR"

    def visit_CLOB(self, type_: Any, **kw: Any) -> str:
        return "VARCHAR"

    def visit_large_binary(self, type_: Any, **kw: Any) -> str:
        return "VARBINARY"

    def visit_BLOB(self, type_: Any, **kw: Any) -> str:
        return "VARBINARY"

    def visit_NUMERIC(self, type_: Any, **kw: Any) -> str:
        return self.visit_DECIMAL(type_, **kw)

    def visit_REAL(self, type_: Any, **kw: Any) -> str:
        return "FLOAT"

    def visit_uuid(self, type_: Any, **kw: Any) -> str:
        return "VARCHAR"
