"""The project list of a scan, parsed into a tree of requested columns.

A scan receives its projection as a list of path strings: ``["*"]``, ``["a", "m.x", "c[2]"]`` or
``[]`` (``COUNT(*)``). Readers and the scan schema tracker do not want strings; they want to ask
"is ``m`` projected, and if so, which of its members?" or "which elements of ``c`` are needed?".
So the list is folded into a :class:`RequestedTuple` whose entries are :class:`RequestedColumn`:

* names match without regard to case; the first spelling seen is the one kept;
* duplicates merge (and are counted, never an error);
* ``m.a, m.b, m.c.d`` becomes ``m(a, b, c(d))``; ``m`` together with ``m.a`` means the whole map;
* ``c[2], c[0]`` becomes ``c`` with indexes ``{0, 2}``; ``c`` together with ``c[2]`` is the whole
  array; ``a[1].x`` is both an array and a map; ``m[0]`` with ``m.a`` likewise.

The tree also knows which column *kinds* a projection accepts (:func:`is_consistent`): ``a[0]``
needs an array, ``a.b`` a map (or something that could hold one: a DICT, a UNION, a LIST).

Nothing here imports Spark: the tree is built on the driver and again on executors.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from auger.errors import UserError
from auger.types import ColumnMetadata, MinorType

__all__ = [
    "WILDCARD",
    "ProjectionParseResult",
    "RequestedColumn",
    "RequestedTuple",
    "TupleProjection",
    "format_path",
    "is_consistent",
    "is_wildcard",
    "parse_path",
    "parse_projection",
    "path_segment",
    "quoted",
    "split_root",
]

#: Drill's "dynamic star"; a bare ``*`` means the same.
WILDCARD = "**"


def is_wildcard(name: str) -> bool:
    """True for the names that stand for "every column": ``*`` and ``**``."""
    return name in ("*", "**")


class TupleProjection(enum.StrEnum):
    """How a row (or a map) is projected: everything, a named subset, or nothing."""

    ALL = "ALL"
    SOME = "SOME"
    NONE = "NONE"


# ---------------------------------------------------------------------------------------------
# Path parsing: "m.`a.b`[2][3].x" -> [("m", []), ("a.b", [2, 3]), ("x", [])]


@dataclass(frozen=True)
class PathSegment:
    """One name in a projected path, with the array indexes written after it."""

    name: str
    indexes: tuple[int, ...] = ()


def parse_path(text: str) -> list[PathSegment]:
    """Split one projected path into its segments.

    Names may be back-quoted (```a.b```, with doubled back-quotes inside) so that dots and brackets
    can be part of a name. ``*``/``**`` are allowed as the last segment (``m.**``).

    Raises:
        UserError: (PARSE) when the path is empty or malformed.
    """
    segments: list[PathSegment] = []
    src = text.strip()
    i, n = 0, len(src)
    if n == 0:
        raise UserError.parse("Empty column name in the project list")
    while True:
        # ---- a name
        if i < n and src[i] == "`":
            j = i + 1
            buf: list[str] = []
            while True:
                if j >= n:
                    raise UserError.parse(f"Unbalanced back-quote in projected column [{text}]")
                if src[j] == "`":
                    if j + 1 < n and src[j + 1] == "`":
                        buf.append("`")
                        j += 2
                        continue
                    break
                buf.append(src[j])
                j += 1
            name = "".join(buf)
            i = j + 1
        else:
            j = i
            while j < n and src[j] not in ".[]`":
                j += 1
            name = src[i:j].strip()
            i = j
        if not name:
            raise UserError.parse(f"Invalid projected column [{text}]: empty name")
        # ---- its indexes
        indexes: list[int] = []
        while i < n and src[i] == "[":
            j = src.find("]", i)
            if j < 0:
                raise UserError.parse(f"Invalid projected column [{text}]: missing ']'")
            body = src[i + 1 : j].strip()
            if not body.isdigit():
                raise UserError.parse(
                    f"Invalid projected column [{text}]: array index [{body}] is not a "
                    "non-negative integer"
                )
            indexes.append(int(body))
            i = j + 1
        segments.append(PathSegment(name, tuple(indexes)))
        if i >= n:
            break
        if src[i] != ".":
            raise UserError.parse(f"Invalid projected column [{text}]: unexpected '{src[i]}'")
        i += 1
        if i >= n:
            raise UserError.parse(f"Invalid projected column [{text}]: trailing '.'")
    for seg in segments[:-1]:
        if is_wildcard(seg.name):
            raise UserError.parse(f"Invalid projected column [{text}]: '*' must come last")
    return segments


def quoted(name: str) -> str:
    """``name`` back-quoted, a back-quote in it doubled: one name, whatever it holds, in a
    projected path and in Spark's SQL alike."""
    return "`" + name.replace("`", "``") + "`"


def path_segment(name: str) -> str:
    """``name`` as one segment of a projected path: as it is, or back-quoted when it holds a
    character a path gives meaning to (``.``, ``[``, ``]``, a back-quote) or white space at an
    end, so that the column `` `m.a` `` and the member ``m.a`` stay two paths."""
    if any(ch in name for ch in ".[]`") or name != name.strip():
        return quoted(name)
    return name


def format_path(segments: list[PathSegment]) -> str:
    """The path text of ``segments`` (:func:`parse_path` reads it back)."""
    return ".".join(path_segment(s.name) + "".join(f"[{i}]" for i in s.indexes) for s in segments)


def split_root(path: str) -> tuple[str, str]:
    """A projected path's root column name (unquoted) and the rest of its text (``""``, or
    starting at the ``.`` or ``[`` after the root)."""
    first = parse_path(path)[0]
    text = path.strip()
    if text.startswith("`"):
        end = 1
        while True:  # the closing back-quote: a doubled one is part of the name
            end = text.index("`", end)
            if text[end + 1 : end + 2] != "`":
                break
            end += 2
        return first.name, text[end + 1 :]
    cut = next((i for i, ch in enumerate(text) if ch in ".["), len(text))
    return first.name, text[cut:]


# ---------------------------------------------------------------------------------------------
# The tree


class RequestedColumn:
    """One projected column: its name and what the project list asked of it.

    Attributes:
        name: the name as first written in the project list.
        ref_count: how many times the list named it (directly or through a member/element).
        array_dims: the most array dimensions seen (``a[1][2]`` → 2); 0 if never indexed.
        members: for a map projection, the requested members (``None`` if not used as a map).
    """

    __slots__ = ("_indexes", "_whole", "array_dims", "members", "name", "ref_count")

    def __init__(self, name: str) -> None:
        self.name = name
        self.ref_count = 0
        self.array_dims = 0
        self._indexes: set[int] = set()
        # Seen without a qualifier (``a``): the whole column is wanted, whatever else is said.
        self._whole = False
        self.members: RequestedTuple | None = None

    # ----- predicates (the vocabulary of Drill's ProjectedColumn)
    @property
    def is_simple(self) -> bool:
        """Named only plainly: neither indexed nor used as a map."""
        return self.array_dims == 0 and self.members is None

    @property
    def is_array(self) -> bool:
        return self.array_dims > 0

    @property
    def is_map(self) -> bool:
        return self.members is not None

    @property
    def has_indexes(self) -> bool:
        """True if only some elements are wanted (no plain reference to the whole array)."""
        return self.is_array and not self._whole and bool(self._indexes)

    @property
    def indexes(self) -> list[bool] | None:
        """Wanted elements as flags (``[F, T, F, T]`` for ``a[1], a[3]``), or ``None`` for all."""
        if not self.has_indexes:
            return None
        flags = [False] * (max(self._indexes) + 1)
        for i in self._indexes:
            flags[i] = True
        return flags

    @property
    def index_set(self) -> frozenset[int] | None:
        """Wanted elements as a set, or ``None`` for the whole array."""
        return frozenset(self._indexes) if self.has_indexes else None

    def has_index(self, index: int) -> bool:
        """Is element ``index`` wanted? (Always true when the whole array is.)"""
        return not self.has_indexes or index in self._indexes

    # ----- building
    def _add(self, rest: Sequence[PathSegment], indexes: tuple[int, ...], top: bool) -> None:
        self.ref_count += 1
        if indexes:
            self.array_dims = max(self.array_dims, len(indexes))
            # Only top-level element indexes are kept: they are what a reader such as the text
            # reader can push down (``columns[2]``); inside a map only the dimensions matter.
            if top:
                self._indexes.add(indexes[0])
        if not rest:
            if not indexes:
                self._whole = True
                if self.members is not None:
                    self.members.kind = TupleProjection.ALL
            return
        if self.members is None:
            self.members = RequestedTuple(
                TupleProjection.ALL if self._whole else TupleProjection.SOME
            )
        head = rest[0]
        if is_wildcard(head.name):
            self.members.kind = TupleProjection.ALL
            return
        self.members._add(head, rest[1:], top=False)

    def project_string(self) -> str:
        """How Drill's error messages show the projection: ``a[1, 3]``, ``m {x, y}``, ``x[]``."""
        text = self.name
        if self.is_array:
            inner = ", ".join(str(i) for i in sorted(self._indexes)) if self.has_indexes else ""
            text += f"[{inner}]"
        if self.members is not None:
            parts = [c.project_string() for c in self.members]
            if self.members.is_project_all():
                parts.insert(0, "**")
            text += " {" + ", ".join(parts) + "}"
        return text

    def __repr__(self) -> str:
        return f"RequestedColumn({self.project_string()})"


class RequestedTuple:
    """The projected columns of a row or of a map, in first-mention order.

    ``kind`` is ALL for ``*`` (or a map named as a whole), NONE for an empty list, SOME otherwise.
    With ALL the tuple may still list columns: those the list named explicitly, which the scan
    must place (``a, *, b``) or whose members it must respect.
    """

    __slots__ = ("_columns", "kind")

    def __init__(self, kind: TupleProjection = TupleProjection.SOME) -> None:
        self.kind = kind
        self._columns: dict[str, RequestedColumn] = {}

    @classmethod
    def project_all(cls) -> RequestedTuple:
        return cls(TupleProjection.ALL)

    @classmethod
    def project_none(cls) -> RequestedTuple:
        return cls(TupleProjection.NONE)

    @classmethod
    def parse(cls, projection: Iterable[str] | None) -> RequestedTuple:
        return parse_projection(projection).columns

    def _add(self, head: PathSegment, rest: Sequence[PathSegment], top: bool) -> None:
        key = head.name.lower()
        col = self._columns.get(key)
        if col is None:
            col = RequestedColumn(head.name)
            self._columns[key] = col
        col._add(rest, head.indexes, top)

    # ----- queries
    def is_project_all(self) -> bool:
        return self.kind is TupleProjection.ALL

    def is_project_none(self) -> bool:
        return self.kind is TupleProjection.NONE

    def is_projected(self, name: str) -> bool:
        """Would a column called ``name`` be projected at this level?"""
        if self.kind is TupleProjection.ALL:
            return True
        return name.lower() in self._columns

    def get(self, name: str) -> RequestedColumn | None:
        return self._columns.get(name.lower())

    def names(self) -> list[str]:
        return [c.name for c in self._columns.values()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._columns

    def __iter__(self) -> Iterator[RequestedColumn]:
        return iter(self._columns.values())

    def __len__(self) -> int:
        return len(self._columns)

    def __repr__(self) -> str:
        cols = ", ".join(c.project_string() for c in self)
        return f"RequestedTuple({self.kind.value}: {cols})"


@dataclass(frozen=True)
class ProjectionParseResult:
    """The parsed project list.

    Attributes:
        wildcard_posn: how many explicit columns precede ``*`` (where the table's columns go),
            or -1 without a wildcard.
        columns: the requested columns (kind ALL with a wildcard, NONE for an empty list).
    """

    wildcard_posn: int
    columns: RequestedTuple

    @property
    def is_project_all(self) -> bool:
        return self.columns.is_project_all()

    @property
    def is_project_none(self) -> bool:
        return self.columns.is_project_none()


def parse_projection(projection: Iterable[str] | None) -> ProjectionParseResult:
    """Parse a scan's project list.

    Args:
        projection: path strings; ``None`` means ``*`` (as in Drill), ``[]`` means no columns.

    Returns:
        The wildcard position and the tree of requested columns.

    Example:
        >>> r = parse_projection(["m.a", "m.b", "m.c.d", "c[2]", "c[0]"])
        >>> [col.project_string() for col in r.columns]
        ['m {a, b, c {d}}', 'c[0, 2]']
    """
    if projection is None:
        return ProjectionParseResult(0, RequestedTuple.project_all())
    items = list(projection)
    if not items:
        return ProjectionParseResult(-1, RequestedTuple.project_none())
    tup = RequestedTuple(TupleProjection.SOME)
    wildcard_posn = -1
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"projected columns must be strings, got {item!r}")
        path = parse_path(item)
        if len(path) == 1 and is_wildcard(path[0].name):
            if path[0].indexes:
                raise UserError.parse(f"Invalid projected column [{item}]: '*' cannot be indexed")
            if wildcard_posn < 0:
                wildcard_posn = len(tup)
                tup.kind = TupleProjection.ALL
            continue
        tup._add(path[0], path[1:], top=True)
    return ProjectionParseResult(wildcard_posn, tup)


# ---------------------------------------------------------------------------------------------
# Consistency of a projection with a column's type


def _is_variant(col: ColumnMetadata) -> bool:
    # A UNION, or a LIST (which may hold values of any type), can be anything at run time.
    return col.type in (MinorType.UNION, MinorType.LIST)


def is_consistent(proj: RequestedColumn | None, col: ColumnMetadata) -> bool:
    """Can a column of ``col``'s type satisfy projection ``proj``?

    ``a.b`` wants a map (a DICT, UNION or LIST might hold one); ``a[0]`` wants an array (or a
    DICT key, or a variant); ``a[0][1]`` wants an array of arrays (LIST, DICT or UNION). A
    column whose type is not known yet (LATE) is consistent with everything, as is a column the
    list does not mention.
    """
    if proj is None or col.is_dynamic:
        return True
    if proj.is_map and not (col.is_map or col.is_dict or _is_variant(col)):
        return False
    if proj.is_array:
        if proj.array_dims == 1:
            return col.is_array or col.is_dict or _is_variant(col)
        return col.type is MinorType.LIST or col.is_dict or col.type is MinorType.UNION
    return True
