"""What a statement answers: a lazy Spark DataFrame or a small local Arrow table.

DDL and metadata statements answer small local tables (``ok | summary``...); SELECTs answer a
DataFrame that is only run when rows are fetched, so clients can stream it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from auger.spark.errors import unwrap_spark_error
from auger.spark.jobs import to_arrow
from auger.sql.planning.diagnostics import Diagnostics
from auger.sql.recordings import PlannedTableScan
from auger.types import ColumnMetadata, TupleSchema
from auger.types.arrow import schema_from_arrow
from auger.types.spark import spark_to_column

__all__ = ["QueryResult", "ok_result"]


@dataclass
class QueryResult:
    """The answer to one statement.

    Attributes:
        table: the rows, when already materialised (DDL, metadata, system tables).
        dataframe: the Spark DataFrame of a SELECT, run on demand.
        warnings: things the user should know (columns dropped, schema conflicts resolved).
        statement: the statement kind (``SELECT``, ``USE``, ``CREATE TABLE``...).
        spark_schema: the Spark schema of a SELECT answered as a ``table`` on the driver
            (:mod:`auger.sql.planning.local_answer`), so its column types are the DataFrame's.
        frame_factory: builds the DataFrame of such a SELECT when one is asked for.
        diagnostics: what the statement's scans noticed (:mod:`auger.sql.planning.diagnostics`); its
            run-time part fills in as the rows are fetched.
        planned_scans: the tables the planner made DataFrames of, when the statement was asked
            to record them (:mod:`auger.sql.planning.explain`: what the query profile names).
    """

    table: pa.Table | None = None
    dataframe: Any = None
    warnings: list[str] = field(default_factory=list)
    statement: str = "SELECT"
    spark_schema: Any = None
    frame_factory: Callable[[], Any] | None = None
    diagnostics: Diagnostics | None = None
    planned_scans: list[PlannedTableScan] | None = None

    def messages(self) -> list[str]:
        """The warnings, with what the scans reported at run time so far (records skipped)."""
        out = list(self.warnings)
        if self.diagnostics is not None:
            out.extend(m for m in self.diagnostics.messages() if m not in out)
        return out

    def statistics(self) -> list[dict[str, Any]]:
        """Per file scan: files listed, pruned and read, rows read, records skipped."""
        return [] if self.diagnostics is None else self.diagnostics.statistics()

    @property
    def schema(self) -> TupleSchema:
        """Drill types of the result columns (for cursor descriptions and REST metadata)."""
        # a SELECT's types are its DataFrame's, before and after its rows are fetched
        if self.dataframe is not None:
            fields = self.dataframe.schema.fields
        elif self.spark_schema is not None:
            fields = self.spark_schema.fields
        elif self.table is not None:
            return schema_from_arrow(self.table.schema)

        return TupleSchema(_dedupe(spark_to_column(f.name, f.dataType, f.nullable) for f in fields))

    def frame(self) -> Any:
        """The result as a Spark DataFrame: the SELECT's own, or one built for it."""
        if self.dataframe is None and self.frame_factory is not None:
            self.dataframe = self.frame_factory()
        return self.dataframe

    @property
    def names(self) -> list[str]:
        if self.table is not None:
            return list(self.table.column_names)
        return list(self.dataframe.columns)

    def to_arrow(self) -> pa.Table:
        """All rows as one Arrow table (runs the query)."""
        if self.table is None:
            try:
                self.table = to_arrow(self.dataframe)
            except Exception as exc:
                raise unwrap_spark_error(exc) from exc
        return self.table

    def batches(self) -> Iterator[pa.RecordBatch]:
        yield from self.to_arrow().to_batches()


def _dedupe(cols: Any) -> list[ColumnMetadata]:
    out: list[ColumnMetadata] = []
    seen: set[str] = set()
    for c in cols:
        name, n = c.name, 0
        while name.lower() in seen:
            name = f"{c.name}{n}"
            n += 1
        seen.add(name.lower())
        out.append(c.renamed(name) if name != c.name else c)
    return out


def ok_result(ok: bool, summary: str, statement: str) -> QueryResult:
    """Drill's DDL answer: one row of ``ok`` (BOOLEAN) and ``summary`` (VARCHAR)."""
    table = pa.table(
        {"ok": pa.array([ok], pa.bool_()), "summary": pa.array([summary], pa.string())}
    )
    return QueryResult(table=table, statement=statement)
