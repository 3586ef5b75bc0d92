"""Rows a table deleted from a Parquet file without rewriting it: Iceberg's position deletes.

An Iceberg table written merge-on-read records a delete as a small file of (data file, row
position) pairs instead of a new copy of the data file. The table's metadata says which delete
files apply to which data file; the Parquet reader of that data file reads those pairs and
leaves the rows at those positions out, so the scan above never sees them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from auger.storage.filesystem import open_random

__all__ = ["POSITION_DELETES", "PositionDeletes", "drop_deleted", "position_deletes"]

#: The format option that carries a table's position deletes to the Parquet reader:
#: ``{path the scan reads: [the path the delete files name it by, [delete file, ...]]}``.
POSITION_DELETES = "position_deletes"


@dataclass(frozen=True)
class PositionDeletes:
    """For each data file with deletes: the path its delete files name it by, and those
    files."""

    files: Mapping[str, tuple[str, tuple[str, ...]]]

    def to_option(self) -> dict[str, Any]:
        return {path: [name, list(deletes)] for path, (name, deletes) in self.files.items()}

    def deleted(self, path: str) -> np.ndarray | None:
        """The sorted positions deleted from the data file at ``path`` (None: none)."""
        entry = self.files.get(path)
        if entry is None:
            return None
        name, deletes = entry
        found = []
        for delete_file in deletes:
            pairs = pq.read_table(open_random(delete_file), columns=["file_path", "pos"])
            mine = pairs.filter(pc.equal(pairs.column("file_path"), name))
            found.append(mine.column("pos").to_numpy())
        return np.unique(np.concatenate(found)) if found else None


def position_deletes(format_options: Mapping[str, Any]) -> PositionDeletes | None:
    """The position deletes a table's format options carry, or None."""
    raw = format_options.get(POSITION_DELETES)
    if not raw:
        return None
    return PositionDeletes({p: (str(e[0]), tuple(e[1])) for p, e in raw.items()})


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
