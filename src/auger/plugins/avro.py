"""Drill's ``avro`` format: Avro object container files, read with fastavro.

The table's columns come from the writer schema in the file's header, typed as Drill types them:

=====================================  ==============================================
Avro                                   Drill
=====================================  ==============================================
``int`` / ``long``                     INT / BIGINT
``float`` / ``double``                 FLOAT4 / FLOAT8
``boolean``                            BIT
``string``, ``enum``, ``uuid``         VARCHAR
``bytes``, ``fixed``                   VARBINARY
``decimal`` (bytes or fixed)           VARDECIMAL(precision, scale)
``date``                               DATE
``time-millis`` / ``time-micros``      TIME (to the millisecond)
``timestamp-millis`` / ``-micros``     TIMESTAMP (in UTC, to the millisecond)
``duration`` (fixed 12)                INTERVAL
``record``                             MAP (a struct of its fields)
``array``                              REPEATED of the item type; arrays of arrays LIST
``map``                                DICT (VARCHAR keys)
``["null", T]``                        T, nullable
=====================================  ==============================================

A field that is not a union with ``null`` is NOT NULL, as in Drill. A union of more than one
non-null type, and a record type that contains itself, are not supported (an
UNSUPPORTED_OPERATION error naming the column).

Files of one table are merged by column name, as Parquet files are: a column some file lacks is
nullable (that file's rows read NULL there), two types one type holds are widened to it (``int``
and ``long``: BIGINT), and a column whose types no type holds (``long`` and ``string``) fails
only a query that reads it, with an error naming both files and both types.

The format has no options besides ``extensions`` (default ``avro``).

How it reads: the plugin is Arrow-native (``read_arrow``). fastavro decodes each block's records
with a *reader schema* that keeps only the projected top-level fields, so the others are skipped
in the bytes rather than decoded; the decoded values are turned into one Arrow array per column
and block. ``COUNT(*)`` reads only the blocks' record counts. A block that is truncated or
corrupt fails the query with a DATA_READ error naming the file, the block and the record.
A compressed file (``.avro.gz``, ``.avro.zst``...) is decompressed into memory first, since
fastavro's block reader needs to seek.
"""

from __future__ import annotations

import copy
import io
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, Any

import fastavro
import pyarrow as pa

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats import FormatPlugin
from auger.formats.base import open_input
from auger.formats.conflicts import merge_file_schemas
from auger.storage.splits import FileSplit
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.arrow import column_to_arrow

__all__ = ["AvroFormat", "avro_schema_to_drill"]

#: the column a row-count-only batch carries (the scan's convention for ``COUNT(*)``)
ROWS_ONLY = "__rows__"
#: the property that remembers a timestamp column's Avro unit
AVRO_LOGICAL_TYPE = "avro_logical_type"

_PRIMITIVES: dict[str, MinorType] = {
    "int": MinorType.INT,
    "long": MinorType.BIGINT,
    "float": MinorType.FLOAT4,
    "double": MinorType.FLOAT8,
    "boolean": MinorType.BIT,
    "string": MinorType.VARCHAR,
    "bytes": MinorType.VARBINARY,
    "enum": MinorType.VARCHAR,
    "fixed": MinorType.VARBINARY,
    "null": MinorType.VARCHAR,
}

#: (Avro base type, logical type) -> Drill type
_LOGICAL: dict[tuple[str, str], MinorType] = {
    ("int", "date"): MinorType.DATE,
    ("int", "time-millis"): MinorType.TIME,
    ("long", "time-micros"): MinorType.TIME,
    ("long", "timestamp-millis"): MinorType.TIMESTAMP,
    ("long", "timestamp-micros"): MinorType.TIMESTAMP,
    ("long", "local-timestamp-millis"): MinorType.TIMESTAMP,
    ("long", "local-timestamp-micros"): MinorType.TIMESTAMP,
    ("fixed", "duration"): MinorType.INTERVAL,
    ("string", "uuid"): MinorType.VARCHAR,
    ("fixed", "uuid"): MinorType.VARCHAR,
}


def _unsupported(what: str, column: str) -> UserError:
    return UserError.unsupported(
        f"'{what}' type is not supported",
        [f"Column: {column}", "Fix: project other columns, or rewrite the file without it"],
    )


class _Converter:
    """Avro schema → Drill columns, remembering named types (records may be referenced by name
    after their definition)."""

    def __init__(self) -> None:
        self.named: dict[str, Any] = {}
        self.building: set[str] = set()

    def resolve(self, schema: Any) -> Any:
        if isinstance(schema, str) and schema in self.named:
            return self.named[schema]
        return schema

    def column(self, name: str, schema: Any, mode: DataMode) -> ColumnMetadata:
        if isinstance(schema, str) and schema in self.building:
            raise _unsupported("recursive record", name)
        schema = self.resolve(schema)
        if isinstance(schema, list):
            return self._union(name, schema, mode)
        if isinstance(schema, str):
            schema = {"type": schema}
        kind = schema["type"]
        if isinstance(kind, (dict, list)) or (isinstance(kind, str) and kind in self.named):
            return self.column(name, kind, mode)
        if kind in ("record", "enum", "fixed") and "name" in schema:
            self.named[schema["name"]] = schema
        logical = schema.get("logicalType")
        if logical == "decimal" and kind in ("bytes", "fixed"):
            precision = int(schema.get("precision", 38))
            return ColumnMetadata(
                name, MinorType.VARDECIMAL, mode, None, precision, int(schema.get("scale", 0))
            )
        if logical and (kind, logical) in _LOGICAL:
            col = ColumnMetadata(name, _LOGICAL[(kind, logical)], mode)
            return col.with_properties(**{AVRO_LOGICAL_TYPE: logical})
        if kind in _PRIMITIVES:
            if kind == "null":
                return ColumnMetadata(name, MinorType.VARCHAR, DataMode.OPTIONAL)
            return ColumnMetadata(name, _PRIMITIVES[kind], mode)
        if kind == "record":
            full = schema["name"]
            self.building.add(full)
            try:
                members = [
                    self.column(f["name"], f["type"], DataMode.REQUIRED) for f in schema["fields"]
                ]
            finally:
                self.building.discard(full)
            return ColumnMetadata(name, MinorType.MAP, mode, members)
        if kind == "array":
            items = self.resolve(schema["items"])
            inner = _non_null(items, name) if isinstance(items, list) else items
            inner = self.resolve(inner)
            if _type_of(inner) == "array":
                element = self.column(name, items, DataMode.REPEATED)
                return ColumnMetadata(name, MinorType.LIST, DataMode.REPEATED, (element,))
            return self.column(name, items, DataMode.REPEATED)
        if kind == "map":
            key = ColumnMetadata("key", MinorType.VARCHAR, DataMode.REQUIRED)
            value = self.column("value", schema["values"], DataMode.REQUIRED)
            return ColumnMetadata(name, MinorType.DICT, mode, (key, value))
        raise _unsupported(str(kind), name)

    def _union(self, name: str, branches: list[Any], mode: DataMode) -> ColumnMetadata:
        inner = _non_null(branches, name)
        nullable = DataMode.REPEATED if mode is DataMode.REPEATED else DataMode.OPTIONAL
        return self.column(name, inner, nullable)


def _type_of(schema: Any) -> str:
    if isinstance(schema, dict):
        kind = schema["type"]
        return kind if isinstance(kind, str) else _type_of(kind)
    if isinstance(schema, list):
        return "union"
    return str(schema)


def _non_null(branches: list[Any], column: str) -> Any:
    """The one non-null branch of ``["null", T]``; anything else is a complex union."""
    others = [b for b in branches if b != "null" and _type_of(b) != "null"]
    if len(branches) == 2 and len(others) == 1:
        return others[0]
    if len(branches) == 1 and len(others) == 1:
        return others[0]
    raise _unsupported("complex union", column)


def avro_schema_to_drill(schema: Mapping[str, Any]) -> TupleSchema:
    """The Drill columns of an Avro record schema (a file's writer schema)."""
    if _type_of(schema) != "record":
        raise UserError.unsupported(
            f"Avro files whose schema is a {_type_of(schema)}, not a record, are not supported",
            ["Fix: write the file with a record schema"],
        )
    conv = _Converter()
    conv.named[schema["name"]] = schema
    conv.building.add(schema["name"])
    return TupleSchema(
        conv.column(f["name"], f["type"], DataMode.REQUIRED) for f in schema["fields"]
    )


# ---- Avro values -> Arrow

#: Arrow types values are first built as, where the Drill type's Arrow type cannot take the
#: Python value fastavro gives (aware datetimes, microsecond times, durations as bytes).
_TIMESTAMP_IN = pa.timestamp("us", tz="UTC")


def _build_type(col: ColumnMetadata) -> pa.DataType:
    """The Arrow type the column's Python values are converted into before the final cast."""
    t = col.type
    value: pa.DataType
    if t is MinorType.TIMESTAMP:
        local = (col.prop(AVRO_LOGICAL_TYPE) or "").startswith("local-")
        value = pa.timestamp("us") if local else _TIMESTAMP_IN
    elif t is MinorType.TIME:
        value = pa.time64("us")
    elif t is MinorType.MAP:
        value = pa.struct(
            [
                pa.field(c.name, _build_type(c), c.mode is not DataMode.REQUIRED)
                for c in col.children or ()
            ]
        )
    elif t is MinorType.DICT:
        kids = col.children or ()
        value = pa.map_(pa.string(), _build_type(kids[1]))
    elif t is MinorType.LIST:
        return pa.list_(_build_type((col.children or ())[0]))
    else:
        value = column_to_arrow(col.with_mode(DataMode.OPTIONAL))
    if col.mode is DataMode.REPEATED:
        return pa.list_(value)
    return value


def _fixer(col: ColumnMetadata) -> Callable[[Any], Any] | None:
    """How a Python value of the column is changed before Arrow takes it, or None when it is
    taken as it is (the common case, kept free of any per-value call)."""
    t = col.type
    one: Callable[[Any], Any] | None = None
    if t is MinorType.VARCHAR and col.prop(AVRO_LOGICAL_TYPE) == "uuid":
        one = str
    elif t is MinorType.INTERVAL:
        one = _duration
    elif t is MinorType.MAP:
        members = [(c.name, _fixer(c)) for c in col.children or ()]
        fixed = [(n, f) for n, f in members if f is not None]
        if fixed:

            def one(v: Any, fixed: list[tuple[str, Callable[[Any], Any]]] = fixed) -> Any:
                v = dict(v)
                for n, f in fixed:
                    if v.get(n) is not None:
                        v[n] = f(v[n])
                return v

    elif t is MinorType.DICT:
        inner = _fixer((col.children or ())[1])
        if inner is None:
            one = _items
        else:

            def one(v: Any, inner: Callable[[Any], Any] = inner) -> Any:
                return [(k, None if x is None else inner(x)) for k, x in v.items()]

    elif t is MinorType.LIST:
        one = _fixer((col.children or ())[0])
    if one is None:
        return None
    if col.mode is DataMode.REPEATED:
        element = one

        def many(v: Any, element: Callable[[Any], Any] = element) -> Any:
            return [None if x is None else element(x) for x in v]

        return many
    return one


def _items(v: Mapping[str, Any]) -> list[tuple[str, Any]]:
    return list(v.items())


def _duration(v: bytes) -> pa.MonthDayNano:
    months = int.from_bytes(v[0:4], "little")
    days = int.from_bytes(v[4:8], "little")
    millis = int.from_bytes(v[8:12], "little")
    return pa.MonthDayNano([months, days, millis * 1_000_000])


def _truncate_to_millis(arr: pa.Array) -> pa.Array:
    """Drill's TIMESTAMP and TIME hold milliseconds: finer digits are dropped, as Drill does."""
    t = arr.type
    if pa.types.is_timestamp(t):
        ms = arr.cast(pa.timestamp("ms", tz=t.tz), safe=False)
        return ms.cast(pa.timestamp("us", tz=t.tz))
    return arr


class _Column:
    """One projected column: its Drill type, how its values become an Arrow array."""

    def __init__(self, col: ColumnMetadata) -> None:
        self.name = col.name
        self.final = column_to_arrow(col)
        self.build = _build_type(col)
        self.fix = _fixer(col)
        self.top_timestamp = col.type is MinorType.TIMESTAMP and col.mode is not DataMode.REPEATED

    def finish(self, arr: pa.Array) -> pa.Array:
        """The column's array as built from the Python values, in its Drill type."""
        if self.top_timestamp:
            arr = _truncate_to_millis(arr)
        if arr.type != self.final:
            arr = arr.cast(self.final, safe=False)
        return arr


def _expand(schema: Any, named: dict[str, Any], seen: set[str]) -> Any:
    """``schema`` with each named type defined at its first use (so a reader schema that keeps
    only some fields still defines every type it refers to)."""
    if isinstance(schema, str):
        if schema in named and schema not in seen:
            return _expand(named[schema], named, seen)
        return schema
    if isinstance(schema, list):
        return [_expand(s, named, seen) for s in schema]
    out = dict(schema)
    kind = out.get("type")
    if kind in ("record", "enum", "fixed") and "name" in out:
        seen.add(out["name"])
    if kind == "record":
        out["fields"] = [{**f, "type": _expand(f["type"], named, seen)} for f in out["fields"]]
    elif kind == "array":
        out["items"] = _expand(out["items"], named, seen)
    elif kind == "map":
        out["values"] = _expand(out["values"], named, seen)
    elif isinstance(kind, (dict, list)):
        out["type"] = _expand(kind, named, seen)
    return out


def _collect_named(schema: Any, named: dict[str, Any]) -> None:
    if isinstance(schema, list):
        for s in schema:
            _collect_named(s, named)
    elif isinstance(schema, dict):
        kind = schema.get("type")
        if kind in ("record", "enum", "fixed") and "name" in schema:
            named.setdefault(schema["name"], schema)
        if kind == "record":
            for f in schema["fields"]:
                _collect_named(f["type"], named)
        elif kind == "array":
            _collect_named(schema["items"], named)
        elif kind == "map":
            _collect_named(schema["values"], named)
        elif isinstance(kind, (dict, list)):
            _collect_named(kind, named)


def _reader_schema(writer: Mapping[str, Any], keep: Sequence[str]) -> dict[str, Any]:
    """The writer's record schema with only the fields ``keep`` (in the writer's order)."""
    named: dict[str, Any] = {}
    _collect_named(writer, named)
    wanted = set(keep)
    top = copy.copy(dict(writer))
    top["fields"] = [f for f in writer["fields"] if f["name"] in wanted]
    return _expand(top, named, set())  # type: ignore[no-any-return]


def _read_error(path: str, block: int, record: int, exc: BaseException) -> UserError:
    what = "ends inside" if isinstance(exc, (EOFError, StopIteration)) else "is corrupt in"
    return UserError.data_read(
        f"Avro file {what} block {block} (record {record}): {type(exc).__name__}: {exc}",
        [
            f"File: {path}",
            f"Block: {block}",
            f"Record: {record}",
            "Fix: rewrite or remove the file; blocks before this one were read",
        ],
    )


def _open(path: str) -> IO[bytes]:
    """The file's bytes, seekable (fastavro's block reader seeks): a compressed file
    (``.avro.gz``...) is decompressed into memory."""
    fo = open_input(path)
    if fo.seekable():
        return fo
    with fo:
        return io.BytesIO(fo.read())


def _header(fo: IO[bytes], path: str) -> Any:
    try:
        return fastavro.block_reader(fo)
    except Exception as exc:
        raise UserError.data_read(
            f"Not an Avro object container file, or its header is corrupt: "
            f"{type(exc).__name__}: {exc}",
            [f"File: {path}", "Fix: check that the file is Avro (it starts with Obj\\x01)"],
        ) from exc


def file_schema(path: str) -> TupleSchema:
    """The Drill columns of one Avro file, from its header alone."""
    with _open(path) as fo:
        reader = _header(fo, path)
        return avro_schema_to_drill(reader.writer_schema)


class AvroFormat(FormatPlugin):
    """Drill's ``avro`` plugin: the schema from the file's header, records as Arrow batches."""

    type_name = "avro"
    extensions = ("avro",)

    def discover_schema(
        self, files: Sequence[str], config: FormatConfig, options: Mapping[str, Any]
    ) -> TupleSchema:
        # The headers of the first files, merged as Parquet's footers are: a column some file
        # lacks is nullable (that file's rows have no value for it), types one type holds are
        # widened, and a type conflict between files fails only the queries that read it.
        paths = list(files)[: self.discovery_sample]
        return merge_file_schemas(
            ((path, file_schema(path)) for path in paths),
            lacking_optional=True,
        )

    def read_arrow(
        self,
        split: FileSplit,
        config: FormatConfig,
        options: Mapping[str, Any],
        columns: Sequence[str] | None,
        batch_rows: int,
    ) -> Iterator[pa.RecordBatch]:
        path = split.path
        with _open(path) as fo:
            blocks = _header(fo, path)
            writer = blocks.writer_schema
            table = avro_schema_to_drill(writer)
            if columns is None:
                chosen = list(table)
            else:
                wanted = set(columns)
                chosen = [c for c in table if c.name.lower() in wanted]
            if not chosen:
                yield from _counts(blocks, path)
                return
            if len(chosen) == len(table):
                yield from _batches(blocks, [_Column(c) for c in chosen], path)
                return
        # again from the start (a compressed stream cannot seek back), decoding only the
        # projected fields
        reader_schema = _reader_schema(writer, [c.name for c in chosen])
        with _open(path) as fo:
            blocks = fastavro.block_reader(fo, reader_schema)
            yield from _batches(blocks, [_Column(c) for c in chosen], path)


def _counts(blocks: Any, path: str) -> Iterator[pa.RecordBatch]:
    """Row counts from the block headers, no record decoded: batches of one null column."""
    it = iter(blocks)
    number = 0
    while True:
        number += 1
        try:
            block = next(it, None)
        except Exception as exc:
            raise _read_error(path, number, 1, exc) from exc
        if block is None:
            return
        if block.num_records:
            yield pa.RecordBatch.from_arrays([pa.nulls(block.num_records)], names=[ROWS_ONLY])


def _batches(blocks: Any, cols: list[_Column], path: str) -> Iterator[pa.RecordBatch]:
    """One Arrow batch per Avro block.

    The block's records (dicts of the projected fields) become one struct array in a single
    Arrow call, whose fields are the columns: no Python loop per value, except for the few
    types Arrow cannot take as fastavro gives them (uuids, maps, durations)."""
    struct = pa.struct([pa.field(c.name, c.build) for c in cols])
    schema = pa.schema([pa.field(c.name, c.final) for c in cols])
    fixes = [(c.name, c.fix) for c in cols if c.fix is not None]
    it = iter(blocks)
    number = 0  # the block being read, from 1
    record = 0  # records read before it
    while True:
        number += 1
        records: list[dict[str, Any]] = []
        try:
            block = next(it, None)
            if block is None:
                return
            records.extend(block)  # decodes the block; on a failure, holds the records before
        except Exception as exc:
            raise _read_error(path, number, record + len(records) + 1, exc) from exc
        record += len(records)
        if not records:
            continue
        for name, fix in fixes:
            for rec in records:
                value = rec[name]
                if value is not None:
                    rec[name] = fix(value)
        whole = pa.array(records, type=struct)
        arrays = [c.finish(whole.field(i)) for i, c in enumerate(cols)]
        yield pa.RecordBatch.from_arrays(arrays, schema=schema)
