"""Delta tables: one version's data files and schema, from the transaction log by deltalake.

The log (``_delta_log``, checkpoints included) says which files make up each version; a file a
later commit removed stays on disk, so only the log's list is read. Time travel takes Drill's
options: ``version`` (a version number) and ``timestamp`` (milliseconds since the epoch: the
latest version committed by then).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import unquote

import numpy as np
import pyarrow as pa

from auger.errors import UserError
from auger.formats.lakehouse.snapshot import TableSnapshot, first_line, number_option
from auger.formats.lakehouse.stores import delta_storage_options, same_store_path
from auger.formats.parquet_columns import ELEMENT, KEY, VALUE, PartitionConstants
from auger.formats.parquet_deletes import RowDeletes
from auger.storage import filesystem as fs
from auger.storage.selection import FileStatus
from auger.types import TupleSchema
from auger.types.arrow import schema_from_arrow

__all__ = ["current_schema", "data_file_path", "delta_snapshot", "open_version"]


def _open(location: str, options: Mapping[str, Any]) -> Any:
    # deferred: loads deltalake (heavy)
    from deltalake import DeltaTable  # optional dependency, loaded when a table is read

    version = number_option(options, "version", "Delta")
    timestamp = number_option(options, "timestamp", "Delta")
    if version is not None and timestamp is not None:
        raise UserError.validation(
            "Delta options version and timestamp cannot be used together", [f"Table: {location}"]
        )
    store = delta_storage_options(location)
    try:
        table = DeltaTable(location, version=version, storage_options=store or None)
    except Exception as exc:
        if version is not None:
            raise UserError.validation(
                f"Version [{version}] not found in Delta table [{location}]",
                [f"Latest version: {_latest(location, store)}"],
            ) from None
        raise UserError.validation(
            f"Delta table [{location}] has a transaction log that cannot be read",
            [f"Log: {fs.join(location, '_delta_log')}", f"Reason: {first_line(exc)}"],
        ) from None
    if timestamp is not None:
        when = datetime.fromtimestamp(timestamp / 1000, tz=UTC)
        try:
            table.load_as_version(when)
        except Exception:
            raise UserError.validation(
                f"Delta table [{location}] has no version as of [{timestamp}]",
                ["timestamp is in milliseconds since the epoch"],
            ) from None
    return table


def _latest(location: str, store: dict[str, str]) -> str:
    # deferred: loads deltalake (heavy)
    from deltalake import DeltaTable

    try:
        return str(DeltaTable(location, storage_options=store or None).version())
    except Exception:
        return "unknown"


def open_version(location: str, version: int) -> Any:
    """The Delta table at ``location`` as of ``version`` (one the planner already checked)."""
    return _open(location, {"version": version})


def _check_features(table: Any, location: str) -> None:
    protocol = table.protocol()
    if protocol.min_reader_version > 3:
        raise UserError.unsupported(
            f"Delta table [{location}] needs reader version {protocol.min_reader_version}; "
            "auger reads versions up to 3"
        )


def _deleted_positions(table: Any, location: str) -> dict[str, list[int]]:
    """The positions each file's deletion vector deletes, by the path a scan reads (none
    unless the table's protocol has deletion vectors)."""

    if "deletionVectors" not in set(table.protocol().reader_features or ()):
        return {}
    vectors = pa.table(table.deletion_vectors())
    out: dict[str, list[int]] = {}
    for uri, keep in zip(
        vectors.column("filepath").to_pylist(),
        vectors.column("selection_vector").to_pylist(),
        strict=True,
    ):
        # the vector keeps rows (True) up to the last deleted one; rows past it are kept
        gone = np.flatnonzero(~np.asarray(keep, dtype=bool))
        if len(gone):
            out[same_store_path(unquote(uri), location)] = gone.tolist()
    return out


def _column_mapping(table: Any) -> tuple[tuple[int | None, str, str], ...]:
    """The physical name (mode ``name``) or field id (mode ``id``) of each column, when the
    table maps its columns (struct members too, those in lists and maps included, by dotted
    paths); empty when it does not."""
    mode = (table.metadata().configuration or {}).get("delta.columnMapping.mode") or "none"
    if mode == "none":
        return ()
    fields = json.loads(table.schema().to_json())["fields"]
    return tuple(_mapped(fields, mode, "", ""))


def _mapped(
    fields: list[dict[str, Any]], mode: str, physical_prefix: str, prefix: str
) -> list[tuple[int | None, str, str]]:
    """Each column, and each member of a struct column (dotted paths; a struct inside a list
    or map too, ``l.element.x``), as column mapping names it in the files."""
    out: list[tuple[int | None, str, str]] = []
    for f in fields:
        meta = f.get("metadata") or {}
        field_id = meta.get("delta.columnMapping.id") if mode == "id" else None
        physical = physical_prefix + (meta.get("delta.columnMapping.physicalName") or f["name"])
        logical = prefix + f["name"]
        out.append((None if field_id is None else int(field_id), physical, logical))
        out.extend(_inside(f["type"], mode, physical, logical))
    return out


def _inside(t: Any, mode: str, physical: str, logical: str) -> list[tuple[int | None, str, str]]:
    """The struct members inside a type (a struct's, or those of the structs a list or map
    holds), as :func:`_mapped` gives them."""
    if not isinstance(t, dict):
        return []  # a primitive type, by its name
    kind = t.get("type")
    if kind == "struct":
        return _mapped(t["fields"], mode, physical + ".", logical + ".")
    if kind == "array":
        step = f".{ELEMENT}"
        return _inside(t["elementType"], mode, physical + step, logical + step)
    if kind == "map":
        key, value = f".{KEY}", f".{VALUE}"
        return _inside(t["keyType"], mode, physical + key, logical + key) + _inside(
            t["valueType"], mode, physical + value, logical + value
        )
    return []


def current_schema(location: str) -> TupleSchema:
    """The table's current columns, from its log alone (partition columns included)."""

    return schema_from_arrow(pa.schema(_open(location, {}).schema().to_arrow()))


def data_file_path(location: str, path: str) -> str:
    """The path a scan reads of a data file the log names (relative to the table, as a URI:
    ``%20`` for a space)."""
    path = unquote(path)
    full = path if "://" in path or path.startswith("/") else fs.join(location, path)
    return same_store_path(full, location)


def _as_text(value: Any) -> str | None:
    """A partition value as text the Parquet reader casts to the column's type (the log
    reader gives dates, times and numbers as Python values)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, date):  # datetime too
        return value.isoformat()
    return str(value)


def delta_snapshot(location: str, options: Mapping[str, Any]) -> TableSnapshot:
    """The data files and schema of the Delta table at ``location`` at the version the
    options choose (the latest by default).

    Raises:
        UserError: VALIDATION for a version that does not exist or an unreadable log;
            UNSUPPORTED_OPERATION for features auger does not apply (column mapping of a
            struct inside a list or map, reader versions past 3).
    """

    table = _open(location, options)
    _check_features(table, location)
    actions = pa.table(table.get_add_actions(flatten=True)).to_pydict()
    files = []
    for path, size, mtime in zip(
        actions["path"], actions["size_bytes"], actions["modification_time"], strict=True
    ):
        files.append(FileStatus(data_file_path(location, path), int(size), int(mtime) / 1000))
    arrow = pa.schema(table.schema().to_arrow())
    partitions = list(table.metadata().partition_columns)
    constants = None
    if partitions:
        values = {
            f.path: [_as_text(actions[f"partition.{p}"][i]) for p in partitions]
            for i, f in enumerate(files)
        }
        constants = PartitionConstants(pa.schema([arrow.field(p) for p in partitions]), values)
    deleted = _deleted_positions(table, location)
    return TableSnapshot(
        "delta",
        location,
        int(table.version()),
        tuple(sorted(files, key=lambda f: f.path)),
        schema_from_arrow(arrow),
        partition_values=constants,
        column_mapping=_column_mapping(table),
        row_deletes=RowDeletes(positions=deleted) if deleted else None,
    )
