"""Running a planned scan: a :class:`~auger.scan.spec.ScanSpec` through the scan operator.

This is what every Spark task (and the driver, for a small ``LIMIT``) runs. The planner has
already resolved the scan: the spec's output schema is the scan's *defined* schema, so the
tracker is frozen to it before the first file, each column's source tag (table, missing,
implicit, partition, row count) becomes the tracker's marking of that column, and the operator's
:class:`~auger.scan.file_scan.FrozenScan` delivers every batch with exactly that schema as
Arrow, every field nullable (Spark accepts nulls everywhere; Parquet lists and maps may hold
nulls that a REQUIRED or REPEATED mode would forbid).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa

from auger.config import FormatConfig
from auger.formats.registry import get_format
from auger.scan.conflicts import ErrorContext
from auger.scan.implicit import ImplicitColumn, ImplicitColumns, source_marker
from auger.scan.lifecycle import quote_name
from auger.scan.missing import planned_fill
from auger.scan.operator import ScanOperator
from auger.scan.schema import ScanColumn
from auger.scan.spec import ColumnSource, FileSplit, ScanSpec
from auger.scan.tracker import ScanSchemaTracker
from auger.types import TupleSchema
from auger.types.arrow import field_to_arrow

__all__ = ["output_arrow_schema", "run_scan", "spec_tracker"]


def _nullable(f: pa.Field) -> pa.Field:
    t = f.type
    if pa.types.is_struct(t):
        t = pa.struct([_nullable(t.field(i)) for i in range(t.num_fields)])
    elif pa.types.is_large_list(t):
        t = pa.large_list(_nullable(t.value_field))
    elif pa.types.is_list(t):
        t = pa.list_(_nullable(t.value_field))
    elif pa.types.is_map(t):
        t = pa.map_(t.key_field.type, _nullable(t.item_field))
    return f.with_type(t).with_nullable(True)


def output_arrow_schema(spec: ScanSpec) -> pa.Schema:
    """The Arrow schema of every batch of the scan: the spec's columns, nullable at every
    level."""
    return pa.schema([_nullable(field_to_arrow(c)) for c in spec.schema()])


def spec_tracker(spec: ScanSpec) -> tuple[ScanSchemaTracker, ImplicitColumns, TupleSchema]:
    """The tracker, implicit columns and table (convert) schema for a planned scan.

    The spec's output schema is the scan's *defined* schema: the output columns in order, with
    implicit, partition and row-count columns marked from the spec's column sources.
    """
    defined = TupleSchema()
    table = TupleSchema()
    for col in spec.schema():
        source = spec.sources.get(col.name, ColumnSource.TABLE)
        if spec.format_type != "text":
            # a text table's NOT NULL columns come from its provided schema, whose promise
            # (the default, else the type's natural one) fills a file that lacks them
            col = planned_fill(col)
        defined.add(col)
        if source == ColumnSource.TABLE:
            table.add(col)

    # every error of the scan's readers names the format as Drill's file scans do
    config = FormatConfig(spec.format_name, spec.format_type, (), dict(spec.format_options))
    context = ErrorContext(
        *get_format(spec.format_type).error_context(config),
        *([f"Table: {spec.table}"] if spec.table else []),
    )
    tracker = ScanSchemaTracker.build(
        [quote_name(c.name) for c in defined], defined_schema=defined, error_context=context
    )
    internal = tracker.internal_schema()
    implicit: list[ImplicitColumn] = []
    for sc in internal.columns():
        marker = source_marker(spec.sources.get(sc.name, ColumnSource.TABLE))
        if marker is not None:
            internal.replace(sc, ScanColumn(sc.column, sc.projection, None, marker))
            implicit.append(ImplicitColumn(sc.column, marker))
    tracker.apply_implicit_cols()
    return tracker, ImplicitColumns(tuple(implicit)), table


def run_scan(
    spec: ScanSpec,
    files: Sequence[FileSplit] | None = None,
    batch_rows: int = 4096,
    arrow_schema: pa.Schema | None = None,
) -> Iterator[pa.RecordBatch]:
    """Batches with exactly the spec's output schema as Arrow (every field nullable), file
    after file (``files``: a task's share of the spec's files).

    ``arrow_schema`` is the Arrow form the batches must have when the consumer fixes one (the
    schema Spark validates a data source's batches against: its list element names, TIME and
    INTERVAL as text); the scan's one conversion step produces it, worked out once per reader
    schema. By default :func:`output_arrow_schema`.
    """

    tracker, implicit, table = spec_tracker(spec)
    config = FormatConfig(spec.format_name, spec.format_type, (), dict(spec.format_options))
    # Private keys readers may use: the table columns expected, and the projected paths
    # (``columns[2]``, ``m.a``) so that a reader can skip fields nobody asked for.
    planned = [c for c in spec.schema() if spec.sources.get(c.name) == ColumnSource.TABLE]
    reader_options = {
        "__table_schema__": spec.reader_schema or TupleSchema(planned).to_text(),
        "__projection__": list(spec.projection),
        "__missing__": spec.missing_names(),
    }
    batch_bytes = spec.options.get("auger.scan.batch_bytes")
    operator = ScanOperator(
        get_format(spec.format_type),
        list(files if files is not None else spec.files),
        selection_root=spec.selection_root,
        limit=spec.limit,
        batch_rows=batch_rows,
        options=spec.options,
        reader_options=reader_options,
        read_columns=None if "*" in spec.projection else [c.name.lower() for c in table],
        warn_dropped="*" in spec.projection,
        config=config,
        convert=table,
        tracker=tracker,
        implicit=implicit,
        frozen_schema=output_arrow_schema(spec) if arrow_schema is None else arrow_schema,
        vector_size_limit=None if batch_bytes is None else int(batch_bytes),
    )
    for out in operator:
        if out.num_rows:
            yield out
