"""Missing columns: columns the query names that a file does not have.

The scan must still deliver them, typed and filled:

* **type** — whatever the scan already knows (provided or defined schema, or an earlier reader of
  the same scan: the tracker carries all three in :meth:`ScanSchemaTracker.missing_columns`); for
  a column still dynamic (LATE), the type an earlier reader gave it if the caller has one, else
  the reader's hint (a text reader says VARCHAR), else Drill's classic nullable INT. A projection
  shapes the guess: ``m.x`` makes ``m`` a map holding a null ``x``; ``c[1]`` makes ``c`` an array.
* **values** — a nullable column is all NULL; a NOT NULL column holds its ``drill.default`` value,
  or the type's zero (0, ``""``, false, the epoch) when it has none; an array is empty; a map is
  its members, recursively.

Missing map members (``m.y`` when the file has ``m{x}``) come out as a map holding only the missing
members; :func:`auger.scan.output.assemble` splices them into the reader's map.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa

from auger.errors import UserError
from auger.projection import RequestedColumn, RequestedTuple
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.arrow import column_to_arrow, field_to_arrow
from auger.types.java_format import strptime_pattern

__all__ = [
    "DEFAULT_NULL_TYPE",
    "MissingColumn",
    "default_value",
    "guess_type",
    "missing_arrays",
    "missing_batch",
    "missing_column_array",
    "missing_value",
    "planned_fill",
    "resolve_missing_types",
]

#: Drill's type for a column nobody could type: nullable INT.
DEFAULT_NULL_TYPE = ColumnMetadata("null", MinorType.INT, DataMode.OPTIONAL)


def _null_column(name: str, null_type: ColumnMetadata, props: Any) -> ColumnMetadata:
    """A column of the null type: nullable, unless the null type is NOT NULL with a default
    (a reader that fills blanks, as text readers do), which the column then holds."""
    mode = null_type.mode
    if mode is DataMode.REQUIRED and null_type.default_value is None:
        mode = DataMode.OPTIONAL
    props = {**null_type.properties, **props} if mode is DataMode.REQUIRED else props
    return ColumnMetadata(
        name, null_type.type, mode, null_type.children, null_type.precision, null_type.scale, props
    )


def _guess(
    col: ColumnMetadata,
    proj: RequestedColumn | None,
    null_type: ColumnMetadata,
    earlier: TupleSchema | None,
) -> ColumnMetadata:
    """A type for a dynamic column: earlier reader, then projection shape, then the null type."""
    seen = earlier.column(col.name) if earlier is not None else None
    if seen is not None and not seen.is_dynamic:
        return seen if seen.mode is not DataMode.REQUIRED else seen.with_mode(DataMode.OPTIONAL)
    if proj is not None and proj.is_map:
        members = proj.members
        # A reader that fills blanks (text) fills the columns it has; a member of a map it
        # cannot have resolves to nothing: Drill's NULL.
        filled = null_type.mode is DataMode.REQUIRED and null_type.default_value is not None
        kid_type = DEFAULT_NULL_TYPE if filled else null_type
        kids = [
            _guess(ColumnMetadata(m.name, MinorType.LATE), m, kid_type, None)
            for m in (members or ())
        ]
        mode = DataMode.REPEATED if proj.is_array else DataMode.REQUIRED
        guess = ColumnMetadata(col.name, MinorType.MAP, mode, kids, properties=col.properties)
    elif proj is not None and proj.is_array:
        elem = _null_column(col.name, null_type, col.properties)
        guess = elem.with_mode(DataMode.REPEATED)
    else:
        return _null_column(col.name, null_type, col.properties)
    # ``c[0][1]``: an array of arrays
    for _ in range(proj.array_dims - 1):
        guess = ColumnMetadata(col.name, MinorType.LIST, DataMode.REPEATED, (guess,))
    return guess


def guess_type(
    name: str, proj: RequestedColumn | None, null_type: ColumnMetadata | None = None
) -> ColumnMetadata:
    """The type a column of no known type gets from how it is projected: a map of its
    members (``m.x``), an array (``c[1]``; of maps for ``c[1].x``), else the null type
    (default Drill's nullable INT). One rule with :func:`resolve_missing_types`."""
    return _guess(ColumnMetadata(name, MinorType.LATE), proj, null_type or DEFAULT_NULL_TYPE, None)


def resolve_missing_types(
    missing: Iterable[ColumnMetadata],
    *,
    null_type: ColumnMetadata | MinorType | str | None = None,
    projection: RequestedTuple | None = None,
    earlier: TupleSchema | None = None,
    allow_required: bool = True,
) -> TupleSchema:
    """Give every missing column a concrete type.

    Args:
        missing: the tracker's ``missing_columns(...)`` (types known where the scan knows them).
        null_type: the reader's hint for columns nobody typed; default nullable INT. A bare
            type means its nullable form; a NOT NULL type with a ``drill.default`` stays NOT
            NULL, filled with that default (a planned text scan: ``VARCHAR NOT NULL``, blank).
        projection: the scan's requested tuple (``tracker.projection()``), so ``m.x`` and
            ``c[1]`` shape their null columns.
        earlier: a schema an earlier reader of the same scan produced, consulted first.
        allow_required: if false, NOT NULL missing columns become nullable (Drill's older rule).

    Returns:
        The columns to hand to ``tracker.resolve_missing_cols`` and to :func:`missing_batch`.
    """
    if null_type is None:
        nt = DEFAULT_NULL_TYPE
    elif isinstance(null_type, ColumnMetadata):
        nt = null_type
    else:
        nt = ColumnMetadata("null", MinorType(null_type), DataMode.OPTIONAL)
    return TupleSchema(_resolve_all(missing, nt, projection, earlier, allow_required))


def _resolve_all(
    cols: Iterable[ColumnMetadata],
    nt: ColumnMetadata,
    projection: RequestedTuple | None,
    earlier: TupleSchema | None,
    allow_required: bool,
) -> list[ColumnMetadata]:
    out = []
    for col in cols:
        proj = projection.get(col.name) if projection is not None else None
        if col.is_dynamic:
            out.append(_guess(col, proj, nt, earlier))
        elif col.is_map:
            seen = earlier.column(col.name) if earlier is not None else None
            kids = _resolve_all(
                col.children or (),
                nt,
                proj.members if proj is not None else None,
                seen.schema if seen is not None and seen.is_map else None,
                allow_required,
            )
            out.append(col.with_children(kids))
        elif not allow_required and col.mode is DataMode.REQUIRED:
            out.append(col.with_mode(DataMode.OPTIONAL))
        else:
            out.append(col)
    return out


# ------------------------------------------------------------------------------- values

_ZERO: dict[MinorType, Any] = {
    MinorType.TINYINT: 0,
    MinorType.SMALLINT: 0,
    MinorType.INT: 0,
    MinorType.BIGINT: 0,
    MinorType.FLOAT4: 0.0,
    MinorType.FLOAT8: 0.0,
    MinorType.VARDECIMAL: decimal.Decimal(0),
    MinorType.BIT: False,
    MinorType.VARCHAR: "",
    MinorType.VARBINARY: b"",
    MinorType.DATE: dt.date(1970, 1, 1),
    MinorType.TIME: dt.time(0, 0),
    MinorType.TIMESTAMP: dt.datetime(1970, 1, 1),
}


def _parse_temporal(col: ColumnMetadata, text: str) -> Any:
    fmt = col.format
    if fmt:
        parsed = dt.datetime.strptime(text, strptime_pattern(fmt))
    elif col.type is MinorType.TIME:
        return dt.time.fromisoformat(text)
    else:
        parsed = dt.datetime.fromisoformat(text.replace(" ", "T", 1) if " " in text else text)
    if col.type is MinorType.DATE:
        return parsed.date()
    if col.type is MinorType.TIME:
        return parsed.time()
    return parsed


def default_value(col: ColumnMetadata) -> Any:
    """The value a NOT NULL missing column holds: its ``drill.default``, else the type's zero.

    Raises:
        UserError: (VALIDATION) the default cannot be read as the column's type.
    """
    text = col.default_value
    if text is None:
        return _ZERO.get(col.type)
    try:
        t = col.type
        if t in (MinorType.TINYINT, MinorType.SMALLINT, MinorType.INT, MinorType.BIGINT):
            return int(text.strip())
        if t in (MinorType.FLOAT4, MinorType.FLOAT8):
            return float(text.strip())
        if t is MinorType.VARDECIMAL:
            return decimal.Decimal(text.strip())
        if t is MinorType.BIT:
            lowered = text.strip().lower()
            if lowered not in ("true", "false", "1", "0", "t", "f", "yes", "no", "y", "n"):
                raise ValueError(text)
            return lowered in ("true", "1", "t", "yes", "y")
        if t is MinorType.VARCHAR:
            return text
        if t is MinorType.VARBINARY:
            return text.encode()
        if t in (MinorType.DATE, MinorType.TIME, MinorType.TIMESTAMP):
            return _parse_temporal(col, text)
    except (ValueError, decimal.InvalidOperation) as e:
        raise UserError.validation(
            f"Invalid default value [{text}] for column `{col.name}` of type {col.type_string()}",
            [f"Column: {col.name}"],
        ) from e
    raise UserError.unsupported(f"Default values are not supported for type {col.type.value}")


def planned_fill(col: ColumnMetadata) -> ColumnMetadata:
    """A planned scan's column as filled where a file lacks it.

    The planner's types come from a sample of the files, so a NOT NULL column becomes nullable
    (a file without it gives NULLs) unless it has a default: a provided schema's promise, which
    fills it.
    """
    if col.mode is DataMode.REQUIRED and col.default_value is None:
        return col.with_mode(DataMode.OPTIONAL)
    return col


def missing_value(col: ColumnMetadata) -> Any:
    """The one value every row of a missing column holds (``None``, a default, ``[]``...)."""
    return missing_column_array(col, 1)[0].as_py()


def missing_column_array(col: ColumnMetadata, row_count: int) -> pa.Array:
    """An Arrow array of ``row_count`` values for one missing column."""
    if col.is_dynamic:
        col = _null_column(col.name, DEFAULT_NULL_TYPE, col.properties)
    arrow_type = column_to_arrow(col)
    if col.mode is DataMode.REPEATED or col.type is MinorType.LIST:
        return pa.array([[]] * row_count, arrow_type)
    if col.is_map:
        kids = list(col.children or ())
        if not kids:
            return pa.array([{}] * row_count, pa.struct([]))
        arrays = [missing_column_array(k, row_count) for k in kids]
        return pa.StructArray.from_arrays(arrays, fields=[field_to_arrow(k) for k in kids])
    if col.mode is DataMode.OPTIONAL or col.type in (MinorType.DICT, MinorType.UNION):
        return pa.nulls(row_count, arrow_type)
    value = default_value(col)
    if value is None:
        return pa.nulls(row_count, arrow_type)
    return pa.repeat(pa.scalar(value, arrow_type), row_count)


def missing_arrays(schema: Iterable[ColumnMetadata], row_count: int) -> list[pa.Array]:
    """Arrays for each missing column, in schema order."""
    return [missing_column_array(c, row_count) for c in schema]


def missing_batch(schema: Sequence[ColumnMetadata] | TupleSchema, row_count: int) -> pa.RecordBatch:
    """The missing columns as one batch of ``row_count`` rows (columns need not be empty)."""
    cols = list(schema)
    arrays = missing_arrays(cols, row_count)
    if not cols:
        return pa.RecordBatch.from_pydict({}).slice(0, 0)
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema([field_to_arrow(c) for c in cols]))


class MissingColumn:
    """One missing column's values for batch after batch: built once, then sliced.

    The values follow :func:`missing_column_array`; ``arrow_type`` is the type the scan delivers
    the column as (a planned scan makes every field nullable), cast to once.
    """

    __slots__ = ("_template", "arrow_type", "column")

    def __init__(self, column: ColumnMetadata, arrow_type: pa.DataType | None = None) -> None:
        self.column = column
        self.arrow_type = arrow_type if arrow_type is not None else column_to_arrow(column)
        self._template: pa.Array | None = None

    def array(self, row_count: int) -> pa.Array:
        """The column's ``row_count`` values."""
        template = self._template
        if template is None or len(template) < row_count:
            template = missing_column_array(self.column, max(row_count, 1024))
            if not template.type.equals(self.arrow_type):
                template = template.cast(self.arrow_type)
            self._template = template
        return template.slice(0, row_count)
