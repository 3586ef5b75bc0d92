"""Tuple writers: the members of a map (and, through ``RowSetLoader``, of the row itself).

A tuple is an ordered, case-insensitive set of column writers that share one index: a map's
members write at the map's own position. Columns can be added at any time; the new writer starts
empty and fills the positions before its first value lazily (see ``writers.base``).

With a projection, members the query does not want get dummy writers: they accept every call and
keep nothing, so readers need not know what is projected (``is_projected`` lets them skip work).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from auger.errors import UserError
from auger.resultset import vectors
from auger.resultset.bulk import align, null_positions, struct_fields
from auger.resultset.exceptions import ConversionError, UndefinedColumnError
from auger.resultset.projection import ProjectionSet
from auger.resultset.writers.base import ColumnWriter, Index, LoaderHooks, fits_accessor
from auger.resultset.writers.scalar import is_temporal
from auger.types import ColumnMetadata, DataMode, TupleSchema

if TYPE_CHECKING:
    from auger.resultset.writers.array import ArrayWriter, DictWriter
    from auger.resultset.writers.scalar import ScalarWriter

__all__ = ["TupleWriter"]


class TupleWriter(ColumnWriter):
    """Writer of a map's members (non-repeated; a repeated map is an array of these)."""

    accessor = "tuple"

    __slots__ = ("_by_name", "_columns", "_entries", "_held", "_nullable", "_nulls", "_proj")

    def __init__(
        self,
        meta: ColumnMetadata,
        idx: Index,
        hooks: LoaderHooks,
        proj: ProjectionSet,
        entries: bool = False,
    ) -> None:
        super().__init__(meta.with_children(()), idx, hooks)
        self._columns: list[ColumnWriter] = []
        self._by_name: dict[str, int] = {}
        self._proj = proj
        self._nullable = meta.mode is DataMode.OPTIONAL
        self._nulls: list[int] = []
        self._held: list[int] | None = None
        # DICT entries: Arrow's map type always declares its value field nullable.
        self._entries = entries
        for child in meta.children or ():
            self.add_column(child)

    # ----- schema
    @property
    def metadata(self) -> ColumnMetadata:
        return self._meta.with_children([c.metadata for c in self._columns])

    def schema(self) -> TupleSchema:
        """The members as a ``TupleSchema`` (projected or not), in the order they were added."""
        return TupleSchema(c.metadata for c in self._columns)

    def size(self) -> int:
        return len(self._columns)

    def index(self, name: str) -> int:
        """Position of a member (any case), or -1."""
        return self._by_name.get(name.lower(), -1)

    def add_column(self, column: ColumnMetadata) -> int:
        """Add a member; earlier positions are back-filled. Returns its index."""
        key = column.name.lower()
        if key in self._by_name:
            raise UserError.validation(
                f"Duplicate column name: {column.name}",
                [f"Existing column: {self._columns[self._by_name[key]].metadata}"],
            )
        projected = self.is_projected() and self._proj.contains(column.name)
        if (
            projected
            and column.mode is DataMode.REQUIRED
            and is_temporal(column)
            and self._hooks.rows_in_batch() > 0
        ):
            raise UserError.validation(
                f"Cannot add REQUIRED column `{column.name}` of type {column.type.value} after "
                "the first row: there is no value to back-fill earlier rows with",
                ["Declare the column nullable (OPTIONAL) or add it before writing rows"],
            )
        writer = self._hooks.make_writer(
            column, self._idx, self._proj.child(column.name), projected
        )
        self._by_name[key] = len(self._columns)
        self._columns.append(writer)
        if projected:
            self._hooks.column_added(writer)
        self._columns_changed()
        return len(self._columns) - 1

    def _columns_changed(self) -> None:
        """Hook for the row writer, which caches its members' setters."""

    # ----- lookup
    def column(self, key: int | str) -> Any:
        """The writer of one member, by position or name (any case)."""
        if isinstance(key, int):
            try:
                return self._columns[key]
            except IndexError:
                raise IndexError(
                    f"Column index {key} out of range: `{self._meta.name or 'row'}` has "
                    f"{len(self._columns)} columns"
                ) from None
        idx = self._by_name.get(key.lower())
        if idx is None:
            raise UndefinedColumnError(key, [c.name for c in self._columns])
        return self._columns[idx]

    def scalar(self, key: int | str) -> ScalarWriter:
        return self._typed(key, "scalar")  # type: ignore[return-value]

    def tuple(self, key: int | str) -> TupleWriter:
        return self._typed(key, "tuple")  # type: ignore[return-value]

    def array(self, key: int | str) -> ArrayWriter:
        return self._typed(key, "array")  # type: ignore[return-value]

    def dict(self, key: int | str) -> DictWriter:
        return self._typed(key, "dict")  # type: ignore[return-value]

    def _typed(self, key: int | str, what: str) -> ColumnWriter:
        writer: ColumnWriter = self.column(key)
        if not writer.is_projected():
            return writer  # dummies take every call
        actual = writer.accessor
        if fits_accessor(writer, what):
            return writer
        raise TypeError(
            f"Column `{writer.name}` is {writer.metadata.type_string()}, not a {what}: "
            f"use {actual}({key!r})"
        )

    def is_projected(self, name: str | None = None) -> bool:  # type: ignore[override]
        """Without a name: whether this tuple is projected. With one: whether that member is
        (or would be, if added now) projected."""
        if name is None:
            return True
        idx = self._by_name.get(name.lower())
        if idx is not None:
            return self._columns[idx].is_projected()
        return self.is_projected() and self._proj.contains(name)

    # ----- values
    def set(self, value: Any) -> None:
        """Write the members from a mapping (by name) or a sequence (by position)."""
        if value is None:
            self.set_null()
            return
        if isinstance(value, Mapping):
            for name, item in value.items():
                self.column(name).set(item)
            return
        columns = self._columns
        if len(value) > len(columns):
            raise ConversionError(
                f"{len(value)} values given for `{self._meta.name or 'row'}`, which has "
                f"{len(columns)} columns",
                [f"Columns: {', '.join(c.name for c in columns)}"],
            )
        for writer, item in zip(columns, value):
            writer.set(item)

    def set_null(self) -> None:
        """Mark the map NULL at the current position (nullable maps only)."""
        if not self._nullable:
            raise ConversionError(
                f"Map `{self._meta.name}` is not nullable; leave its members unset instead",
                [f"Column: {self._meta.name}"],
            )
        pos = self._idx.pos
        nulls = self._nulls
        if nulls and nulls[-1] >= pos:
            del nulls[bisect_left(nulls, pos) :]
        nulls.append(pos)

    # ----- lifecycle
    def _harvest_members(self) -> list[ColumnWriter]:
        return [c for c in self._columns if c.is_projected()]

    def _truncate(self, pos: int) -> None:
        nulls = self._nulls
        if nulls and nulls[-1] >= pos:
            del nulls[bisect_left(nulls, pos) :]
        for writer in self._columns:
            writer._truncate(pos)

    def _split(self, pos: int) -> None:
        nulls = self._nulls
        cut = bisect_left(nulls, pos)
        self._held = nulls[:cut]
        self._nulls = [p - pos for p in nulls[cut:]]
        for writer in self._harvest_members():
            writer._split(pos)

    def _harvest(self, n: int, held: bool) -> pa.Array:
        if held:
            nulls = self._held or []
            self._held = None
        else:
            nulls = self._nulls
            self._nulls = []
        nulls = [p for p in nulls if p < n]
        children: list[pa.Array] = []
        fields: list[pa.Field] = []
        for writer in self._harvest_members():
            if held and writer._late:
                continue
            arr = writer._harvest(n, held)
            children.append(arr)
            nullable = self._entries and len(fields) == 1
            nullable = nullable or writer.metadata.mode is DataMode.OPTIONAL
            fields.append(pa.field(writer.name, arr.type, nullable=nullable))
        return vectors.struct_array(pa.struct(fields), n, children, nulls)

    def _nbytes(self) -> int:
        total = (len(self._nulls) + 7) // 8
        for writer in self._columns:
            total += writer._nbytes()
        return total

    def _late_writers(self) -> list[ColumnWriter]:
        out: list[ColumnWriter] = [self]
        for writer in self._columns:
            out.extend(writer._late_writers())
        return out

    # ----- bulk
    def _bulk_room(self, arr: pa.Array) -> int:

        room = len(arr)
        for writer, child in struct_fields(self, arr):
            room = min(room, writer._bulk_room(child))  # type: ignore[attr-defined]
        return room

    def _bulk_append(self, arr: pa.Array) -> None:

        pos = self._idx.pos
        if arr.null_count:
            if not self._nullable:
                raise ConversionError(
                    f"Map `{self._meta.name}` is not nullable", [f"Column: {self._meta.name}"]
                )
            self._nulls.extend(null_positions(arr, pos))
        for writer, child in struct_fields(self, arr):
            align(writer)
            writer._bulk_append(child)  # type: ignore[attr-defined]
