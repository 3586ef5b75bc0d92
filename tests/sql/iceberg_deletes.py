"""Merge-on-read deletes committed to an Iceberg table, for tests.

pyiceberg reads delete files but writes none (its deletes rewrite data files), so this commits
delete files the way engines that write merge-on-read do: a Parquet file of deletes and a
snapshot whose manifest of deletes lists it, through pyiceberg's own snapshot producer.
"""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestContent,
    ManifestWriterV2,
)
from pyiceberg.table.snapshots import Operation
from pyiceberg.table.update.snapshot import _FastAppendFiles
from pyiceberg.typedef import Record

#: Iceberg's reserved field ids of a position delete file's columns
_FILE_PATH_ID, _POS_ID = b"2147483546", b"2147483545"


class _DeleteManifestWriter(ManifestWriterV2):
    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


class _AddDeleteFiles(_FastAppendFiles):
    def new_manifest_writer(self, spec: Any) -> Any:
        output = self.new_manifest_output()
        return _DeleteManifestWriter(
            spec, self.schema(), output, self._snapshot_id, self._compression
        )


def _commit(
    table: Any,
    content: DataFileContent,
    rows: pa.Table,
    out: str,
    partition: Record | None = None,
    **more: Any,
) -> None:
    """Write ``rows`` as the delete file ``out`` and commit it, of ``content``, to ``table``
    (in ``partition`` of its current spec; none: unpartitioned)."""
    pq.write_table(rows, out)
    commit_delete_file(table, content, out, rows.num_rows, FileFormat.PARQUET, partition, **more)


def commit_delete_file(
    table: Any,
    content: DataFileContent,
    out: str,
    record_count: int,
    file_format: FileFormat,
    partition: Record | None = None,
    **more: Any,
) -> None:
    """Commit the delete file ``out`` (written already, in ``file_format``), of ``content``,
    to ``table``."""
    data_file = DataFile.from_args(
        content=content,
        file_path="file://" + out,
        file_format=file_format,
        partition=partition if partition is not None else Record(),
        record_count=record_count,
        file_size_in_bytes=os.path.getsize(out),
        spec_id=table.spec().spec_id,
        **more,
    )
    tx = table.transaction()
    producer = _AddDeleteFiles(operation=Operation.DELETE, transaction=tx, io=table.io)
    producer.append_data_file(data_file)
    producer.commit()
    tx.commit_transaction()


def add_position_deletes(table: Any, data_path: str, positions: list[int], out: str) -> None:
    """Delete the rows at ``positions`` of the data file ``data_path`` (as the table names it)
    by a position delete file written at ``out``."""
    schema = pa.schema(
        [
            pa.field("file_path", pa.string(), False, {b"PARQUET:field_id": _FILE_PATH_ID}),
            pa.field("pos", pa.int64(), False, {b"PARQUET:field_id": _POS_ID}),
        ]
    )
    rows = {"file_path": [data_path] * len(positions), "pos": positions}
    _commit(table, DataFileContent.POSITION_DELETES, pa.table(rows, schema=schema), out)


def add_equality_deletes(
    table: Any, keys: pa.Table, out: str, partition: Record | None = None
) -> None:
    """Delete the rows whose columns named as ``keys``'s equal one of its rows (nulls equal
    nulls) by an equality delete file written at ``out``, in ``partition`` if given."""
    ids = [table.schema().find_field(name).field_id for name in keys.column_names]
    schema = pa.schema(
        [
            f.with_metadata({b"PARQUET:field_id": str(i).encode()})
            for f, i in zip(keys.schema, ids, strict=True)
        ]
    )
    rows = keys.cast(schema)
    _commit(table, DataFileContent.EQUALITY_DELETES, rows, out, partition, equality_ids=ids)
