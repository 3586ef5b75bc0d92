"""Drill's JSON type rules: the column type of a JSON value, and the union over records.

Numbers without a decimal point are BIGINT, with one DOUBLE (BIGINT and DOUBLE in one column
widen to DOUBLE); strings VARCHAR; booleans BIT; objects MAPs; arrays REPEATED (arrays of arrays
LIST). ``store.json.all_text_mode`` reads every scalar as VARCHAR, and
``store.json.read_numbers_as_double`` every number as DOUBLE. A column seen only as null reads
as nullable INT, Drill's type for "unknown"; an empty array as an array of INT (VARCHAR in
all-text mode). Scalars of several types in one array take the type of the first (Drill's
rule; the reader converts the others). Other mixes (a number where a map was) are errors
naming where, raised only when a query reads that column or map member
(:mod:`auger.formats.conflicts`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.json as pajson

from auger.errors import UserError
from auger.formats.conflicts import carry_conflict, defer_conflict, widen
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

__all__ = ["SchemaBuilder", "infer_value"]


class TypeConflict(ValueError):
    """Two JSON values of one column whose types have no common type."""

    def __init__(self, column: str, first: ColumnMetadata, second: ColumnMetadata) -> None:
        super().__init__(column)
        self.column = column
        self.first = first
        self.second = second


def infer_value(name: str, value: Any, all_text: bool, as_double: bool) -> ColumnMetadata:
    """The Drill column type of one JSON value (``name`` is its column name)."""
    if value is None:
        return ColumnMetadata(name, MinorType.NULL)
    if isinstance(value, dict):
        members = TupleSchema()
        for k, v in value.items():
            col = infer_value(k, v, all_text, as_double)
            mine = members.column(k)
            if mine is None:
                members.add(col)
            else:  # the same key twice (or in two spellings): the last one wins in Python
                members.replace(_merge(f"{name}.{k}" if name else k, mine, col))
        return ColumnMetadata(name, MinorType.MAP, DataMode.REQUIRED, members.columns())
    if isinstance(value, list):
        elem: ColumnMetadata | None = None
        for item in value:
            col = infer_value(name, item, all_text, as_double)
            if elem is None:
                elem = col
                continue
            try:
                elem = _merge(name, elem, col)
            except TypeConflict:
                # scalars of several types in one array: as in Drill, the array takes the
                # type of its first scalar and the others are converted to it when read
                # (``["a", 1]`` is ARRAY<VARCHAR>); maps and arrays do not mix with scalars
                shape = _scalar_shape(elem)
                if shape is None or shape != _scalar_shape(col):
                    raise
        if elem is None or elem.type is MinorType.NULL:
            return ColumnMetadata(name, MinorType.NULL, DataMode.REPEATED)
        if elem.mode is DataMode.REPEATED:
            return ColumnMetadata(name, MinorType.LIST, DataMode.REPEATED, (elem,))
        return elem.with_mode(DataMode.REPEATED)
    if all_text:
        return ColumnMetadata(name, MinorType.VARCHAR)
    if isinstance(value, bool):
        return ColumnMetadata(name, MinorType.BIT)
    if isinstance(value, int):
        return ColumnMetadata(name, MinorType.FLOAT8 if as_double else MinorType.BIGINT)
    if isinstance(value, float):
        return ColumnMetadata(name, MinorType.FLOAT8)
    return ColumnMetadata(name, MinorType.VARCHAR)


def _scalar_shape(col: ColumnMetadata) -> str | None:
    """How scalars nest in ``col``: ``"1"`` a scalar, ``"[1]"`` an array of them, ``"[[1]]"``
    arrays of those...; None when it holds a map or no typed value."""
    if col.type in (MinorType.MAP, MinorType.NULL):
        return None
    if col.type is MinorType.LIST:
        kids = col.children or ()
        inner = _scalar_shape(kids[0]) if kids else None
        return None if inner is None else f"[{inner}]"
    return "[1]" if col.mode is DataMode.REPEATED else "1"


#: What a schema sample does with a conflict inside a map: the member to keep, carrying it.
Defer = Callable[[TypeConflict, ColumnMetadata], ColumnMetadata]


def _merge(
    column: str, a: ColumnMetadata, b: ColumnMetadata, defer: Defer | None = None
) -> ColumnMetadata:
    """Union of two observed types of one column; raises TypeConflict when there is none.

    With ``defer``, a conflict of a map member does not spoil the map: ``defer`` says what the
    member becomes (the first type, carrying the conflict for a query that reads it)."""
    if a.type is MinorType.NULL and a.mode is DataMode.REPEATED and b.mode is DataMode.REPEATED:
        return carry_conflict(b.renamed(a.name), a)  # an empty array learns its type later
    if b.type is MinorType.NULL and b.mode is DataMode.REPEATED and a.mode is DataMode.REPEATED:
        return a
    if a.type is MinorType.NULL and a.mode is not DataMode.REPEATED:
        kept = b.renamed(a.name) if b.mode is DataMode.REPEATED else _optional(b, a.name)
        return carry_conflict(kept, a)
    if b.type is MinorType.NULL and b.mode is not DataMode.REPEATED:
        return a if a.mode is DataMode.REPEATED else _optional(a, a.name)
    repeated = (a.mode is DataMode.REPEATED, b.mode is DataMode.REPEATED)
    if a.type is MinorType.MAP and b.type is MinorType.MAP and repeated[0] == repeated[1]:
        members = TupleSchema(a.children or ())
        for col in b.children or ():
            mine = members.column(col.name)
            if mine is None:
                members.add(col)
                continue
            try:
                members.replace(_merge(f"{column}.{col.name}", mine, col, defer))
            except TypeConflict as exc:
                if defer is None:
                    raise
                members.replace(defer(exc, mine))
        mode = a.mode if a.mode is b.mode else DataMode.OPTIONAL
        merged = ColumnMetadata(a.name, MinorType.MAP, mode, members.columns())
        return carry_conflict(merged, a, b)
    if a.type is MinorType.LIST and b.type is MinorType.LIST:
        kid = _merge(column, (a.children or ())[0], (b.children or ())[0], defer)
        return ColumnMetadata(a.name, MinorType.LIST, DataMode.REPEATED, (kid,))
    if a.mode is not b.mode and DataMode.REPEATED in (a.mode, b.mode):
        raise TypeConflict(column, a, b)
    if {a.type, b.type} == {MinorType.BIGINT, MinorType.FLOAT8} or a.type is b.type:
        widened = widen(a, b)
        if widened is not None:
            return carry_conflict(widened, a, b)
    raise TypeConflict(column, a, b)


def _optional(col: ColumnMetadata, name: str) -> ColumnMetadata:
    col = col.renamed(name)
    if col.type is MinorType.MAP:
        return col  # Drill's maps are never null: their members are
    return col.with_mode(DataMode.OPTIONAL) if col.mode is DataMode.REQUIRED else col


def _describe(col: ColumnMetadata) -> str:
    if col.mode is DataMode.REPEATED:
        return f"ARRAY<{col.type.value}>" if col.type is not MinorType.NULL else "ARRAY"
    return col.type.value


def _is_scalar(col: ColumnMetadata) -> bool:
    return col.mode is not DataMode.REPEATED and col.type not in (MinorType.MAP, MinorType.LIST)


def _conflict_error(exc: TypeConflict, path: str, line: int) -> UserError:
    # all-text mode reads every scalar as text, so it settles a number beside a string, never
    # a scalar beside an object or an array: only then is it the fix
    fix = (
        "Fix: ALTER SESSION SET `store.json.all_text_mode` = true (or clean the data)"
        if _is_scalar(exc.first) and _is_scalar(exc.second)
        else f"Fix: clean the data so that column [{exc.column}] is of one kind in every record"
    )
    return UserError.data_read(
        f"JSON column [{exc.column}] changes type from {_describe(exc.first)} to "
        f"{_describe(exc.second)}",
        [
            f"File: {path}",
            f"Line: {line}",
            f"Column: {exc.column}",
            f"Previous type: {_describe(exc.first)}",
            f"New type: {_describe(exc.second)}",
            fix,
        ],
    )


#: The deepest nesting of objects and arrays a record may have (the record itself is level
#: 1). Drill's parser has a limit too (Jackson's, far higher); auger's is what a batch can
#: carry: Arrow's IPC, between the reader and Spark, refuses types nested 64 levels deep.
MAX_DEPTH = 63


def _depth(value: Any) -> int:
    """How deeply objects and arrays nest in ``value`` (iterative: any depth is measured)."""
    deepest = 0
    todo = [(value, 1)]
    while todo:
        v, level = todo.pop()
        if isinstance(v, dict):
            items: Any = v.values()
        elif isinstance(v, list):
            items = v
        else:
            continue
        deepest = max(deepest, level)
        todo.extend((item, level + 1) for item in items)
    return deepest


def _schema_depth(cols: Any) -> int:
    """Levels of the nesting a schema's columns imply (a record of scalars is level 1)."""
    deepest = 1
    todo = [(c, 2) for c in cols]
    while todo:
        col, level = todo.pop()
        if col.mode is DataMode.REPEATED or col.type in (MinorType.MAP, MinorType.LIST):
            deepest = max(deepest, level)
            inner = (
                level + 1 if col.mode is DataMode.REPEATED and col.type is MinorType.MAP else level
            )
            todo.extend((c, inner + 1) for c in col.children or ())
    return deepest


def _too_deep(records: list[dict[str, Any]], lines: list[int], path: str) -> UserError:
    """The DATA_READ error for the first record nested beyond :data:`MAX_DEPTH`."""
    line, depth = (lines[0] if lines else 1), MAX_DEPTH + 1
    for record, at in zip(records, lines, strict=True):
        if _depth(record) > MAX_DEPTH:
            line, depth = at, _depth(record)
            break
    return UserError.data_read(
        f"Error parsing JSON - objects and arrays nested {depth} levels deep; "
        f"at most {MAX_DEPTH} are supported",
        [f"File: {path}", f"Line: {line}", "Fix: flatten the record"],
    )


class SchemaBuilder:
    """The union of the record types of one or more JSON files, in first-seen column order."""

    def __init__(self, all_text: bool, as_double: bool) -> None:
        self.all_text = all_text
        self.as_double = as_double
        self._cols = TupleSchema()

    def add(self, record: dict[str, Any], path: str, line: int) -> None:
        """Merge one record's types; a conflict is a DATA_READ error naming where."""
        if _depth(record) > MAX_DEPTH:
            raise _too_deep([record], [line], path)
        try:
            cols: Sequence[ColumnMetadata] = (
                infer_value("", record, self.all_text, self.as_double).children or ()
            )
        except TypeConflict:
            cols = self._infer_members(record, path, line)
        self._merge_columns(cols, path, line, strict=False)

    def _infer_members(
        self, record: dict[str, Any], path: str, line: int
    ) -> Sequence[ColumnMetadata]:
        """A record's columns when it holds a conflict (``[1, "a"]``, or a key in two
        spellings of two types): the conflicting column is deferred, the others typed."""
        members = TupleSchema()
        for k, v in record.items():
            col = self._infer_member(k, v, path, line)
            mine = members.column(k)
            if mine is None:
                members.add(col)
                continue
            try:  # the same key twice: named as the later spelling, like infer_value
                members.replace(_merge(k, mine, col))
            except TypeConflict as exc:
                members.replace(defer_conflict(mine, _conflict_error(exc, path, line)))
        return members.columns()

    def _infer_member(self, name: str, value: Any, path: str, line: int) -> ColumnMetadata:
        """One top-level value's column; a conflict inside it (``[1, "a"]``) is deferred."""
        try:
            return infer_value(name, value, self.all_text, self.as_double)
        except TypeConflict as exc:
            return defer_conflict(exc.first.renamed(name), _conflict_error(exc, path, line))

    def add_many(
        self,
        records: list[dict[str, Any]],
        lines: list[int],
        path: str,
        text: bytes | None = None,
    ) -> None:
        """Merge a sample of records at once: pyarrow infers their union type in C; on any
        doubt (a type mix, two spellings of a key) the records go one by one, which gives the
        same answer or the located error. ``text``: the records as they stand in the file,
        one a line, when the caller has them (else they are written out again)."""
        try:
            cols = _arrow_infer(records, self.all_text, self.as_double, text)
        except RecursionError:
            raise _too_deep(records, lines, path) from None
        if cols is not None and _schema_depth(cols) > MAX_DEPTH:
            raise _too_deep(records, lines, path)
        if cols is None:
            for record, line in zip(records, lines, strict=True):
                self.add(record, path, line)
            return
        before = self._cols.copy()
        try:
            self._merge_columns(cols, path, lines[0] if lines else 1, strict=True)
        except TypeConflict:
            self._cols = before  # find the record that brings the conflict
            for record, line in zip(records, lines, strict=True):
                self.add(record, path, line)

    def _merge_columns(
        self, cols: Iterable[ColumnMetadata], path: str, line: int, strict: bool
    ) -> None:
        """Merge one record's (or a sample's) columns. A conflict raises TypeConflict when
        ``strict`` (the caller then finds its record); otherwise the column (or map member)
        keeps its first type and carries the conflict, located at ``path`` and ``line``, for
        the query that reads it."""

        def defer(exc: TypeConflict, mine: ColumnMetadata) -> ColumnMetadata:
            return defer_conflict(mine, _conflict_error(exc, path, line))

        for col in cols:
            mine = self._cols.column(col.name)
            if mine is None:
                self._cols.add(_optional(col, col.name))
                continue
            try:
                merged = _merge(mine.name, mine, col, None if strict else defer)
            except TypeConflict as exc:
                if strict:
                    raise
                merged = defer(exc, mine)
            self._cols.replace(merged)

    def schema(self) -> TupleSchema:
        return TupleSchema(_finalize(c, self.all_text) for c in self._cols)


#: A run of digits as long as the longest BIGINT's: pyarrow's JSON reader reads an integer
#: beyond BIGINT's range as a DOUBLE, where Drill's rule keeps BIGINT (and then fails to read
#: it), so a sample holding one is typed record by record. A string of digits counts too: the
#: records are then typed one by one, to the same result.
_LONG_DIGITS = re.compile(rb"[0-9]{19}")

_encode = json.JSONEncoder().encode


def _arrow_infer(
    records: list[dict[str, Any]], all_text: bool, as_double: bool, text: bytes | None = None
) -> list[ColumnMetadata] | None:
    """The columns of a batch of records by pyarrow's inference, or None when unsure.

    pyarrow's JSON reader infers the union type from the records' text (``text``, or the
    records written out as JSON, one a line). Not ``pa.array(records)``: converting Python
    objects makes pyarrow import pandas, tenths of a second in a fresh process, such as the
    Python worker Spark starts to plan a read (and starts again after a minute idle)."""
    if not records:
        return []
    data = text if text is not None else "\n".join(map(_encode, records)).encode()
    if _LONG_DIGITS.search(data):
        return None
    try:
        table = pajson.read_json(
            pa.BufferReader(data),
            read_options=pajson.ReadOptions(use_threads=False, block_size=len(data) + 1),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError):
        return None  # a type mix, a key twice in one object, an escape it refuses...
    if table.num_rows != len(records):
        return None
    struct = pa.struct(list(table.schema))
    if _type_depth(struct) > MAX_DEPTH:
        return None  # too deep: the records one by one say which is
    try:
        cols = [_from_arrow(f.name, f.type, all_text, as_double) for f in struct]
    except _Unsure:
        return None
    return cols


def _type_depth(t: pa.DataType) -> int:
    """Levels of structs and lists in an inferred type (iterative). Arrays that are empty or
    all null leave no trace in the columns made of it (their element type is unknown), so
    the depth is taken here, before they collapse."""
    deepest, todo = 0, [(t, 1)]
    while todo:
        t, level = todo.pop()
        deepest = max(deepest, level)
        if pa.types.is_struct(t):
            todo.extend((f.type, level + 1) for f in t)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            todo.append((t.value_type, level + 1))
    return deepest


_SIMPLE = (
    (pa.float64(), MinorType.FLOAT8),
    (pa.string(), MinorType.VARCHAR),
    (pa.bool_(), MinorType.BIT),
)


class _Unsure(Exception):
    pass


def _from_arrow(name: str, t: pa.DataType, all_text: bool, as_double: bool) -> ColumnMetadata:
    """Drill's column for a type pyarrow's JSON reader inferred."""
    if pa.types.is_struct(t):
        names = [f.name.lower() for f in t]
        if len(set(names)) != len(names):
            raise _Unsure  # one key in two spellings: Drill's case-insensitive merge decides
        kids = [_from_arrow(f.name, f.type, all_text, as_double) for f in t]
        return ColumnMetadata(name, MinorType.MAP, DataMode.REQUIRED, kids)
    if pa.types.is_list(t):
        elem = _from_arrow(name, t.value_type, all_text, as_double)
        if elem.type is MinorType.NULL:
            return ColumnMetadata(name, MinorType.NULL, DataMode.REPEATED)
        if elem.mode is DataMode.REPEATED:
            return ColumnMetadata(name, MinorType.LIST, DataMode.REPEATED, (elem,))
        return elem.with_mode(DataMode.REPEATED)
    if pa.types.is_null(t):
        return ColumnMetadata(name, MinorType.NULL)
    if all_text:
        return ColumnMetadata(name, MinorType.VARCHAR)
    if pa.types.is_int64(t):
        return ColumnMetadata(name, MinorType.FLOAT8 if as_double else MinorType.BIGINT)
    if pa.types.is_timestamp(t):
        return ColumnMetadata(name, MinorType.VARCHAR)  # pyarrow reads some strings as times
    for arrow_type, minor in _SIMPLE:
        if t.equals(arrow_type):
            return ColumnMetadata(name, minor)
    raise _Unsure


def _finalize(col: ColumnMetadata, all_text: bool) -> ColumnMetadata:
    """Types still unknown after the sample: nullable INT, or an INT (VARCHAR) array."""
    if col.type is MinorType.NULL:
        if col.mode is DataMode.REPEATED:
            elem = MinorType.VARCHAR if all_text else MinorType.INT
            return carry_conflict(ColumnMetadata(col.name, elem, DataMode.REPEATED), col)
        return carry_conflict(ColumnMetadata(col.name, MinorType.INT, DataMode.OPTIONAL), col)
    if col.type is MinorType.MAP:
        kids = (_finalize(_optional(c, c.name), all_text) for c in col.children or ())
        return col.with_children(kids)
    if col.type is MinorType.LIST:
        return col.with_children(_finalize(c, all_text) for c in col.children or ())
    return col
