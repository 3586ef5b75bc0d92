"""Type conflicts found while discovering a table's schema, kept until a query reads the column.

Files of one table (or records of one JSON file) may disagree about a column: BIGINT in one
record and VARCHAR in the next, DECIMAL in one Parquet file and DOUBLE in another. Drill's scan
looks only at the columns a query projects, so such a column fails a query only when the query
reads it; ``SELECT id`` over the same files answers. Discovery runs before the planner knows the
projection, so instead of raising it records the conflict on the column (on the map member, for a
member of a map) and keeps the first type it saw. The planner asks :func:`check_read` for each
column the query reads: a whole column (or a ``SELECT *``) reads every member, ``m.a`` only the
member ``a`` of ``m``.

Widening itself has one home here too: :func:`widen` says which type holds two scalar
observations of a column, and :func:`widen_deferring` merges maps member by member around it.

The conflict travels as a column property, so it survives every copy, pickle, cache and text form
of the schema, and it never reaches a reader: a conflicting column is never projected.

A statement that only describes the table (``DESCRIBE``) reads no values, so it meets no
conflict: its plan does not call :func:`check_read`, and each conflicting column keeps the
first type discovery saw.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Sequence

from auger.errors import ErrorKind, UserError
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

__all__ = [
    "CONFLICT_PROPERTY",
    "ErrorFor",
    "carry_conflict",
    "check_read",
    "conflict_error",
    "conflict_of",
    "defer_conflict",
    "files_conflict_error",
    "merge_deferring",
    "merge_file_schemas",
    "nullable",
    "widen",
    "widen_deferring",
]

#: The column property holding a deferred conflict: a JSON list ``[kind, message, context]``,
#: base64-encoded so that it survives the schema's text form (quotes, backslashes) unchanged.
CONFLICT_PROPERTY = "auger.conflict"

#: Names a conflict for the query that meets it: ``(column path, first type, second type)``.
ErrorFor = Callable[[str, ColumnMetadata, ColumnMetadata], UserError]


def defer_conflict(column: ColumnMetadata, error: UserError) -> ColumnMetadata:
    """``column`` carrying ``error`` for the first query that reads it (the first error wins)."""
    if CONFLICT_PROPERTY in column.properties:
        return column
    raw = json.dumps([error.kind.value, error.message, list(error.context)])
    raw = base64.urlsafe_b64encode(raw.encode()).decode("ascii")
    return column.with_properties(**{CONFLICT_PROPERTY: raw})


def conflict_of(column: ColumnMetadata) -> UserError | None:
    """The conflict deferred on ``column`` itself (not its members), or None."""
    raw = column.properties.get(CONFLICT_PROPERTY)
    if raw is None:
        return None
    kind, message, context = json.loads(base64.urlsafe_b64decode(raw))
    return UserError(ErrorKind(kind), message, context)


def check_read(column: ColumnMetadata, members: Sequence[Sequence[str]] | None = None) -> None:
    """Raise the deferred conflict a query meets when it reads ``column``.

    Args:
        column: a table column as discovery left it.
        members: the member paths the query reads of a map column (``[["a"], ["b", "c"]]`` for
            ``m.a`` and ``m.b.c``); None or empty when it reads the whole column.
    """
    error = conflict_of(column)
    if error is not None:
        raise error
    if not column.is_map:
        return
    if not members:
        for child in column.children or ():
            check_read(child)
        return
    by_name: dict[str, list[Sequence[str]]] = {}
    for path in members:
        if path:
            by_name.setdefault(path[0].lower(), []).append(path[1:])
    for child in column.children or ():
        rests = by_name.get(child.name.lower())
        if rests is None:
            continue
        check_read(child, None if any(not rest for rest in rests) else rests)


def conflict_error(path: str, column: str, a: ColumnMetadata, b: ColumnMetadata) -> UserError:
    """Files of one table disagree about a column's type: ``a`` seen first, ``b`` in ``path``."""
    return UserError.data_read(
        f"Column [{column}] has type {b.type_string()} in one file and {a.type_string()} in "
        "another; auger cannot combine them",
        [f"File: {path}", f"Column: {column}", "Fix: cast the column, or give a provided schema"],
    )


def carry_conflict(merged: ColumnMetadata, *sources: ColumnMetadata) -> ColumnMetadata:
    """``merged`` keeping the first deferred conflict of ``sources`` (a merge builds a new
    column and would otherwise drop it)."""
    for source in sources:
        error = conflict_of(source)
        if error is not None:
            return defer_conflict(merged, error)
    return merged


_NUMERIC_ORDER = [
    MinorType.TINYINT,
    MinorType.SMALLINT,
    MinorType.INT,
    MinorType.BIGINT,
    MinorType.FLOAT4,
    MinorType.FLOAT8,
]


def widen(a: ColumnMetadata, b: ColumnMetadata) -> ColumnMetadata | None:
    """A type that holds both observations' values losslessly, or None when there is none.

    Maps are not widened here: :func:`widen_deferring` merges them member by member, keeping a
    member's conflict on that member.
    """
    if a.type is MinorType.NULL or a.type is MinorType.LATE:
        return b.renamed(a.name)
    if b.type is MinorType.NULL or b.type is MinorType.LATE:
        return a
    mode = a.mode
    if a.mode is not b.mode:
        if DataMode.REPEATED in (a.mode, b.mode):
            return None
        mode = DataMode.OPTIONAL
    if a.type is b.type:
        if a.type is MinorType.MAP:
            return None
        if a.type is MinorType.VARDECIMAL:
            scale = max(a.scale, b.scale)
            digits = max(a.precision - a.scale, b.precision - b.scale)
            return ColumnMetadata(a.name, a.type, mode, None, min(38, digits + scale), scale)
        return a.with_mode(mode)
    if a.type in _NUMERIC_ORDER and b.type in _NUMERIC_ORDER:
        wider = max(a.type, b.type, key=_NUMERIC_ORDER.index)
        if MinorType.BIGINT in (a.type, b.type) and wider is MinorType.FLOAT4:
            wider = MinorType.FLOAT8
        return ColumnMetadata(a.name, wider, mode)
    return None


def widen_deferring(
    mine: ColumnMetadata, theirs: ColumnMetadata, error_for: ErrorFor
) -> ColumnMetadata:
    """The union of two observations of a column; where they have none, ``mine`` with the
    conflict deferred. Maps merge member by member, so a conflict stays on the member."""
    repeated = (mine.mode is DataMode.REPEATED, theirs.mode is DataMode.REPEATED)
    if mine.is_map and theirs.is_map and repeated[0] == repeated[1]:
        members = merge_deferring(mine.schema, theirs.schema, error_for, f"{mine.name}.")
        # a member only one side has reads NULL in the other's rows
        theirs_names = {c.name.lower() for c in theirs.children or ()}
        for member in members.columns():
            if member.name.lower() not in theirs_names:
                members.replace(nullable(member))
        union = mine.with_children(members.columns())
        if mine.mode is not theirs.mode:
            # a null map reads as a map of null members: nullable all the way down
            union = nullable(union)
        return carry_conflict(union, mine, theirs)
    merged = widen(mine, theirs)
    if merged is None:
        return defer_conflict(mine, error_for(mine.name, mine, theirs))
    return carry_conflict(merged, mine, theirs)


def nullable(col: ColumnMetadata) -> ColumnMetadata:
    """``col`` as read where a file lacks it: NOT NULL becomes nullable, and for a map every
    member too, at any depth (the map's rows there are maps of null members). Arrays stay
    arrays (an absent array reads empty); their map elements' members become nullable."""
    out = col.with_mode(DataMode.OPTIONAL) if col.mode is DataMode.REQUIRED else col
    if col.is_map and col.children:
        kids = [nullable(c) for c in col.children]
        if any(a is not b for a, b in zip(kids, col.children, strict=True)):
            out = out.with_children(kids)
    return out


def merge_deferring(
    schema: TupleSchema,
    other: Iterable[ColumnMetadata],
    error_for: ErrorFor,
    prefix: str = "",
    new_optional: bool = True,
) -> TupleSchema:
    """The union of two schemas by name, first spelling and order kept; a column new in
    ``other`` becomes :func:`nullable` (unless not ``new_optional``); a conflict is deferred on
    the column (see the module's docstring). Maps merge member by member: a member only one
    side has, and every member of a map NOT NULL on one side only, become nullable.

    ``error_for(path, first, second)`` builds the error a reading query will get, ``path``
    naming the column (``m.a`` for a member).
    """
    out = schema.copy()
    for col in other:
        mine = out.column(col.name)
        if mine is None:
            out.add(nullable(col) if new_optional else col)
            continue
        out.replace(widen_deferring(mine, col, _prefixed(error_for, prefix)))
    return out


def _prefixed(error_for: ErrorFor, prefix: str) -> ErrorFor:
    if not prefix:
        return error_for
    return lambda path, first, second: error_for(prefix + path, first, second)


def files_conflict_error(
    column: str, first: ColumnMetadata, second: ColumnMetadata, first_file: str, file: str
) -> UserError:
    """Two files disagree about a column's type: ``first`` as ``first_file`` typed it,
    ``second`` in ``file``; the error names both files and both types."""
    a, b = first.type_string(), second.type_string()
    return UserError.data_read(
        f"Column [{column}] has type {a} in one file and {b} in another",
        [
            f"File: {first_file}",
            f"Type: {a}",
            f"File: {file}",
            f"Type: {b}",
            f"Column: {column}",
            "Fix: rewrite the files with one type, or query them apart",
        ],
    )


def merge_file_schemas(
    schemas: Iterable[tuple[str, TupleSchema]], *, lacking_optional: bool = False
) -> TupleSchema:
    """The table schema of files whose own schemas are given as ``(path, schema)``, in file
    order: their union by name, types widened where one holds both, a conflict deferred on the
    column with :func:`files_conflict_error` naming the file that typed it first.

    A column some file lacks is nullable when ``lacking_optional`` (that file's rows have no
    value for it); otherwise each column keeps its mode, except a map: its rows in such a
    file are maps of null members, so it and its members become nullable either way. Members
    merge as :func:`merge_deferring` says.
    """
    schema = TupleSchema()
    origin: dict[str, str] = {}  # lower column name -> the file that typed it
    everywhere: set[str] | None = None  # lower names of the columns every file has
    for path, file_schema in schemas:
        names = {col.name.lower() for col in file_schema}
        for name in names:
            origin.setdefault(name, path)
        everywhere = names if everywhere is None else everywhere & names

        def error_for(
            column: str, first: ColumnMetadata, second: ColumnMetadata, path: str = path
        ) -> UserError:
            top = origin[column.split(".", 1)[0].lower()]
            return files_conflict_error(column, first, second, top, path)

        schema = merge_deferring(schema, file_schema, error_for, new_optional=False)
    for col in schema.columns():
        if col.name.lower() in (everywhere or set()):
            continue
        if col.is_map:
            schema.replace(nullable(col))
        elif lacking_optional and col.mode is DataMode.REQUIRED:
            schema.replace(col.with_mode(DataMode.OPTIONAL))
    return schema
