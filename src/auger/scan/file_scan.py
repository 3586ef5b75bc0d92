"""A scan over Arrow-native readers: each file's batches in, output batches out.

Format plugins that read whole Arrow batches (``FormatPlugin.read_arrow``) get the scan framework
through :class:`ArrowFileScan`, which for every batch of every file:

1. conforms columns the scan already typed (provided/defined schema, earlier file) to that type,
   casting where Arrow can (a DATA_READ error naming the file, the column and both types where it
   cannot);
2. keeps only projected columns (and projected map members) via the tracker's projection filter;
3. folds the batch's schema into the tracker, types the missing columns and fills them;
4. adds implicit and partition columns for the file and assembles the output in scan order.

The readers with a ``SchemaNegotiator`` (DESIGN §3.4) will share steps 3–4.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator

import pyarrow as pa

from auger.errors import UserError
from auger.scan.conflicts import ErrorContext
from auger.scan.filter import PROJECT_ALL, ProjectionFilter, same_type
from auger.scan.implicit import FileDescrip, ImplicitColumns
from auger.scan.missing import missing_arrays, resolve_missing_types
from auger.scan.output import assemble
from auger.scan.tracker import ScanSchemaTracker
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.arrow import arrow_to_column, column_to_arrow, field_to_arrow

__all__ = ["ArrowFileScan", "project_arrays"]

log = logging.getLogger(__name__)


def _prune_struct(
    col: ColumnMetadata, arr: pa.Array, mf: ProjectionFilter
) -> tuple[ColumnMetadata, pa.Array]:
    """Keep only the members of a (non-repeated) map column its member filter projects."""
    if mf is PROJECT_ALL or col.is_array or not pa.types.is_struct(arr.type):
        return col, arr
    kids: list[ColumnMetadata] = []
    arrays: list[pa.Array] = []
    struct = arr if isinstance(arr, pa.StructArray) else arr.combine_chunks()
    for i, kid in enumerate(col.children or ()):
        r = mf.projection(kid)
        if not r.is_projected:
            continue
        child = struct.field(i)
        if kid.is_map and r.map_filter is not None:
            kid, child = _prune_struct(kid, child, r.map_filter)
        kids.append(kid)
        arrays.append(child)
    pruned = col.with_children(kids)
    if not kids:
        return pruned, pa.array([{}] * len(arr), pa.struct([]))
    mask = struct.is_null() if struct.null_count else None
    fields = [field_to_arrow(k) for k in kids]
    return pruned, pa.StructArray.from_arrays(arrays, fields=fields, mask=mask)


def project_arrays(
    batch: pa.RecordBatch, projection_filter: ProjectionFilter
) -> tuple[list[ColumnMetadata], list[pa.Array]]:
    """The projected columns of a reader batch (maps pruned to projected members)."""
    cols: list[ColumnMetadata] = []
    arrays: list[pa.Array] = []
    for i, field in enumerate(batch.schema):
        col = arrow_to_column(field.name, field.type, field.nullable)
        r = projection_filter.projection(col)
        if not r.is_projected:
            continue
        arr = batch.column(i)
        if col.is_map and r.map_filter is not None:
            col, arr = _prune_struct(col, arr, r.map_filter)
        cols.append(col)
        arrays.append(arr)
    return cols, arrays


class ArrowFileScan:
    """Runs the files of one scan through the tracker, yielding output batches.

    Args:
        tracker: the scan's tracker (implicit columns already resolved).
        implicit: the resolved implicit columns (``resolve_implicit_columns``).
        null_type: the reader's type for columns nobody typed (VARCHAR for text).
        error_context: scan-level context lines (the table...).
    """

    def __init__(
        self,
        tracker: ScanSchemaTracker,
        implicit: ImplicitColumns | None = None,
        *,
        null_type: ColumnMetadata | MinorType | str | None = None,
        error_context: ErrorContext | None = None,
    ) -> None:
        self.tracker = tracker
        self.implicit = implicit or ImplicitColumns()
        self.null_type = null_type
        self.context = error_context or tracker.error_context()

    def scan_file(
        self, file: FileDescrip, batches: Iterable[pa.RecordBatch]
    ) -> Iterator[pa.RecordBatch]:
        """Output batches for one file (none if the reader yields none)."""
        ctx = ErrorContext(f"File: {file.fqn}", parent=self.context)
        for batch in batches:
            yield self.scan_batch(file, batch, ctx)

    def scan_batch(
        self, file: FileDescrip, batch: pa.RecordBatch, ctx: ErrorContext | None = None
    ) -> pa.RecordBatch:
        ctx = ctx or ErrorContext(f"File: {file.fqn}", parent=self.context)
        conformed = self._conform(batch, ctx)
        cols, arrays = project_arrays(conformed, self.tracker.projection_filter(ctx))
        tracker = self.tracker
        tracker.apply_reader_schema(cols, ctx)
        missing = resolve_missing_types(
            tracker.missing_columns(cols), null_type=self.null_type, projection=tracker.projection()
        )
        if not missing.is_empty():
            tracker.resolve_missing_cols(missing)
        n = batch.num_rows
        reader_part = {c.name: a for c, a in zip(cols, arrays, strict=True)}
        implicit_part = dict(
            zip(self.implicit.schema.names(), self.implicit.arrays(file, n), strict=True)
        )
        missing_part = dict(zip(missing.names(), missing_arrays(missing, n), strict=True))
        return assemble(tracker.output_schema(), [reader_part, implicit_part, missing_part], n)

    def _conform(self, batch: pa.RecordBatch, ctx: ErrorContext) -> pa.RecordBatch:
        """Cast scalar columns the scan already typed to that type."""
        scan: TupleSchema = self.tracker.output_schema()
        arrays: list[pa.Array] = []
        fields: list[pa.Field] = []
        for i, field in enumerate(batch.schema):
            arr = batch.column(i)
            target = scan.column(field.name)
            col = arrow_to_column(field.name, field.type, field.nullable)
            if (
                target is not None
                and not target.is_dynamic
                and not target.is_map
                and not same_type(target, col)
            ):
                arr = self._cast(arr, col, target, ctx)
                field = pa.field(field.name, arr.type, target.mode is not DataMode.REQUIRED)
            arrays.append(arr)
            fields.append(field)
        return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))

    @staticmethod
    def _cast(
        arr: pa.Array, col: ColumnMetadata, target: ColumnMetadata, ctx: ErrorContext
    ) -> pa.Array:
        want = column_to_arrow(target)
        try:
            out = arr if arr.type == want else arr.cast(want, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            err = UserError.data_read(
                f"Scan and file column type conflict for column [{col.name}]: the file has "
                f"{col.type_string()}, the scan expects {target.type_string()}",
                [f"Column: {col.name}", f"Reason: {str(exc).splitlines()[0]}"],
            )
            raise ctx.add_context(err) from exc
        if target.mode is DataMode.REQUIRED and out.null_count:
            err = UserError.data_read(
                f"Column [{col.name}] is declared NOT NULL but the file has null values",
                [f"Column: {col.name}"],
            )
            raise ctx.add_context(err)
        return out
