"""The scan's internal, mutable schema: columns that start dynamic and become concrete.

``TupleSchema`` is a plain value; the tracker needs more per column while a scan runs: the
projection that asked for it, whether it is an implicit (file metadata) column, and for maps a
nested tuple that may still accept new members. :class:`ScanTuple` holds :class:`ScanColumn`s in
output order, plus the two facts that drive schema evolution:

* ``open``: may columns (or map members) not named so far still join? True for a wildcard, or a
  map projected as a whole, until a strict schema or a no-schema-change commit closes it;
* ``insert_point``: where newly found table columns go (the wildcard's place); columns found
  later are appended to the table columns, before implicit columns the wildcard added.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from auger.projection import RequestedColumn, RequestedTuple
from auger.types import ColumnMetadata, MinorType, TupleSchema

__all__ = ["ScanColumn", "ScanTuple", "dynamic_column"]

#: Column property that keeps a column out of wildcard expansion (Drill's EXCLUDE_FROM_WILDCARD).
EXCLUDE_FROM_WILDCARD = "drill.special"


def dynamic_column(name: str) -> ColumnMetadata:
    """A column whose type is not known yet."""
    return ColumnMetadata(name, MinorType.LATE)


def is_excluded_from_wildcard(col: ColumnMetadata) -> bool:
    return str(col.properties.get(EXCLUDE_FROM_WILDCARD, "")).lower() == "true"


class ScanColumn:
    """One column of the scan schema.

    Attributes:
        column: its metadata (type LATE while dynamic; for maps, children are rebuilt from
            ``members`` on demand).
        projection: what the project list asked of it, or ``None`` (found by a wildcard).
        members: for a MAP (or repeated map) column, its member tuple.
        implicit: the marker of an implicit/partition column, or ``None`` for table columns.
    """

    __slots__ = ("column", "implicit", "members", "projection")

    def __init__(
        self,
        column: ColumnMetadata,
        projection: RequestedColumn | None = None,
        members: ScanTuple | None = None,
        implicit: Any = None,
    ) -> None:
        self.column = column
        self.projection = projection
        self.members = members
        self.implicit = implicit

    @property
    def name(self) -> str:
        return self.column.name

    @property
    def is_dynamic(self) -> bool:
        return self.column.is_dynamic

    @property
    def is_implicit(self) -> bool:
        return self.implicit is not None

    def is_resolved(self) -> bool:
        """Concrete type here and in every member."""
        if self.is_dynamic:
            return False
        return self.members is None or self.members.is_resolved()

    def metadata(self) -> ColumnMetadata:
        """This column as an immutable ``ColumnMetadata`` (maps with their current members)."""
        if self.members is None:
            return self.column
        return self.column.with_children(m.metadata() for m in self.members.columns())

    def __repr__(self) -> str:
        flag = " implicit" if self.is_implicit else ""
        return f"ScanColumn({self.metadata()}{flag})"


class ScanTuple:
    """An ordered, case-insensitive list of :class:`ScanColumn` (the row, or a map's members).

    Attributes:
        open: whether columns not yet present may still be added here.
        insert_point: index where new table columns go; -1 means "at the end".
        projection: the requested tuple this level came from (``None`` when unknown).
    """

    __slots__ = ("_cols", "insert_point", "open", "projection")

    def __init__(self, open: bool = False, projection: RequestedTuple | None = None) -> None:
        self._cols: list[ScanColumn] = []
        self.open = open
        self.insert_point = -1
        self.projection = projection

    # ----- lookup
    def get(self, name: str) -> ScanColumn | None:
        lname = name.lower()
        for col in self._cols:
            if col.name.lower() == lname:
                return col
        return None

    def index(self, name: str) -> int:
        lname = name.lower()
        for i, col in enumerate(self._cols):
            if col.name.lower() == lname:
                return i
        return -1

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def columns(self) -> list[ScanColumn]:
        """The scan columns, in output order."""
        return list(self._cols)

    def is_project_all(self) -> bool:
        """Drill's wording for ``open``: the tuple takes any column offered."""
        return self.open

    # ----- TupleSchema look-alike: iteration and indexing give ColumnMetadata, so tests and
    # callers can treat the internal schema as the schema it currently describes.
    def __iter__(self) -> Iterator[ColumnMetadata]:
        return (c.metadata() for c in self._cols)

    def __len__(self) -> int:
        return len(self._cols)

    def size(self) -> int:
        return len(self._cols)

    def is_empty(self) -> bool:
        return not self._cols

    def names(self) -> list[str]:
        return [c.name for c in self._cols]

    def column(self, key: str | int) -> ColumnMetadata | None:
        if isinstance(key, int):
            return self._cols[key].metadata() if 0 <= key < len(self._cols) else None
        col = self.get(key)
        return None if col is None else col.metadata()

    def __getitem__(self, key: str | int) -> ColumnMetadata:
        found = self.column(key)
        if found is None:
            raise KeyError(key)
        return found

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ScanTuple):
            return self.to_schema() == other.to_schema()
        if isinstance(other, TupleSchema):
            return self.to_schema() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    # ----- mutation
    def append(self, col: ScanColumn) -> None:
        self._cols.append(col)

    def insert_table_column(self, col: ScanColumn) -> None:
        """Add a newly found table column at the insert point (or the end)."""
        if self.insert_point < 0:
            self._cols.append(col)
        else:
            self._cols.insert(self.insert_point, col)
            self.insert_point += 1

    def insert_after_table_columns(self, col: ScanColumn, offset: int) -> None:
        """Add a column ``offset`` places after the insert point (wildcard-expanded implicits)."""
        if self.insert_point < 0:
            self._cols.append(col)
        else:
            self._cols.insert(min(self.insert_point + offset, len(self._cols)), col)

    def remove(self, col: ScanColumn) -> None:
        i = self._cols.index(col)
        del self._cols[i]
        if 0 <= i < self.insert_point:
            self.insert_point -= 1

    def replace(self, old: ScanColumn, new: ScanColumn) -> None:
        self._cols[self._cols.index(old)] = new

    # ----- views
    def is_resolved(self) -> bool:
        return all(c.is_resolved() for c in self._cols)

    def close(self) -> None:
        """Accept no new columns here or in any map below (a committed schema)."""
        self.open = False
        for col in self._cols:
            if col.members is not None:
                col.members.close()

    def to_schema(self, include_implicit: bool = True) -> TupleSchema:
        return TupleSchema(
            c.metadata() for c in self._cols if include_implicit or not c.is_implicit
        )

    def implicit_schema(self) -> TupleSchema:
        return TupleSchema(c.metadata() for c in self._cols if c.is_implicit)

    def __repr__(self) -> str:
        state = "open" if self.open else "closed"
        return f"ScanTuple[{state}]({', '.join(str(c.metadata()) for c in self._cols)})"
