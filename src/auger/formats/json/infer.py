"""JSON files: newline-delimited objects or one top-level array, nested to any depth.

Drill's type rules: numbers without a decimal point are BIGINT, with one DOUBLE; strings VARCHAR;
booleans BIT; objects maps; arrays REPEATED. ``store.json.all_text_mode`` reads every scalar as
VARCHAR and ``store.json.read_numbers_as_double`` every number as DOUBLE.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.base import FormatPlugin, conflict_error, merge_schemas, open_input, widen
from auger.scan.spec import FileSplit
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.arrow import schema_to_arrow

__all__ = ["JsonFormat", "infer_value"]


def infer_value(name: str, value: Any, all_text: bool, as_double: bool) -> ColumnMetadata:
    """The Drill column type of one JSON value."""
    if value is None:
        return ColumnMetadata(name, MinorType.NULL)
    if isinstance(value, dict):
        members = TupleSchema()
        for k, v in value.items():
            members.add(infer_value(k, v, all_text, as_double)) if k not in members else None
        return ColumnMetadata(name, MinorType.MAP, DataMode.REQUIRED, members.columns())
    if isinstance(value, list):
        elem: ColumnMetadata | None = None
        for item in value:
            col = infer_value(name, item, all_text, as_double)
            elem = col if elem is None else widen(elem, col)
            if elem is None:
                raise ValueError(f"array of mixed types in field {name}")
        if elem is None or elem.type is MinorType.NULL:
            elem = ColumnMetadata(name, MinorType.VARCHAR if all_text else MinorType.INT)
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


def _finalize(col: ColumnMetadata) -> ColumnMetadata:
    """Columns seen only as null read as nullable INT (Drill's rule); maps are finalized inside."""
    if col.type is MinorType.NULL:
        return ColumnMetadata(col.name, MinorType.INT)
    if col.type is MinorType.MAP:
        return col.with_children(_finalize(c) for c in col.children or ())
    return col


def _records(path: str, skip_invalid: bool) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, object) pairs of a file of JSON lines or one JSON array of objects."""
    try:
        with open_input(path) as fh:
            data = fh.read()
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError.data_read(
            "JSON file is not valid UTF-8", [f"File: {path}", f"Byte offset: {exc.start}"]
        ) from exc
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _json_error(path, exc) from exc
        for i, item in enumerate(items):
            if isinstance(item, dict):
                yield i + 1, item
        return
    decoder = json.JSONDecoder()
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos] in " \t\r\n":
            pos += 1
        if pos >= n:
            return
        try:
            obj, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            if skip_invalid:
                nl = text.find("\n", pos)
                pos = n if nl < 0 else nl + 1
                continue
            raise _json_error(path, exc) from exc
        line = text.count("\n", 0, pos) + 1
        if isinstance(obj, dict):
            yield line, obj
        elif not skip_invalid:
            raise UserError.data_read(
                f"Expected a JSON object but found {type(obj).__name__}",
                [f"File: {path}", f"Line: {line}"],
            )
        pos = end


def _json_error(path: str, exc: json.JSONDecodeError) -> UserError:
    return UserError.data_read(
        f"Error parsing JSON: {exc.msg}",
        [
            f"File: {path}",
            f"Line: {exc.lineno}",
            f"Column: {exc.colno}",
            "Fix: repair the document, or set store.json.reader.skip_invalid_records = true",
        ],
    )


class JsonFormat(FormatPlugin):
    type_name = "json"
    extensions = ("json",)

    def discover_schema(
        self, files: Sequence[str], config: FormatConfig, options: Mapping[str, Any]
    ) -> TupleSchema:
        all_text = bool(options.get("store.json.all_text_mode", False))
        as_double = bool(options.get("store.json.read_numbers_as_double", False))
        skip = bool(options.get("store.json.reader.skip_invalid_records", False))
        sample = int(options.get("auger.scan.json_sample_rows", 1000))
        schema = TupleSchema()
        for path in files:
            for count, (line, obj) in enumerate(_records(path, skip)):
                if count >= sample:
                    break
                try:
                    row = infer_value("", obj, all_text, as_double)
                except ValueError as exc:
                    raise UserError.data_read(
                        str(exc), [f"File: {path}", f"Line: {line}"]
                    ) from None
                merged = merge_schemas(schema, row.schema)
                if merged is None:
                    for col in row.schema:
                        mine = schema.column(col.name)
                        if mine is not None and widen(mine, col) is None:
                            raise conflict_error(path, col.name, mine, col)
                    raise UserError.data_read("Incompatible JSON types", [f"File: {path}"])
                schema = merged
        return TupleSchema(
            _finalize(c).with_mode(DataMode.OPTIONAL)
            if c.mode is DataMode.REQUIRED and c.type is not MinorType.MAP
            else _finalize(c)
            for c in schema
        )

    def read_arrow(
        self,
        split: FileSplit,
        config: FormatConfig,
        options: Mapping[str, Any],
        columns: Sequence[str] | None,
        batch_rows: int,
    ) -> Iterator[pa.RecordBatch]:
        skip = bool(options.get("store.json.reader.skip_invalid_records", False))
        target = options.get("__table_schema__")
        schema = schema_to_arrow(TupleSchema.parse(target)) if target else None
        buf: list[dict[str, Any]] = []
        first_line = 1
        for line, obj in _records(split.path, skip):
            if not buf:
                first_line = line
            buf.append(obj)
            if len(buf) >= batch_rows:
                yield _to_batch(buf, schema, split.path, first_line)
                buf = []
        if buf:
            yield _to_batch(buf, schema, split.path, first_line)


def _to_batch(
    rows: list[dict[str, Any]], schema: pa.Schema | None, path: str, first_line: int
) -> pa.RecordBatch:
    try:
        if schema is not None:
            lowered = [{k.lower(): v for k, v in r.items()} for r in rows]
            nullable = pa.schema([f.with_nullable(True) for f in schema])
            renamed = pa.schema([f.with_name(f.name.lower()) for f in nullable])
            table = pa.Table.from_pylist(lowered, schema=renamed)
            table = table.rename_columns([f.name for f in schema])
        else:
            table = pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as exc:
        raise UserError.data_read(
            f"JSON value does not match the column type: {exc}",
            [
                f"File: {path}",
                f"Line: {first_line} (batch start)",
                "Fix: set store.json.all_text_mode = true, or cast the column",
            ],
        ) from exc
    return (
        table.combine_chunks().to_batches()[0] if table.num_rows else pa.RecordBatch.from_pylist([])
    )
