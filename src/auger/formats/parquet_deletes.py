"""Rows a table deleted from a Parquet file without rewriting it: Iceberg's position deletes
and Delta's deletion vectors.

An Iceberg table written merge-on-read records a delete as a small file of (data file, row
position) pairs instead of a new copy of the data file; the table's metadata says which delete
files apply to which data file, and the Parquet reader of that data file reads those pairs. A
Delta table records the deleted positions of a file as a deletion vector in its log, which the
log reader decodes on the driver. Either way the reader leaves the rows at those positions out,
so the scan above never sees them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from auger.storage.filesystem import open_random

__all__ = ["POSITION_DELETES", "PositionDeletes", "drop_deleted", "position_deletes"]

#: The format option that carries a table's deleted positions to the Parquet reader:
#: ``{"files": {path the scan reads: [the path the delete files name it by, [delete file...]]},
#: "positions": {path the scan reads: [position, ...]}}``.
POSITION_DELETES = "position_deletes"


@dataclass(frozen=True)
class PositionDeletes:
    """Deleted positions of data files: delete files to read (Iceberg: for each data file, the
    path the delete files name it by and those files), or the positions themselves (Delta)."""

    files: Mapping[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    positions: Mapping[str, Sequence[int]] = field(default_factory=dict)

    def to_option(self) -> dict[str, Any]:
        files = {path: [name, list(deletes)] for path, (name, deletes) in self.files.items()}
        return {"files": files, "positions": {p: list(v) for p, v in self.positions.items()}}

    def deleted(self, path: str) -> np.ndarray | None:
        """The sorted positions deleted from the data file at ``path`` (None: none)."""
        found = []
        if path in self.positions:
            found.append(np.asarray(self.positions[path], dtype=np.int64))
        if path in self.files:
            name, deletes = self.files[path]
            for delete_file in deletes:
                pairs = pq.read_table(open_random(delete_file), columns=["file_path", "pos"])
                mine = pairs.filter(pc.equal(pairs.column("file_path"), name))
                found.append(mine.column("pos").to_numpy())
        return np.unique(np.concatenate(found)) if found else None


def position_deletes(format_options: Mapping[str, Any]) -> PositionDeletes | None:
    """The deleted positions a table's format options carry, or None."""
    raw = format_options.get(POSITION_DELETES)
    if not raw:
        return None
    files = {p: (str(e[0]), tuple(e[1])) for p, e in raw.get("files", {}).items()}
    return PositionDeletes(files, raw.get("positions", {}))


def drop_deleted(
    batches: Iterator[pa.RecordBatch],
    deleted: np.ndarray,
    groups: Sequence[tuple[int, int]],
) -> Iterator[pa.RecordBatch]:
    """``batches`` (rows of the row groups ``groups``, each (first row's position, rows), in
    order) without the rows at the ``deleted`` positions."""
    spans = iter(groups)
    start, left = 0, 0
    for batch in batches:
        pieces = []
        need = batch.num_rows
        while need:
            if not left:
                start, left = next(spans)
            take = min(need, left)
            pieces.append(np.arange(start, start + take))
            start, left, need = start + take, left - take, need - take
        if not pieces:
            yield batch
            continue
        positions = np.concatenate(pieces)
        keep = ~np.isin(positions, deleted, assume_unique=True)
        yield batch if keep.all() else batch.filter(pa.array(keep))
