"""Projection filters: which reader columns does the scan want, and are their types acceptable?

A reader writes every column it finds; the result set loader asks the scan's filter about each
one and hands out a dummy writer for those not wanted. The filter is also the first check on
types: a column whose type cannot meet its projection (``a[1]`` on an INT) or differs from the
type the scan already settled on raises a VALIDATION error naming both.

Filters come in four shapes, chosen by what the scan knows:

* ``PROJECT_ALL`` — a wildcard with nothing known yet: take everything;
* ``PROJECT_NONE`` — ``COUNT(*)``: take nothing;
* :class:`RequestedTupleFilter` — only the project list is known (a map projected as ``m.x``
  before any reader has said whether ``m`` is a MAP or a DICT);
* :class:`SchemaFilter` — a (partly) resolved scan schema: check types, and take new columns only
  where the schema is still open.

For a map column the answer carries a ``map_filter`` that applies the same rules to its members.
Filters are immutable snapshots and picklable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from auger.projection import RequestedColumn, RequestedTuple, is_consistent
from auger.scan.conflicts import ErrorContext, projection_conflict, type_conflict
from auger.scan.schema import ScanColumn, ScanTuple, is_excluded_from_wildcard
from auger.types import ColumnMetadata

__all__ = [
    "PROJECT_ALL",
    "PROJECT_NONE",
    "ProjResult",
    "ProjectionFilter",
    "RequestedTupleFilter",
    "SchemaFilter",
    "filter_for_column",
    "same_type",
]


@dataclass(frozen=True)
class ProjResult:
    """The answer for one offered column.

    Attributes:
        is_projected: whether the scan wants the column.
        projection: what the project list asked of it (``None`` if found by a wildcard).
        map_filter: for map-like columns, the filter for its members.
    """

    is_projected: bool
    projection: RequestedColumn | None = None
    map_filter: ProjectionFilter | None = None


def _is_map_like(col: ColumnMetadata) -> bool:
    return col.is_map


def same_type(a: ColumnMetadata, b: ColumnMetadata) -> bool:
    """Same type and mode: the scan's test for a column changing under it."""
    return a.type is b.type and a.mode is b.mode


class ProjectionFilter:
    """Base of all filters: ``is_projected(name)`` for a quick check by name, and
    ``projection(col)`` for the full, type-checked answer."""

    def is_projected(self, name: str) -> bool:
        raise NotImplementedError

    def projection(self, col: ColumnMetadata) -> ProjResult:
        raise NotImplementedError

    def is_empty(self) -> bool:
        """True if nothing at all is projected (``COUNT(*)``)."""
        return False


class _ProjectAll(ProjectionFilter):
    def is_projected(self, name: str) -> bool:
        return True

    def projection(self, col: ColumnMetadata) -> ProjResult:
        if is_excluded_from_wildcard(col):
            return ProjResult(False, None, PROJECT_NONE if _is_map_like(col) else None)
        return ProjResult(True, None, PROJECT_ALL if _is_map_like(col) else None)

    def __reduce__(self) -> str:
        return "PROJECT_ALL"

    def __repr__(self) -> str:
        return "PROJECT_ALL"


class _ProjectNone(ProjectionFilter):
    def is_projected(self, name: str) -> bool:
        return False

    def projection(self, col: ColumnMetadata) -> ProjResult:
        return ProjResult(False, None, PROJECT_NONE if _is_map_like(col) else None)

    def is_empty(self) -> bool:
        return True

    def __reduce__(self) -> str:
        return "PROJECT_NONE"

    def __repr__(self) -> str:
        return "PROJECT_NONE"


PROJECT_ALL: ProjectionFilter = _ProjectAll()
PROJECT_NONE: ProjectionFilter = _ProjectNone()


def _members_filter(
    proj: RequestedColumn | None, source: str, context: ErrorContext | None
) -> ProjectionFilter:
    """The member filter implied by a projection alone (whole map → everything)."""
    if proj is None or proj.members is None:
        return PROJECT_ALL
    if proj.members.is_project_all() and len(proj.members) == 0:
        return PROJECT_ALL
    return RequestedTupleFilter(proj.members, source, context)


class RequestedTupleFilter(ProjectionFilter):
    """A filter over the project list alone (no types known yet)."""

    def __init__(
        self,
        requested: RequestedTuple,
        source: str = "Reader",
        context: ErrorContext | None = None,
    ) -> None:
        self.requested = requested
        self.source = source
        self.context = context

    def is_projected(self, name: str) -> bool:
        return self.requested.is_projected(name)

    def is_empty(self) -> bool:
        return self.requested.is_project_none()

    def projection(self, col: ColumnMetadata) -> ProjResult:
        proj = self.requested.get(col.name)
        if proj is None:
            if not self.requested.is_project_all() or is_excluded_from_wildcard(col):
                return ProjResult(False, None, PROJECT_NONE if _is_map_like(col) else None)
            return ProjResult(True, None, PROJECT_ALL if _is_map_like(col) else None)
        if not is_consistent(proj, col):
            raise projection_conflict(self.source, proj, col, self.context)
        mf = _members_filter(proj, self.source, self.context) if _is_map_like(col) else None
        return ProjResult(True, proj, mf)

    def __repr__(self) -> str:
        return f"RequestedTupleFilter({self.requested!r})"


@dataclass(frozen=True)
class _Entry:
    column: ColumnMetadata
    projection: RequestedColumn | None
    implicit: bool
    member_filter: ProjectionFilter | None


class SchemaFilter(ProjectionFilter):
    """A filter over the scan schema as it stands: known columns are type-checked, new columns
    are taken only if the tuple is open."""

    def __init__(
        self,
        entries: Mapping[str, _Entry],
        open: bool,
        source: str = "Reader",
        context: ErrorContext | None = None,
    ) -> None:
        self._entries = dict(entries)
        self.open = open
        self.source = source
        self.context = context

    @classmethod
    def of(
        cls, tup: ScanTuple, source: str = "Reader", context: ErrorContext | None = None
    ) -> SchemaFilter:
        """Snapshot a scan tuple (and its maps, recursively)."""
        entries = {
            col.name.lower(): _Entry(
                col.metadata(),
                col.projection,
                col.is_implicit,
                filter_for_column(col, source, context),
            )
            for col in tup.columns()
        }
        return cls(entries, tup.open, source, context)

    def is_projected(self, name: str) -> bool:
        entry = self._entries.get(name.lower())
        if entry is not None:
            return not entry.implicit
        return self.open

    def projection(self, col: ColumnMetadata) -> ProjResult:
        entry = self._entries.get(col.name.lower())
        if entry is None:
            if not self.open or is_excluded_from_wildcard(col):
                return ProjResult(False, None, PROJECT_NONE if _is_map_like(col) else None)
            return ProjResult(True, None, PROJECT_ALL if _is_map_like(col) else None)
        if entry.implicit:
            # A reader column that shadows an implicit column is ignored; the scan fills it.
            return ProjResult(False, None, PROJECT_NONE if _is_map_like(col) else None)
        scan_col = entry.column
        if scan_col.is_dynamic:
            if entry.projection is not None and not is_consistent(entry.projection, col):
                raise projection_conflict(self.source, entry.projection, col, self.context)
        elif not col.is_dynamic and not same_type(scan_col, col):
            raise type_conflict(self.source, scan_col, col, self.context)
        mf: ProjectionFilter | None = None
        if _is_map_like(col):
            mf = entry.member_filter or PROJECT_ALL
        return ProjResult(True, entry.projection, mf)

    def __repr__(self) -> str:
        state = "open" if self.open else "closed"
        return f"SchemaFilter[{state}]({', '.join(e.column.name for e in self._entries.values())})"


def filter_for_column(
    col: ScanColumn, source: str = "Reader", context: ErrorContext | None = None
) -> ProjectionFilter | None:
    """The member filter of a scan column: from its members once resolved, else from its
    projection; ``None`` for columns that cannot have members."""
    if col.members is not None:
        return SchemaFilter.of(col.members, source, context)
    if col.is_dynamic:
        return _members_filter(col.projection, source, context)
    return None
