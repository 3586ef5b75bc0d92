"""Which of an Iceberg snapshot's delete files apply to which of its data files.

pyiceberg plans a snapshot's files with their position deletes, but refuses a snapshot that
has equality deletes. Such a snapshot is planned here from its manifests, as pyiceberg reads
them, by Iceberg's rules: a delete file applies to a data file of the same partition (spec and
values) committed no later than it, a position delete from the data file's own commit on
(delete sequence number >= the data file's), an equality delete only after it (strictly
greater: a row written by the same commit as the delete stays). An equality delete of an
unpartitioned spec is global: it applies to data files of every partition.
"""

from __future__ import annotations

from itertools import chain
from typing import Any

from auger.storage.filesystem import is_uri, parallel_map

__all__ = ["live_entries", "plan_with_deletes"]


def plan_with_deletes(table: Any, snapshot_id: int) -> list[tuple[Any, list[Any]]]:
    """Each live data file of the snapshot (pyiceberg's ``DataFile``), with the delete files
    that apply to it."""
    # deferred: loads pyiceberg (heavy)
    from pyiceberg.manifest import DataFileContent

    specs = table.specs()
    data: list[Any] = []
    by_partition: dict[tuple[int, Any], list[Any]] = {}
    everywhere: list[Any] = []
    for entry in live_entries(table, snapshot_id):
        f = entry.data_file
        if f.content == DataFileContent.DATA:
            data.append(entry)
        elif f.content == DataFileContent.EQUALITY_DELETES and specs[f.spec_id].is_unpartitioned():
            everywhere.append(entry)
        else:
            by_partition.setdefault((f.spec_id, f.partition), []).append(entry)
    planned = []
    for entry in data:
        f = entry.data_file
        near = by_partition.get((f.spec_id, f.partition), [])
        applying = [d.data_file for d in chain(near, everywhere) if _applies(d, entry)]
        planned.append((f, applying))
    return planned


def live_entries(table: Any, snapshot_id: int) -> list[Any]:
    """The entries of the snapshot's manifests (pyiceberg's ``ManifestEntry``), its deleted
    ones left out, read from the manifests themselves (pyiceberg's ``entries`` table needs
    column statistics, which Iceberg lets a writer leave out)."""
    io = table.io
    manifests = list(table.snapshot_by_id(snapshot_id).manifests(io))
    # the manifests of a table in an object store are read by several threads at once
    remote = is_uri(str(table.metadata.location))
    read = parallel_map(
        lambda m: m.fetch_manifest_entry(io, discard_deleted=True), manifests, force=remote
    )
    return list(chain.from_iterable(read))


def _applies(delete: Any, data: Any) -> bool:
    """Whether the delete entry's sequence number lets it delete rows of the data entry (its
    partition already matches)."""
    # deferred: loads pyiceberg (heavy)
    from pyiceberg.manifest import DataFileContent

    deleted_at, written_at = delete.sequence_number or 0, data.sequence_number or 0
    if delete.data_file.content == DataFileContent.POSITION_DELETES:
        return bool(deleted_at >= written_at)
    return bool(deleted_at > written_at)
