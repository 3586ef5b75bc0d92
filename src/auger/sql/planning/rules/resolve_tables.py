"""Rule: resolve each table; discover file tables, make the others DataFrames."""

from __future__ import annotations

from typing import Any

from auger.sql.catalog.information_schema import info_schema_table
from auger.sql.catalog.resolution import FileTable, SystemTable, TableRef, ViewTable
from auger.sql.catalog.sys_tables import sys_table
from auger.sql.planning import explain
from auger.sql.planning.select_plan import SelectPlan
from auger.sql.planning.tables import (
    discover_file_table,
    known_names,
    lakehouse_metadata_table,
    resolve_table_node,
)

__all__ = ["resolve_tables"]


def resolve_tables(plan: SelectPlan) -> None:
    """Each table through the catalog: a file table's files listed and its schema discovered;
    a view, system or temporary table as its DataFrame. Records every table's column names."""
    for n, node in enumerate(plan.tables):
        ref = resolve_table_node(node, plan.statement.catalog, plan.context)
        metadata = lakehouse_metadata_table(ref) if isinstance(ref, FileTable) else None
        if metadata is not None:
            plan.frames[n] = _local_frame(plan.spark, metadata)
            plan.schemas[plan.names[n]] = {
                f.name.lower(): f.dataType.simpleString() for f in plan.frames[n].schema.fields
            }
        elif isinstance(ref, FileTable):
            plan.discovered[n] = discover_file_table(ref, plan.options, plan.statement.diagnostics)
            plan.schemas[plan.names[n]] = known_names(plan.discovered[n], plan.options)
        else:
            plan.frames[n] = _table_frame(ref, plan)
            if not isinstance(ref, ViewTable):  # a view's own scans are noted as it is planned
                scans = plan.statement.recordings.scans
                explain.table_framed(scans, f"{ref.schema}.{ref.name}", plan.frames[n])
            plan.schemas[plan.names[n]] = {
                f.name.lower(): f.dataType.simpleString() for f in plan.frames[n].schema.fields
            }


def _table_frame(ref: TableRef, plan: SelectPlan) -> Any:
    """The DataFrame of a table that is not a file scan: a view, a system or temporary table."""
    if isinstance(ref, ViewTable):
        return plan.view_frame(ref)
    if isinstance(ref, SystemTable):
        if ref.schema == "sys":
            return _local_frame(plan.spark, sys_table(ref.name, plan.statement))
        return _local_frame(plan.spark, info_schema_table(ref.name, plan.statement))
    # every kind of table the catalog resolves is one of the above or a file table
    raise TypeError(f"no DataFrame for a {type(ref).__name__}")


def _local_frame(spark: Any, table: Any) -> Any:
    """A DataFrame of a small Arrow table; its timestamps stay zone-less, as Drill's are."""
    # start-up cost: pyspark loads when Spark first works, not when the planner is imported
    # deferred: loads pyspark (heavy)
    from pyspark.sql import functions as F

    # deferred: loads pyspark (heavy)
    from pyspark.sql.types import TimestampType

    df = spark.createDataFrame(table)
    for f in df.schema.fields:
        if isinstance(f.dataType, TimestampType):
            df = df.withColumn(f.name, F.col(f"`{f.name}`").cast("timestamp_ntz"))
    return df
