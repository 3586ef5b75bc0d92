"""A scan over Arrow-native readers: each file's batches in, output batches out.

Format plugins that read whole Arrow batches (``FormatPlugin.read_arrow``) get the scan framework
through :class:`ArrowFileScan`, which for every batch of every file:

1. conforms columns the scan already typed (provided/defined schema, earlier file) to that type,
   casting where Arrow can (a DATA_READ error naming the file, the column and both types where it
   cannot);
2. keeps only projected columns (and projected map members) via the tracker's projection filter;
3. folds the batch's schema into the tracker, types the missing columns and fills them;
4. adds implicit and partition columns for the file and assembles the output in scan order.

Row readers' loader batches take the same steps (the reader lifecycle's converting scan). A
planned scan, whose output schema is fixed before the first file, runs every batch of either kind
of reader through :class:`FrozenScan` instead. Missing columns are filled by
:mod:`auger.scan.missing`, implicit columns by :mod:`auger.scan.implicit`, conflicts are built
by :mod:`auger.scan.conflicts`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any, NamedTuple, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from auger.scan.conflicts import ErrorContext, conversion_conflict, null_in_not_null
from auger.scan.filter import PROJECT_ALL, ProjectionFilter, same_type
from auger.scan.implicit import FileDescrip, ImplicitColumns, ImplicitKind, constant_array
from auger.scan.missing import MissingColumn, missing_arrays, resolve_missing_types
from auger.scan.output import assemble
from auger.scan.tracker import ScanSchemaTracker
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.arrow import arrow_to_column, column_to_arrow, field_to_arrow
from auger.types.arrow_values import text_scalar

__all__ = ["ArrowFileScan", "FrozenScan", "conformer", "convert_column", "project_arrays"]

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
        convert: the columns whose reader values are converted to the type given there (an
            empty schema: none); by default every type the scan has settled on.
    """

    def __init__(
        self,
        tracker: ScanSchemaTracker,
        implicit: ImplicitColumns | None = None,
        *,
        null_type: ColumnMetadata | MinorType | str | None = None,
        error_context: ErrorContext | None = None,
        convert: TupleSchema | None = None,
    ) -> None:
        self.tracker = tracker
        self.implicit = implicit or ImplicitColumns()
        self.null_type = null_type
        self.context = error_context or tracker.error_context()
        self.convert = convert

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
        """Cast scalar columns the scan already typed (or ``convert`` names) to that type."""
        scan: TupleSchema = (
            self.convert if self.convert is not None else self.tracker.output_schema()
        )
        if scan.is_empty():
            return batch
        arrays: list[pa.Array] = []
        fields: list[pa.Field] = []
        for i, field in enumerate(batch.schema):
            arr, field = self._conform_field(batch.column(i), field, scan, ctx)
            arrays.append(arr)
            fields.append(field)
        return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))

    def _conform_field(
        self, arr: pa.Array, field: pa.Field, scan: TupleSchema, ctx: ErrorContext
    ) -> tuple[pa.Array, pa.Field]:
        """One reader column (or map member) conformed to the type ``scan`` gives it.

        A map is conformed member by member: members ``scan`` types are cast (and take its
        mode), members it lacks stay for the tracker to take or drop, and members the file
        lacks are left to the missing-column fill, so files whose maps differ meet one map.
        """
        target = scan.column(field.name)
        if target is None or target.is_dynamic:
            return arr, field
        col = arrow_to_column(field.name, field.type, field.nullable)
        nullable = target.mode is not DataMode.REQUIRED
        same_nulls = target.is_array or field.nullable is nullable
        if target.is_map and same_nulls and field.type.equals(column_to_arrow(target)):
            return arr, field  # the file's map is the scan's
        if target.is_map and target.is_array:
            if not (pa.types.is_list(arr.type) and pa.types.is_struct(arr.type.value_type)):
                return arr, field  # not an array of maps here: the tracker names the conflict
            element = arr.type.value_field
            offsets = arr.offsets
            first, last = offsets[0].as_py(), offsets[-1].as_py()
            if first:
                offsets = pc.subtract(offsets, first)
            values, value_field = self._conform_field(
                arr.values.slice(first, last - first),
                element.with_name(field.name),
                TupleSchema([target.with_mode(DataMode.OPTIONAL)]),
                ctx,
            )
            mask = arr.is_null() if arr.null_count else None
            list_type = pa.list_(value_field.with_name(element.name))
            arr = pa.ListArray.from_arrays(offsets, values, type=list_type, mask=mask)
            return arr, pa.field(field.name, arr.type, field.nullable)
        if target.is_map:
            if not pa.types.is_struct(arr.type) or col.is_array:
                return arr, field  # not a map here: the tracker names the conflict
            struct = arr if isinstance(arr, pa.StructArray) else arr.combine_chunks()
            if not nullable and struct.null_count:
                raise null_in_not_null(col, ctx)
            members = target.schema
            kids: list[pa.Array] = []
            kid_fields: list[pa.Field] = []
            for j in range(struct.type.num_fields):
                kid, kid_field = self._conform_field(
                    struct.field(j), struct.type.field(j), members, ctx
                )
                kids.append(kid)
                kid_fields.append(kid_field)
            if kid_fields:
                mask = struct.is_null() if struct.null_count else None
                arr = pa.StructArray.from_arrays(kids, fields=kid_fields, mask=mask)
            return arr, pa.field(field.name, arr.type, nullable)
        if not target.is_map and not same_type(target, col):
            arr = self._cast(arr, col, target, ctx)
            field = pa.field(field.name, arr.type, nullable)
        return arr, field

    @staticmethod
    def _cast(
        arr: pa.Array, col: ColumnMetadata, target: ColumnMetadata, ctx: ErrorContext
    ) -> pa.Array:
        convert = conformer(arr.type, column_to_arrow(target))
        out = arr if convert is None else convert_column(convert, arr, target, ctx)
        if target.mode is DataMode.REQUIRED and out.null_count:
            raise null_in_not_null(col, ctx)
        return out


# ------------------------------------------------------------------------ frozen (planned) scans

#: Turns one reader array into the output array of one column.
Converter: TypeAlias = Callable[[pa.Array], pa.Array]


def conformer(src: pa.DataType, dst: pa.DataType) -> Converter | None:
    """How to turn arrays of ``src`` into ``dst`` (``None``: they already are).

    Worked out once per reader schema, so a batch pays only for the Arrow kernels. Maps (structs)
    are matched by member name, case-insensitively: members the reader narrowed away or a file
    lacks become nulls, members the scan does not want are dropped. Lists conform their elements
    (element nullability alone is a cast); anything else is an Arrow cast, safe (an overflow or
    unparsable value raises).
    """
    if src.equals(dst):
        return None
    if pa.types.is_interval(src) and pa.types.is_string(dst):
        return _interval_text
    if pa.types.is_struct(dst) and pa.types.is_struct(src):
        return _struct_conformer(src, dst)
    for is_list, make in (
        (pa.types.is_list, pa.ListArray),
        (pa.types.is_large_list, pa.LargeListArray),
    ):
        if is_list(dst) and is_list(src):
            inner = conformer(src.value_type, dst.value_type)
            if inner is None:  # element nullability or name only
                return partial(_cast, dst)
            return partial(_list_conform, make, dst, inner)
    return partial(_cast, dst)


def convert_column(
    convert: Converter, arr: pa.Array, target: ColumnMetadata, ctx: ErrorContext
) -> pa.Array:
    """``convert(arr)``; a value Arrow cannot convert is a DATA_READ error naming the file (from
    ``ctx``), the column, the file's type and the type the scan settled on."""
    try:
        return convert(arr)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise conversion_conflict(target, arr.type, str(exc).splitlines()[0], ctx) from exc


def _cast(dst: pa.DataType, arr: pa.Array) -> pa.Array:
    return arr.cast(dst, safe=True)


def _interval_text(arr: pa.Array) -> pa.Array:
    """Intervals as ISO 8601 durations (``P1Y2M3DT4.5S``), for a consumer without an interval
    type (Spark's Arrow schema for Drill's INTERVAL); Arrow has no cast for it."""

    def text(v: Any) -> str | None:
        if v is None:
            return None
        months, days, nanos = v.months, v.days, v.nanoseconds
        return f"P{months // 12}Y{months % 12}M{days}DT{nanos / 1e9:g}S"

    return pa.array([text(v) for v in arr.to_pylist()], pa.string())


def _list_conform(
    make: type[pa.ListArray] | type[pa.LargeListArray],
    dst: pa.DataType,
    inner: Converter,
    arr: pa.Array,
) -> pa.Array:
    offsets = arr.offsets
    first, last = offsets[0].as_py(), offsets[-1].as_py()
    values = inner(arr.values.slice(first, last - first))
    if first:
        offsets = pc.subtract(offsets, first)
    mask = arr.is_null() if arr.null_count else None
    return make.from_arrays(offsets, values, type=dst, mask=mask)


def _struct_conformer(src: pa.DataType, dst: pa.DataType) -> Converter:
    by_name: dict[str, int] = {}
    for i in range(src.num_fields):
        by_name.setdefault(src.field(i).name.lower(), i)
    members: list[tuple[int, Converter | None, pa.DataType]] = []
    for j in range(dst.num_fields):
        f = dst.field(j)
        i = by_name.get(f.name.lower(), -1)
        members.append((i, conformer(src.field(i).type, f.type) if i >= 0 else None, f.type))
    fields = [dst.field(j) for j in range(dst.num_fields)]

    def convert(arr: pa.Array) -> pa.Array:
        n = len(arr)
        kids = []
        for i, conv, t in members:
            if i < 0:
                kids.append(pa.nulls(n, t))
                continue
            kid = arr.field(i)  # sliced as the struct is
            kids.append(kid if conv is None else conv(kid))
        mask = arr.is_null() if arr.null_count else None
        if not fields:
            return pa.array([{}] * n, pa.struct([]))
        return pa.StructArray.from_arrays(kids, fields=fields, mask=mask)

    return convert


class _Part(NamedTuple):
    """Where one output column of a frozen scan comes from, for one reader schema."""

    kind: str  # "reader", "missing", "implicit" or "rows"
    source: int = -1  # the reader column ("reader") or implicit column ("implicit")
    convert: Converter | None = None


class _Plan(NamedTuple):
    """How one reader schema becomes the output: each output column's part, the reader columns
    in output order, whether those are the reader's columns exactly (in its order), and the
    output columns that are not a reader column as it is (converted, implicit, missing)."""

    parts: list[_Part]
    reader: list[int]
    whole: bool
    touched: list[tuple[int, _Part]]


class FrozenScan:
    """Output batches of a scan whose output schema the planner fixed (a defined schema).

    The tracker is frozen: every column's type is known before the first file, so nothing is
    resolved while reading. For each distinct reader schema (in practice one per file, usually
    one per scan) a plan says where each output column comes from: a reader column (with the
    conversion to the planned type), a missing column (a column the file lacks, filled by the
    one rule of :mod:`auger.scan.missing`: typed nulls, or a NOT NULL column's default), an
    implicit column of the file, or the row count. A batch then costs only the Arrow kernels of
    its conversions (and slices of values built once).

    Args:
        tracker: the frozen tracker (``ScanSchemaTracker.build`` with a defined schema).
        implicit: the implicit columns (a ``ROWS`` marker makes one output row per batch,
            standing for the batch's rows).
        arrow_schema: the output schema as Arrow (what Spark was told).
        text_types: the reader delivers text, and a column the plan types (by a provided
            schema) is converted by Drill's text rules (:func:`auger.scan.provided.text_converter`:
            trimmed, blanks and defaults, date patterns, illegal values named).
    """

    def __init__(
        self,
        tracker: ScanSchemaTracker,
        implicit: ImplicitColumns,
        arrow_schema: pa.Schema,
        *,
        text_types: bool = False,
    ) -> None:
        self.schema = arrow_schema
        self._text_types = text_types
        self._fields = list(arrow_schema)
        self.columns = list(tracker.output_schema())
        if len(self.columns) != len(arrow_schema):
            raise ValueError("the Arrow schema does not match the scan's output schema")
        self._implicit = {c.name.lower(): i for i, c in enumerate(implicit.columns)}
        self._markers = [c.marker for c in implicit.columns]
        self._counts = any(m.kind is ImplicitKind.ROWS for m in self._markers)
        #: each output row stands for its input batch's rows (a ``ROWS`` column)
        self.counts_rows = self._counts
        self._plans: dict[pa.Schema, _Plan] = {}
        self._last: tuple[pa.Schema, _Plan] | None = None
        self._file: FileDescrip | None = None
        self._values: list[pa.Scalar] = []
        self._missing = [MissingColumn(c, f.type) for c, f in zip(self.columns, arrow_schema)]

    def _plan(self, schema: pa.Schema) -> _Plan:
        last = self._last
        if last is not None and (last[0] is schema or last[0].equals(schema)):
            return last[1]
        plan = self._plans.get(schema)
        if plan is None:
            plan = self._plans[schema] = self._make_plan(schema)
        self._last = (schema, plan)
        return plan

    def _make_plan(self, schema: pa.Schema) -> _Plan:
        by_name: dict[str, int] = {}
        for i, name in enumerate(schema.names):
            by_name.setdefault(name.lower(), i)
        parts = []
        for col, target in zip(self.columns, self.schema, strict=True):
            name = col.name.lower()
            if name in self._implicit:
                k = self._implicit[name]
                kind = "rows" if self._markers[k].kind is ImplicitKind.ROWS else "implicit"
                parts.append(_Part(kind, k))
            elif name in by_name:
                i = by_name[name]
                src = schema.field(i).type
                convert = (
                    self._text_converter(col, target.type)
                    if self._text_types
                    and (pa.types.is_string(src) or pa.types.is_large_string(src))
                    else None
                )
                parts.append(_Part("reader", i, convert or conformer(src, target.type)))
            else:
                parts.append(_Part("missing"))
        reader = [p.source for p in parts if p.kind == "reader"]
        whole = reader == list(range(len(schema))) and len(schema) > 0
        touched = [(j, p) for j, p in enumerate(parts) if p.kind != "reader" or p.convert]
        return _Plan(parts, reader, whole, touched)

    @staticmethod
    def _text_converter(col: ColumnMetadata, dst: pa.DataType) -> Converter | None:
        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        from auger.scan.provided import text_converter

        convert = text_converter(col, dst)
        return None if convert is None else _WithContext(convert)

    def _file_values(self, file: FileDescrip) -> list[pa.Scalar]:
        if self._file is not file:
            self._file = file
            self._values = [text_scalar(file.value(m), pa.string()) for m in self._markers]
        return self._values

    def scan_batch(
        self, file: FileDescrip, batch: pa.RecordBatch, ctx: ErrorContext
    ) -> pa.RecordBatch:
        plan = self._plan(batch.schema)
        rows = batch.num_rows
        if self._counts:
            return self._assemble(plan.parts, file, batch, min(rows, 1), ctx)
        # The reader's columns stay one batch (taken whole or selected in output order, no
        # Python object per column); only converted, implicit and missing columns are touched.
        out = batch if plan.whole else batch.select(plan.reader)
        values = self._file_values(file) if self._markers else []
        for j, part in plan.touched:
            field = self._fields[j]
            if part.kind == "reader":
                arr = self._convert(part.convert, out.column(j), j, ctx)  # type: ignore[arg-type]
                out = out.set_column(j, field, arr)
            elif part.kind == "missing":
                out = out.add_column(j, field, self._missing[j].array(rows))
            else:  # "implicit"
                arr = constant_array(values[part.source], rows, field.type)
                out = out.add_column(j, field, arr)
        schema = out.schema
        if not schema.equals(self.schema):  # field names' case, nullability
            out = pa.RecordBatch.from_arrays(out.columns, schema=self.schema)
        elif schema.metadata:  # a reader's notes (records skipped) stay with the reader
            out = out.replace_schema_metadata(None)
        return out

    def _assemble(
        self,
        parts: list[_Part],
        file: FileDescrip,
        batch: pa.RecordBatch,
        n: int,
        ctx: ErrorContext,
    ) -> pa.RecordBatch:
        """Output built column by column (a counting scan: ``n`` rows standing for the batch's)."""
        rows = batch.num_rows
        values = self._file_values(file) if self._markers else []
        arrays: list[pa.Array] = []
        for j, part in enumerate(parts):
            t = self.schema[j].type
            if part.kind == "reader":
                arr = batch.column(part.source)
                if n != rows:
                    arr = arr.slice(0, n)
                if part.convert is not None:
                    arr = self._convert(part.convert, arr, j, ctx)
            elif part.kind == "missing":
                arr = self._missing[j].array(n)
            elif part.kind == "implicit":
                arr = constant_array(values[part.source], n, t)
            else:  # "rows"
                arr = pa.array([rows] * n, t)
            arrays.append(arr)
        if not arrays:
            return batch if batch.num_columns == 0 else batch.select([])
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _convert(self, convert: Converter, arr: pa.Array, j: int, ctx: ErrorContext) -> pa.Array:
        if isinstance(convert, _WithContext):
            return convert.convert(arr, ctx)
        return convert_column(convert, arr, self.columns[j], ctx)


class _WithContext:
    """A conversion whose errors name the value and the file itself (text under a provided
    schema), rather than being a type conflict between the file and the plan."""

    __slots__ = ("convert",)

    def __init__(self, convert: Callable[[pa.Array, ErrorContext], pa.Array]) -> None:
        self.convert = convert

    def __call__(self, arr: pa.Array) -> pa.Array:
        return self.convert(arr, ErrorContext())
