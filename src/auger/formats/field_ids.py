"""The field ids Iceberg writes into its files, whatever their format, and columns read by them.

An Iceberg table names its columns by field id, and writes each id into the schema of every
file it writes: Parquet's ``field_id``, the ``field-id`` attribute of an Avro field (an array's
element, a map's key and value have ``element-id``, ``key-id``, ``value-id``), the
``iceberg.id`` attribute of an ORC type. Here each file's schema is seen as one Arrow schema
whose fields carry their ids as metadata (:data:`auger.formats.parquet_columns.FIELD_ID_KEYS`),
so the one column mapping of :mod:`auger.formats.parquet_columns` serves every format, and the
small files beside the data (Iceberg's delete files) are read by the ids of their columns.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.parquet_columns import ELEMENT, KEY, VALUE, field_id
from auger.formats.registry import get_format
from auger.storage.filesystem import open_random
from auger.storage.splits import FileSplit

__all__ = [
    "avro_schema",
    "file_schema",
    "open_file",
    "read_by_field_id",
]

#: The key the field id of an Avro or ORC file's column has in the Arrow schema made of it
#: (pyarrow gives ORC's type attributes as field metadata under their own names).
_ID_KEY = b"iceberg.id"

#: The Avro format as the ``avro`` plugin reads a file under no options of a workspace's.
_AVRO = FormatConfig("avro", "avro", ("avro",), {})


def open_file(path: str) -> pa.NativeFile:
    """The file for ranged reads: a local file as such, an object as its store reads it."""
    source = open_random(path)
    return pa.OSFile(source) if isinstance(source, str) else source


def _id(value: Any) -> dict[bytes, bytes] | None:
    return None if value is None else {_ID_KEY: str(value).encode()}


def _avro_skeleton(writer: Mapping[str, Any]) -> pa.Schema:
    """The names and field ids of an Avro record schema as an Arrow schema (records as
    structs, arrays as lists, maps as maps, other types as null: only names and ids are
    matched)."""
    named: dict[str, Any] = {}

    def type_of(schema: Any) -> pa.DataType:
        if isinstance(schema, str):
            schema = named.get(schema, schema)
        if isinstance(schema, list):  # ["null", T]: T
            others = [s for s in schema if s != "null"]
            return type_of(others[0]) if len(others) == 1 else pa.null()
        if not isinstance(schema, dict):
            return pa.null()
        kind = schema.get("type")
        if isinstance(kind, (dict, list)):
            return type_of(kind)
        if kind in ("record", "enum", "fixed") and "name" in schema:
            named[schema["name"]] = schema
        if kind == "record":
            return pa.struct([field(f) for f in schema.get("fields", ())])
        if kind == "array" and schema.get("logicalType") == "map":
            # Iceberg's map of any key type: an array of key-value records
            entry = type_of(schema.get("items"))
            if pa.types.is_struct(entry) and entry.num_fields == 2:
                key = entry.field(0).with_name(KEY).with_nullable(False)
                return pa.map_(key, entry.field(1).with_name(VALUE))
        if kind == "array":
            return pa.list_(child(ELEMENT, schema.get("items"), schema.get("element-id")))
        if kind == "map":
            key = pa.field(KEY, pa.string(), False, _id(schema.get("key-id")))
            return pa.map_(key, child(VALUE, schema.get("values"), schema.get("value-id")))
        return pa.null()

    def child(name: str, schema: Any, value: Any) -> pa.Field:
        return pa.field(name, type_of(schema), metadata=_id(value))

    def field(f: Mapping[str, Any]) -> pa.Field:
        return pa.field(f["name"], type_of(f["type"]), metadata=_id(f.get("field-id")))

    if isinstance(writer, dict) and "name" in writer:
        named[writer["name"]] = writer
    return pa.schema([field(f) for f in writer.get("fields", ())])


def avro_schema(path: str) -> pa.Schema:
    """An Avro file's columns (their names and field ids, from the writer schema in its
    header) as an Arrow schema: records as structs, arrays as lists, maps as maps (Iceberg's
    arrays of key-value records too), other types as null."""
    # deferred: only a table with Avro files needs it
    import fastavro

    try:
        with open_file(path) as fo:
            header = fastavro.block_reader(fo)
            writer = json.loads(header.metadata["avro.schema"])
    except UserError:
        raise
    except Exception as exc:
        raise UserError.data_read(
            "File of an Iceberg table is not a readable Avro file",
            [f"File: {path}", f"Reason: {type(exc).__name__}: {exc}"],
        ) from exc
    return _avro_skeleton(writer)


def _orc_error(path: str, exc: BaseException) -> UserError:
    return UserError.data_read("Error reading ORC data", [f"File: {path}", f"Reason: {exc}"])


def file_schema(path: str, fmt: str) -> pa.Schema:
    """The columns of a file in ``fmt`` (``parquet``, ``avro``, ``orc``) with their field
    ids, as Arrow fields' metadata (an Avro file's: names and ids only)."""
    if fmt == "avro":
        return avro_schema(path)
    try:
        with open_file(path) as fo:
            if fmt == "orc":
                # deferred: only a table with ORC files needs it
                import pyarrow.orc as orc

                return orc.ORCFile(fo).schema
            # deferred: Parquet's reader, for the delete files beside the data
            import pyarrow.parquet as pq

            return pq.read_schema(fo)
    except (pa.ArrowException, OSError) as exc:
        raise UserError.data_read(
            f"Error reading {fmt.upper() if fmt == 'orc' else 'Parquet'} file",
            [f"File: {path}", f"Reason: {exc}"],
        ) from exc


def _read(path: str, fmt: str, names: Sequence[str]) -> pa.Table:
    """The columns ``names`` of a file (a small one: read whole), as its reader types them."""
    if fmt == "avro":
        wanted = [n.lower() for n in names]
        batches = list(get_format("avro").read_arrow(FileSplit(path), _AVRO, {}, wanted, 65536))
        if not batches:
            return pa.table([pa.array([], pa.null()) for _ in names], names=list(names))
        return pa.Table.from_batches(batches).select(list(names))
    try:
        with open_file(path) as fo:
            if fmt == "orc":
                # deferred: only a table with ORC files needs it
                import pyarrow.orc as orc

                return orc.ORCFile(fo).read(columns=list(names))
            # deferred: Parquet's reader, for the delete files beside the data
            import pyarrow.parquet as pq

            return pq.read_table(fo, columns=list(names))
    except (pa.ArrowException, OSError) as exc:
        raise UserError.data_read(
            f"Error reading {fmt.upper() if fmt == 'orc' else 'Parquet'} file",
            [f"File: {path}", f"Reason: {exc}"],
        ) from exc


def read_by_field_id(path: str, fmt: str, wanted: Sequence[tuple[int, str]]) -> pa.Table:
    """The columns ``wanted`` (field id, name) of the file at ``path`` in ``fmt``, under those
    names. A column is found by its field id where the file has ids (its name may be one the
    table renamed since), else by its name.

    Raises:
        UserError: DATA_READ when the file lacks one of them, or cannot be read.
    """
    schema = file_schema(path, fmt)
    by_id = {i: f.name for f in schema if (i := field_id(f)) is not None}
    by_name = {n.lower(): n for n in schema.names}
    names = []
    for want_id, name in wanted:
        found = by_id.get(want_id) if by_id else None
        found = found or by_name.get(name.lower())
        if found is None:
            raise UserError.data_read(
                "Iceberg delete file lacks a column it must have",
                [f"File: {path}", f"Column: {name} (field id {want_id})"],
            )
        names.append(found)
    table = _read(path, fmt, names)
    return pa.table(table.columns, names=[n for _, n in wanted])
