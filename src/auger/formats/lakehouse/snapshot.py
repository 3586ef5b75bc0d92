"""What a lakehouse table's metadata says a query reads: its data files and its schema.

Iceberg and Delta tables keep, beside their data files, a log of which files make up each
version of the table. A directory listing cannot tell a live data file from one a later commit
removed, so a table of either kind is read from its metadata: the files of one snapshot (or
version), with the table's own schema, never from a walk of its directory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from auger.errors import UserError
from auger.formats.parquet_columns import PartitionConstants
from auger.formats.parquet_deletes import RowDeletes
from auger.storage.selection import FileSelection, FileStatus
from auger.types import TupleSchema

__all__ = ["TableSelection", "TableSnapshot", "first_line", "number_option", "table_option"]


def table_option(options: Mapping[str, Any], name: str) -> Any:
    """The option ``name`` however it is spelled: Drill's ``snapshotId`` as a table function
    gives it (``snapshot_id``), or as a data source option (``snapshotid``)."""
    wanted = name.replace("_", "").lower()
    for key, value in options.items():
        if key.replace("_", "").lower() == wanted and value is not None and value != "":
            return value
    return None


def number_option(options: Mapping[str, Any], name: str, table_kind: str) -> int | None:
    """The whole-number option ``name`` (any spelling, see :func:`table_option`), or None.

    Raises:
        UserError: VALIDATION naming the ``table_kind`` (``Iceberg``, ``Delta``) option when
            its value is no number.
    """
    value = table_option(options, name)
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise UserError.validation(
            f"{table_kind} option [{name}] takes a number, not [{value}]"
        ) from None


def first_line(exc: BaseException) -> str:
    """A library's error as one line of an error's context (its first, at most 300 chars)."""
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


@dataclass(frozen=True)
class TableSnapshot:
    """The data files and schema of one snapshot (Iceberg) or version (Delta) of a table."""

    kind: str  # "iceberg" or "delta"
    location: str
    #: the snapshot id (Iceberg) or version number (Delta) read
    version: int | None
    files: tuple[FileStatus, ...]
    #: the table's columns, in its own order and with its types
    schema: TupleSchema
    #: the format of the data files (``parquet``)
    data_format: str = "parquet"
    #: partition columns whose values the table's log keeps, not its files (Delta)
    partition_values: PartitionConstants | None = None
    #: how the data files name the table's columns, when not by the table's own names:
    #: (field id or None, name in the files, the table's name) per top-level column (see
    #: :data:`auger.formats.parquet.COLUMN_MAPPING`); empty when the names are the table's
    column_mapping: tuple[tuple[int | None, str, str], ...] = field(default=())
    #: rows deleted from the data files without rewriting them (Iceberg's merge-on-read
    #: deletes, Delta's deletion vectors)
    row_deletes: RowDeletes | None = None
    #: the data files not in ``data_format``, by path: their format (an Iceberg table's
    #: ``avro`` and ``orc`` files); the table's own format reads such a table's files
    file_formats: Mapping[str, str] = field(default_factory=dict)
    #: with a column mapping: every name a column had, by which files written without field
    #: ids are read (Iceberg's name mapping, see
    #: :class:`auger.formats.parquet_columns.ColumnMapping`)
    name_mapping: Mapping[str, int] = field(default_factory=dict)

    def selection(self) -> TableSelection:
        return TableSelection(self.location, self.files, True, (), self)


@dataclass(frozen=True)
class TableSelection(FileSelection):
    """A table's data files as a file selection: its ``key=value`` columns are the partition
    columns the table declares, not whatever directory names its writer chose."""

    partitions: tuple[str, ...] = ()
    #: the snapshot the files are of: its statistics may rule files out (see ``.pruning``)
    snapshot: TableSnapshot | None = None

    def hive_keys(self) -> list[str]:
        return list(self.partitions)

    @property
    def max_depth(self) -> int:
        """No ``dirN`` columns: a table's directories are its writer's layout, not data."""
        return 0
