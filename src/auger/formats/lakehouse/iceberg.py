"""Iceberg tables: the current (or a chosen) snapshot's data files and schema, by pyiceberg.

The table's metadata file is found as Drill's Iceberg plugin finds it, without a catalog: the
version ``metadata/version-hint.text`` names, else the metadata file of the highest version in
``metadata/``. pyiceberg reads that file and the manifests and plans the snapshot's files (a
snapshot with equality deletes, which pyiceberg does not plan, is planned from its manifests by
:mod:`auger.formats.lakehouse.iceberg_deletes`); the data files themselves go through auger's
own scan, which leaves out the rows the delete files delete: Parquet files through the Parquet
reader, Avro and ORC data files by their own readers (:mod:`.data_files`).

Time travel takes Drill's table-function options (snake-cased by the table function):
``snapshotId``, ``snapshotAsOfTime`` (milliseconds since the epoch), and ``fromSnapshotId`` with
``toSnapshotId`` (default: the current snapshot) for the files appended in between.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from auger.errors import UserError
from auger.formats.lakehouse.iceberg_columns import column_mapping, name_ids
from auger.formats.lakehouse.iceberg_deletes import live_entries, plan_with_deletes
from auger.formats.lakehouse.snapshot import TableSnapshot, first_line, number_option
from auger.formats.lakehouse.stores import iceberg_properties, same_store_path
from auger.formats.parquet_deletes import EqualityDeleteFile, FileDeletes, RowDeletes
from auger.storage import filesystem as fs
from auger.storage.selection import FileStatus
from auger.types import TupleSchema
from auger.types.arrow import schema_from_arrow

__all__ = ["METADATA_TABLES", "current_schema", "iceberg_snapshot", "metadata_table"]

#: Drill's metadata tables, ``t#snapshots`` ..., as pyiceberg's inspect calls name them.
METADATA_TABLES = ("snapshots", "history", "files", "manifests", "partitions", "entries")

_VERSION = re.compile(r"^v?(\d+)(?:-[^.]*)?\.metadata\.json$")


def current_metadata_file(location: str) -> str:
    """The metadata file of the table's current version.

    Raises:
        UserError: VALIDATION when the table has no readable metadata file.
    """
    metadata = fs.join(location, "metadata")
    hint = fs.join(metadata, "version-hint.text")
    if fs.isfile(hint):
        text = fs.read_text(hint).strip()
        if text.isdigit():
            named = fs.join(metadata, f"v{text}.metadata.json")
            if fs.isfile(named):
                return named
    versions: list[tuple[int, str]] = []
    for entry in fs.list_dir(metadata):
        m = _VERSION.match(fs.basename(entry.path))
        if m and not entry.is_dir:
            versions.append((int(m.group(1)), entry.path))
    if not versions:
        raise UserError.validation(
            f"Iceberg table [{location}] has no metadata file",
            [f"Looked in: {metadata}", "Fix: point the query at the table's root directory"],
        )
    return max(versions)[1]


def load_table(location: str) -> Any:
    """The pyiceberg table at ``location``, as of its current metadata file."""
    # deferred: loads pyiceberg and more (heavy)
    from pyiceberg.table import StaticTable  # optional dependency, loaded when a table is read

    path = current_metadata_file(location)
    try:
        return StaticTable.from_metadata(path, properties=iceberg_properties(location))
    except UserError:
        raise
    except NotImplementedError as exc:
        raise UserError.unsupported(
            f"Iceberg table [{location}] uses a feature auger cannot read: {exc}",
            [f"Metadata file: {path}"],
        ) from None
    except Exception as exc:
        raise UserError.validation(
            f"Iceberg table [{location}] has a metadata file that cannot be read",
            [f"Metadata file: {path}", f"Reason: {first_line(exc)}"],
        ) from None


def _snapshot_id(table: Any, location: str, options: Mapping[str, Any]) -> int | None:
    """The snapshot the options choose (None: the current one, or an empty table)."""
    snapshot_id = number_option(options, "snapshot_id", "Iceberg")
    as_of = number_option(options, "snapshot_as_of_time", "Iceberg")
    if snapshot_id is not None and as_of is not None:
        raise UserError.validation(
            "Iceberg options snapshotId and snapshotAsOfTime cannot be used together",
            [f"Table: {location}"],
        )
    if snapshot_id is not None:
        if table.snapshot_by_id(snapshot_id) is None:
            raise UserError.validation(
                f"Snapshot [{snapshot_id}] not found in Iceberg table [{location}]",
                [f"Known snapshots: {_known(table)}"],
            )
        return snapshot_id
    if as_of is not None:
        earlier = [e for e in table.metadata.snapshot_log if e.timestamp_ms <= as_of]
        if not earlier:
            raise UserError.validation(
                f"Iceberg table [{location}] has no snapshot as of [{as_of}]",
                ["snapshotAsOfTime is in milliseconds since the epoch"],
            )
        return int(max(earlier, key=lambda e: e.timestamp_ms).snapshot_id)
    current = table.current_snapshot()
    return None if current is None else int(current.snapshot_id)


def _known(table: Any) -> str:
    ids = [str(s.snapshot_id) for s in table.metadata.snapshots]
    return ", ".join(ids[-10:]) or "none"


def _file_status(path: str, size: int, location: str) -> FileStatus:
    """A data file as a scan lists it. Iceberg's data files never change once written: a
    local file's modification time is looked up (the ``lmt`` column shows it); an object's is
    not asked for, one request a file, and its size is the manifest's."""
    path = same_store_path(path, location)
    if fs.is_uri(path):
        return FileStatus(path, size, 0.0)
    info = fs.file_info(path)
    if info is None:
        raise UserError.validation(
            f"Data file [{path}] of Iceberg table [{location}] is missing",
            ["Fix: restore the file, or roll the table back to a snapshot that does not use it"],
        )
    return FileStatus(path, size or info.size, info.mtime)


def _schema_of(table: Any, snapshot_id: int | None) -> Any:
    """The pyiceberg schema of the snapshot (the table's current one for the current
    snapshot)."""
    schema = table.schema()
    current = table.current_snapshot()
    if snapshot_id is not None and (current is None or snapshot_id != current.snapshot_id):
        # an earlier snapshot: its own schema (a later change, say a rename, committed no
        # snapshot of its own, so the current snapshot still names the schema before it)
        snap = table.snapshot_by_id(snapshot_id)
        if snap is not None and snap.schema_id is not None:
            schema = table.schemas().get(snap.schema_id, schema)
    return schema


def table_schema(table: Any, snapshot_id: int | None) -> TupleSchema:
    """The schema of the snapshot, in Drill's types."""
    # deferred: loads pyiceberg and more (heavy)
    from pyiceberg.io.pyarrow import schema_to_pyarrow

    arrow = schema_to_pyarrow(_schema_of(table, snapshot_id), include_field_ids=False)
    return schema_from_arrow(arrow)


def _snapshot(
    table: Any,
    location: str,
    snapshot_id: int | None,
    files: list[FileStatus],
    deletes: dict[str, FileDeletes] | None = None,
    formats: dict[str, str] | None = None,
) -> TableSnapshot:
    mapping = column_mapping(table, _schema_of(table, snapshot_id), location)
    return TableSnapshot(
        "iceberg",
        location,
        snapshot_id,
        tuple(files),
        table_schema(table, snapshot_id),
        column_mapping=mapping,
        row_deletes=RowDeletes(files=deletes) if deletes else None,
        file_formats=formats or {},
        name_mapping=name_ids(table, location) if mapping else {},
    )


def current_schema(location: str) -> TupleSchema:
    """The table's current columns, from its metadata file alone."""
    return table_schema(load_table(location), None)


def iceberg_snapshot(location: str, options: Mapping[str, Any]) -> TableSnapshot:
    """The data files and schema the options choose of the Iceberg table at ``location``.

    Raises:
        UserError: VALIDATION for a snapshot that does not exist or unreadable metadata;
            UNSUPPORTED_OPERATION for what auger does not apply (renamed struct members,
            equality deletes keyed by a struct member).
    """
    table = load_table(location)
    snapshot_id = _snapshot_id(table, location, options)
    from_id = number_option(options, "from_snapshot_id", "Iceberg")
    to_id = number_option(options, "to_snapshot_id", "Iceberg")
    if from_id is not None or to_id is not None:
        return _appended(table, location, from_id, to_id if to_id is not None else snapshot_id)
    files: list[FileStatus] = []
    deletes: dict[str, FileDeletes] = {}
    formats: dict[str, str] = {}
    if snapshot_id is not None:
        schema = _schema_of(table, snapshot_id)
        for data_file, delete_files in _plan_files(table, location, snapshot_id):
            kind = _data_format(data_file.file_format, data_file.file_path, location)
            status = _file_status(data_file.file_path, data_file.file_size_in_bytes, location)
            files.append(status)
            if kind != "parquet":
                formats[status.path] = kind
            if delete_files:
                deletes[status.path] = _file_deletes(
                    data_file.file_path, delete_files, schema, location, snapshot_id
                )
    return _snapshot(table, location, snapshot_id, files, deletes, formats)


def _plan_files(table: Any, location: str, snapshot_id: int) -> list[tuple[Any, list[Any]]]:
    """The snapshot's data files, each with the delete files that apply to it: pyiceberg's
    plan, or (a snapshot with equality deletes, which pyiceberg does not plan) the plan of
    the snapshot's manifests by Iceberg's rules."""
    try:
        tasks = table.scan(snapshot_id=snapshot_id).plan_files()
    except ValueError as exc:
        if "equality delete" not in str(exc).lower():
            raise
        return plan_with_deletes(table, snapshot_id)
    return [(task.file, list(task.delete_files)) for task in tasks]


def _file_deletes(
    name: str, delete_files: Any, schema: Any, location: str, snapshot_id: int
) -> FileDeletes:
    """The delete files of one data file (``name``: its path as the table names it), sorted
    by path; an equality delete file with its key columns under the snapshot's names.

    Raises:
        UserError: UNSUPPORTED_OPERATION for delete files keyed by a column that is not a
            top-level column of the snapshot's schema.
    """
    # deferred: loads pyiceberg and more (heavy)
    from pyiceberg.manifest import DataFileContent

    top = {int(f.field_id): f.name for f in schema.fields}
    positions: list[str] = []
    equality: list[EqualityDeleteFile] = []
    formats: dict[str, str] = {}
    for d in sorted(delete_files, key=lambda d: d.file_path):
        path = same_store_path(d.file_path, location)
        kind = _data_format(d.file_format, d.file_path, location, "delete")
        if kind != "parquet":
            formats[path] = kind
        if d.content == DataFileContent.POSITION_DELETES:
            positions.append(path)
            continue
        ids = tuple(int(i) for i in d.equality_ids or ())
        if not ids or any(i not in top for i in ids):
            raise UserError.unsupported(
                f"Iceberg table [{location}] snapshot [{snapshot_id}] has equality deletes keyed "
                "by a column that is not a top-level column of the table, which auger does "
                "not apply yet",
                [
                    f"Delete file: {path}",
                    f"Field ids: {', '.join(map(str, ids)) or 'none'}",
                    "Fix: compact the table (rewrite its data files) and query it again",
                ],
            )
        equality.append(EqualityDeleteFile(path, ids, tuple(top[i] for i in ids)))
    return FileDeletes(name, tuple(positions), tuple(equality), formats)


#: the formats Iceberg writes data and delete files in, all of which auger reads
_DATA_FORMATS = ("parquet", "avro", "orc")


def _format_name(file_format: Any) -> str:
    """A manifest's file format (pyiceberg's ``FileFormat``, or its name) in lower case."""
    return str(getattr(file_format, "value", file_format)).lower()


def _data_format(file_format: Any, file_path: str, location: str, what: str = "data") -> str:
    """The format of a data file (or, ``what`` ``delete``, a delete file): ``parquet``,
    ``avro`` or ``orc``.

    Raises:
        UserError: UNSUPPORTED_OPERATION for a format Iceberg does not define for such files.
    """
    fmt = _format_name(file_format)
    if fmt not in _DATA_FORMATS:
        raise UserError.unsupported(
            f"Iceberg table [{location}] has a {what} file in {fmt.upper()}, which is not a "
            f"format of Iceberg {what} files auger reads",
            [f"File: {same_store_path(file_path, location)}", "Readable: Parquet, Avro, ORC"],
        )
    return fmt


def _appended(table: Any, location: str, from_id: int | None, to_id: int | None) -> TableSnapshot:
    """The files appended after snapshot ``from_id`` up to snapshot ``to_id`` (Drill's
    incremental read)."""
    if from_id is None:
        raise UserError.validation(
            "Iceberg option toSnapshotId needs fromSnapshotId", [f"Table: {location}"]
        )
    for sid in (from_id, to_id):
        if sid is not None and table.snapshot_by_id(sid) is None:
            raise UserError.validation(
                f"Snapshot [{sid}] not found in Iceberg table [{location}]",
                [f"Known snapshots: {_known(table)}"],
            )
    if to_id is None:
        return _snapshot(table, location, None, [])
    ancestors: list[int] = []
    snap = table.snapshot_by_id(to_id)
    while snap is not None and snap.snapshot_id != from_id:
        ancestors.append(int(snap.snapshot_id))
        snap = table.snapshot_by_id(snap.parent_snapshot_id) if snap.parent_snapshot_id else None
    if snap is None:
        raise UserError.validation(
            f"Snapshot [{from_id}] is not an ancestor of snapshot [{to_id}] in Iceberg table "
            f"[{location}]"
        )
    wanted = set(ancestors)
    files: list[FileStatus] = []
    formats: dict[str, str] = {}
    for entry in live_entries(table, to_id):
        f = entry.data_file
        if entry.status.value != 1 or entry.snapshot_id not in wanted or f.content.value != 0:
            continue  # not a data file added by a snapshot in between
        kind = _data_format(f.file_format, f.file_path, location)
        files.append(_file_status(f.file_path, f.file_size_in_bytes, location))
        if kind != "parquet":
            formats[files[-1].path] = kind
    return _snapshot(table, location, to_id, files, formats=formats)


def metadata_table(location: str, name: str) -> Any:
    """One of Drill's Iceberg metadata tables (``snapshots``, ``history``, ``files``,
    ``manifests``, ``partitions``, ``entries``) of the table's current snapshot, as Arrow.

    Raises:
        UserError: VALIDATION for a name that is none of them; UNSUPPORTED_OPERATION for
            manifests the table cannot be listed from (``entries`` needs every data file's
            column statistics, which Iceberg lets a writer leave out).
    """
    if name.lower() not in METADATA_TABLES:
        raise UserError.validation(
            f"Unknown Iceberg metadata table [{name}]",
            [f"Known: {', '.join(METADATA_TABLES)}"],
        )
    table = load_table(location)
    try:
        return getattr(table.inspect, name.lower())()
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise UserError.unsupported(
            f"Iceberg table [{location}] cannot list its metadata table [{name.lower()}]",
            [
                f"Reason: {first_line(exc)}",
                "A data file without the column statistics it lists may be the cause",
            ],
        ) from None
