"""Rows a table deleted from a data file without rewriting it: Iceberg's position and
equality deletes, and Delta's deletion vectors.

An Iceberg table written merge-on-read records a delete as a small file instead of a new copy
of the data file: a position delete file lists (data file, row position) pairs, an equality
delete file lists values of some key columns (any row whose key equals one of them is gone).
The table's metadata says which delete files apply to which data file, and the reader of that
data file (Parquet's, or Iceberg's of an Avro or ORC data file) reads them
(:func:`without_deleted`). A Delta table records the deleted positions of a file as a
deletion vector in its log, which the log reader decodes on the driver. Either way the reader
leaves those rows out, so the scan above never sees them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from auger.errors import UserError
from auger.formats.field_ids import read_by_field_id

__all__ = [
    "ROW_DELETES",
    "EqualityDeleteFile",
    "EqualityDeletes",
    "FileDeletes",
    "RowDeletes",
    "drop_deleted",
    "project_batches",
    "row_deletes",
    "without_deleted",
]

#: the column a row-count-only batch carries (the scan's convention for ``COUNT(*)``)
ROWS_ONLY = "__rows__"

#: The format option that carries a table's deleted rows to the readers of its data files:
#: ``{"files": {path the scan reads: {"name": the path the delete files name it by,
#: "positions": [position delete file...], "equality": [[equality delete file, [field id...],
#: [column...]]...], "formats": {delete file not in Parquet: "avro" or "orc"}}},
#: "positions": {path the scan reads: [position, ...]}}``.
ROW_DELETES = "row_deletes"

#: The columns of a position delete file: Iceberg's reserved field ids, and names
_POSITION_COLUMNS = ((2147483546, "file_path"), (2147483545, "pos"))


@dataclass(frozen=True)
class EqualityDeleteFile:
    """A file of deleted keys: a row whose key columns equal one of its rows is deleted."""

    path: str
    #: the key columns' field ids (how the delete file names them) ...
    field_ids: tuple[int, ...]
    #: ... and their names in the table (how the data file's rows are read)
    columns: tuple[str, ...]


@dataclass(frozen=True)
class FileDeletes:
    """The delete files that apply to one data file."""

    #: the path the delete files name the data file by (position delete files name it)
    name: str
    positions: tuple[str, ...] = ()
    equality: tuple[EqualityDeleteFile, ...] = ()
    #: the delete files not in Parquet, by path: their format (``avro``, ``orc``)
    formats: Mapping[str, str] = field(default_factory=dict)

    def format_of(self, path: str) -> str:
        return self.formats.get(path, "parquet")


@dataclass(frozen=True)
class RowDeletes:
    """Deleted rows of data files: delete files to read (Iceberg), or the deleted positions
    themselves (Delta), by the path the scan reads."""

    files: Mapping[str, FileDeletes] = field(default_factory=dict)
    positions: Mapping[str, Sequence[int]] = field(default_factory=dict)

    def to_option(self) -> dict[str, Any]:
        files = {
            path: {
                "name": d.name,
                "positions": list(d.positions),
                "equality": [[e.path, list(e.field_ids), list(e.columns)] for e in d.equality],
                "formats": dict(d.formats),
            }
            for path, d in self.files.items()
        }
        return {"files": files, "positions": {p: list(v) for p, v in self.positions.items()}}

    def deleted(self, path: str) -> np.ndarray | None:
        """The sorted positions deleted from the data file at ``path`` (None: none)."""
        found = []
        if path in self.positions:
            found.append(np.asarray(self.positions[path], dtype=np.int64))
        if path in self.files:
            deletes = self.files[path]
            for delete_file in deletes.positions:
                fmt = deletes.format_of(delete_file)
                pairs = read_by_field_id(delete_file, fmt, _POSITION_COLUMNS)
                mine = pairs.filter(pc.equal(pairs.column("file_path"), deletes.name))
                found.append(mine.column("pos").to_numpy().astype(np.int64))
        return np.unique(np.concatenate(found)) if found else None

    def equality(self, path: str) -> EqualityDeletes | None:
        """The keys deleted from the data file at ``path`` (None: none)."""
        deletes = self.files.get(path)
        if deletes is None or not deletes.equality:
            return None
        by_key: dict[tuple[str, ...], list[pa.Table]] = {}
        for delete_file in deletes.equality:
            fmt = deletes.format_of(delete_file.path)
            by_key.setdefault(delete_file.columns, []).append(_read_keys(delete_file, fmt))
        return EqualityDeletes(
            [(key, pa.concat_tables(t, promote_options="permissive")) for key, t in by_key.items()]
        )


def _read_keys(delete_file: EqualityDeleteFile, fmt: str) -> pa.Table:
    """The key columns of an equality delete file (in ``fmt``), under the table's names. A
    column is found by its field id where the file has ids (its name may be one the table
    renamed since), else by the table's name."""
    wanted = list(zip(delete_file.field_ids, delete_file.columns, strict=True))
    return read_by_field_id(delete_file.path, fmt, wanted)


class EqualityDeletes:
    """Keys deleted from one data file: for each set of key columns, the deleted key rows
    (columns under the table's names). Nulls equal nulls here, as Iceberg defines."""

    def __init__(self, keys: Sequence[tuple[tuple[str, ...], pa.Table]]) -> None:
        self.keys = tuple(keys)
        #: per key and the data's column types: each column's distinct deleted values, and
        #: (with several columns) the deleted keys as positions among them
        self._lookups: dict[tuple[Any, ...], tuple[list[pa.Array], pa.Table]] = {}

    def columns(self) -> list[str]:
        """Every key column (lower-cased table names), each once."""
        out: list[str] = []
        for key, _ in self.keys:
            out += [c.lower() for c in key if c.lower() not in out]
        return out

    def drop_deleted(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """``batches`` (holding every key column the file has) without the rows whose key
        is deleted."""
        for batch in batches:
            mask = None
            for n, (key, deleted) in enumerate(self.keys):
                hit = self._deleted_rows(n, batch, key, deleted)
                mask = hit if mask is None else pc.or_(mask, hit)
            yield batch if mask is None or not mask.true_count else batch.filter(pc.invert(mask))

    def _deleted_rows(
        self, n: int, batch: pa.RecordBatch, key: Sequence[str], deleted: pa.Table
    ) -> pa.Array:
        """Which rows of ``batch`` have a key (columns ``key``) among the ``deleted`` rows.

        Each key column's values are looked up among the distinct deleted values of that
        column (nulls matching nulls); with one column a row found is deleted, with several
        the rows whose every column is found are joined with the deleted keys by those
        positions."""
        index = {name.lower(): i for i, name in enumerate(batch.schema.names)}
        columns = [
            batch.column(index[name.lower()])
            if name.lower() in index
            else pa.nulls(batch.num_rows, values.type)  # a column the file predates: null
            for name, values in zip(key, deleted.columns, strict=True)
        ]
        lookup = (n, *(c.type for c in columns))
        if lookup not in self._lookups:
            self._lookups[lookup] = _distinct(key, deleted, [c.type for c in columns])
        distinct, wanted = self._lookups[lookup]
        found = [
            pc.index_in(c, value_set=d, skip_nulls=False)
            for c, d in zip(columns, distinct, strict=True)
        ]
        if len(found) == 1:
            return found[0].is_valid()
        names = wanted.schema.names
        positions = pa.array(np.arange(batch.num_rows))
        rows = pa.table([*found, positions], names=[*names, "row"])
        rows = rows.drop_null()  # a column's value no deleted key has: not deleted
        hits = rows.join(wanted, names, join_type="left semi")
        return pc.is_in(positions, value_set=hits.column("row"))


def _distinct(
    key: Sequence[str], deleted: pa.Table, types: Sequence[pa.DataType]
) -> tuple[list[pa.Array], pa.Table]:
    """Each key column's distinct deleted values as the data's type, and the distinct
    deleted keys as positions among those values."""
    distinct: list[pa.Array] = []
    positions: list[pa.Array] = []
    for name, values, t in zip(key, deleted.columns, types, strict=True):
        try:
            values = values.combine_chunks().cast(t)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise UserError.data_read(
                "Equality delete keys do not have the type of their column",
                [f"Column: {name} ({t})", f"Reason: {exc}"],
            ) from exc
        unique = pc.unique(values)
        distinct.append(unique)
        positions.append(pc.index_in(values, value_set=unique, skip_nulls=False))
    names = [f"k{i}" for i in range(len(positions))]
    wanted = pa.table(positions, names=names).group_by(names).aggregate([])
    return distinct, wanted


def row_deletes(format_options: Mapping[str, Any]) -> RowDeletes | None:
    """The deleted rows a table's format options carry, or None."""
    raw = format_options.get(ROW_DELETES)
    if not raw:
        return None
    files = {
        path: FileDeletes(
            str(d["name"]),
            tuple(d["positions"]),
            tuple(
                EqualityDeleteFile(str(e[0]), tuple(int(i) for i in e[1]), tuple(e[2]))
                for e in d["equality"]
            ),
            dict(d.get("formats") or {}),
        )
        for path, d in raw.get("files", {}).items()
    }
    return RowDeletes(files, raw.get("positions", {}))


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


def project_batches(
    batches: Iterator[pa.RecordBatch], columns: Sequence[str] | None
) -> Iterator[pa.RecordBatch]:
    """``batches`` holding only the lower-cased ``columns`` (None: all); without any, the
    batches of a row count (one column of nulls)."""
    if columns is None:
        yield from batches
        return
    keep = set(columns)
    for batch in batches:
        names = batch.schema.names
        wanted = [i for i, n in enumerate(names) if n.lower() in keep]
        if not wanted:
            yield pa.RecordBatch.from_arrays([pa.nulls(batch.num_rows)], names=[ROWS_ONLY])
        else:
            yield batch if len(wanted) == len(names) else batch.select(wanted)


def without_deleted(
    deletes: RowDeletes | None,
    path: str,
    columns: Sequence[str] | None,
    read: Callable[[Sequence[str] | None], Iterator[pa.RecordBatch]],
    spans: Callable[[], Sequence[tuple[int, int]]],
) -> Iterator[pa.RecordBatch]:
    """The rows of the data file at ``path`` that the table did not delete.

    ``read(wanted)`` reads the file's batches of the lower-cased table columns ``wanted``
    (None: all): ``columns`` and the key columns of the file's equality deletes, which the
    filter needs, projected or not. ``spans()`` gives (position of the first row, rows) of
    each run of rows ``read`` reads, in order (a Parquet split's row groups; a whole file is
    one run from 0), asked only when positions are deleted."""
    equality = deletes.equality(path) if deletes is not None else None
    wanted = columns
    if equality is not None and columns is not None:
        wanted = [*columns, *(k for k in equality.columns() if k not in columns)]
    batches = read(wanted)
    deleted = deletes.deleted(path) if deletes is not None else None
    if deleted is not None and len(deleted):
        batches = drop_deleted(batches, deleted, spans())
    if equality is not None:
        # rows deleted by key: then only the columns the scan wants
        batches = project_batches(equality.drop_deleted(batches), columns)
    return batches
