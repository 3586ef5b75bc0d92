"""Drill's column and tuple metadata: what a column is called, its type, its mode and children.

``ColumnMetadata`` is an immutable value; ``TupleSchema`` is an ordered, case-insensitive collection
of them that grows as a scan discovers columns (Drill's ``TupleMetadata``).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import overload

__all__ = [
    "ColumnMetadata",
    "DataMode",
    "MinorType",
    "TupleSchema",
    "column_type_text",
]


class MinorType(str, enum.Enum):
    """Drill's value types (``TypeProtos.MinorType``), limited to those auger reads and writes."""

    TINYINT = "TINYINT"
    SMALLINT = "SMALLINT"
    INT = "INT"
    BIGINT = "BIGINT"
    FLOAT4 = "FLOAT4"
    FLOAT8 = "FLOAT8"
    VARDECIMAL = "VARDECIMAL"
    BIT = "BIT"
    VARCHAR = "VARCHAR"
    VARBINARY = "VARBINARY"
    DATE = "DATE"
    TIME = "TIME"
    TIMESTAMP = "TIMESTAMP"
    INTERVAL = "INTERVAL"
    INTERVALDAY = "INTERVALDAY"
    INTERVALYEAR = "INTERVALYEAR"
    MAP = "MAP"  # Drill's MAP is a struct: named members
    DICT = "DICT"  # key/value map
    LIST = "LIST"  # list of lists / repeated lists
    UNION = "UNION"
    NULL = "NULL"
    LATE = "LATE"  # type not known yet (dynamic column)

    @property
    def is_scalar(self) -> bool:
        return self not in (
            MinorType.MAP,
            MinorType.DICT,
            MinorType.LIST,
            MinorType.UNION,
            MinorType.LATE,
        )

    @property
    def sql_name(self) -> str:
        """The name SQL users see (``INTEGER``, ``DOUBLE``, ``CHARACTER VARYING``...)."""
        return _SQL_NAMES.get(self, self.value)


_SQL_NAMES = {
    MinorType.INT: "INTEGER",
    MinorType.FLOAT4: "FLOAT",
    MinorType.FLOAT8: "DOUBLE",
    MinorType.VARDECIMAL: "DECIMAL",
    MinorType.BIT: "BOOLEAN",
    MinorType.VARCHAR: "CHARACTER VARYING",
    MinorType.VARBINARY: "BINARY VARYING",
    MinorType.INTERVALDAY: "INTERVAL DAY TO SECOND",
    MinorType.INTERVALYEAR: "INTERVAL YEAR TO MONTH",
    MinorType.DICT: "MAP",
    MinorType.MAP: "STRUCT",
    MinorType.LIST: "ARRAY",
}


class DataMode(str, enum.Enum):
    """Cardinality of a column: NOT NULL, nullable, or an array."""

    REQUIRED = "REQUIRED"
    OPTIONAL = "OPTIONAL"
    REPEATED = "REPEATED"


@dataclass(frozen=True)
class ColumnMetadata:
    """One column: name, type, mode, and for maps (and repeated maps) their members.

    Args:
        name: the column name, spelled as first seen; lookups ignore case.
        type: the value type.
        mode: REQUIRED, OPTIONAL or REPEATED.
        children: members of a MAP column (or the element of a LIST/DICT).
        precision: decimal precision or VARCHAR width (0 = unset).
        scale: decimal scale.
        properties: free-form properties (``drill.default``, ``drill.format``...).
    """

    name: str
    type: MinorType
    mode: DataMode = DataMode.OPTIONAL
    children: tuple[ColumnMetadata, ...] | None = None
    precision: int = 0
    scale: int = 0
    properties: Mapping[str, str] = field(default_factory=dict, compare=True, hash=False)

    def __init__(
        self,
        name: str,
        type: MinorType | str,
        mode: DataMode | str = DataMode.OPTIONAL,
        children: Iterable[ColumnMetadata] | TupleSchema | None = None,
        precision: int = 0,
        scale: int = 0,
        properties: Mapping[str, str] | None = None,
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "type", MinorType(type))
        object.__setattr__(self, "mode", DataMode(mode))
        kids = None if children is None else tuple(children)
        if kids is None and self.type is MinorType.MAP:
            kids = ()
        object.__setattr__(self, "children", kids)
        object.__setattr__(self, "precision", precision)
        object.__setattr__(self, "scale", scale)
        object.__setattr__(self, "properties", dict(properties or {}))

    # ----- convenient constructors (Drill's SchemaBuilder add / addNullable / addArray)
    @classmethod
    def required(cls, name: str, type: MinorType | str) -> ColumnMetadata:
        return cls(name, type, DataMode.REQUIRED)

    @classmethod
    def optional(cls, name: str, type: MinorType | str) -> ColumnMetadata:
        return cls(name, type, DataMode.OPTIONAL)

    @classmethod
    def array(cls, name: str, type: MinorType | str) -> ColumnMetadata:
        return cls(name, type, DataMode.REPEATED)

    @classmethod
    def map(
        cls, name: str, members: Iterable[ColumnMetadata], mode: DataMode | str = DataMode.REQUIRED
    ) -> ColumnMetadata:
        return cls(name, MinorType.MAP, mode, tuple(members))

    # ----- predicates
    @property
    def is_map(self) -> bool:
        return self.type is MinorType.MAP

    @property
    def is_dict(self) -> bool:
        return self.type is MinorType.DICT

    @property
    def is_array(self) -> bool:
        return self.mode is DataMode.REPEATED

    @property
    def is_nullable(self) -> bool:
        return self.mode is DataMode.OPTIONAL

    @property
    def is_dynamic(self) -> bool:
        return self.type is MinorType.LATE

    @property
    def schema(self) -> TupleSchema:
        """Members of a map column as a ``TupleSchema`` (empty for non-maps)."""
        return TupleSchema(self.children or ())

    def member(self, name: str) -> ColumnMetadata | None:
        lname = name.lower()
        for child in self.children or ():
            if child.name.lower() == lname:
                return child
        return None

    # ----- derived copies
    def renamed(self, name: str) -> ColumnMetadata:
        return replace(self, name=name)

    def with_mode(self, mode: DataMode | str) -> ColumnMetadata:
        return replace(self, mode=DataMode(mode))

    def with_children(self, children: Iterable[ColumnMetadata]) -> ColumnMetadata:
        return replace(self, children=tuple(children))

    def with_properties(self, **props: str) -> ColumnMetadata:
        merged = dict(self.properties)
        merged.update(props)
        return replace(self, properties=merged)

    @property
    def default_value(self) -> str | None:
        return self.properties.get("drill.default")

    @property
    def format(self) -> str | None:
        return self.properties.get("drill.format")

    def prop(self, key: str, default: str | None = None) -> str | None:
        """One property value (``drill.default``, ``drill.format``...), or ``default``."""
        return self.properties.get(key, default)

    def is_equivalent(self, other: ColumnMetadata) -> bool:
        """Same name (ignoring case), type, mode and members; properties ignored."""
        if self.name.lower() != other.name.lower():
            return False
        if self.type is not other.type or self.mode is not other.mode:
            return False
        if self.type is MinorType.VARDECIMAL and (self.precision, self.scale) != (
            other.precision,
            other.scale,
        ):
            return False
        mine, theirs = self.children or (), other.children or ()
        return len(mine) == len(theirs) and all(
            a.is_equivalent(b) for a, b in zip(mine, theirs, strict=True)
        )

    def type_string(self) -> str:
        """The type in Drill's schema syntax, e.g. ``INT NOT NULL``, ``ARRAY<VARCHAR>``."""
        return column_type_text(self)

    def __str__(self) -> str:
        return f"`{self.name}` {self.type_string()}"


class TupleSchema:
    """An ordered, case-insensitive set of columns (Drill's ``TupleMetadata``).

    Iterating yields ``ColumnMetadata``; ``schema["a"]`` and ``schema[0]`` both work.
    """

    __slots__ = ("_columns", "_index")

    def __init__(self, columns: Iterable[ColumnMetadata] = ()) -> None:
        self._columns: list[ColumnMetadata] = []
        self._index: dict[str, int] = {}
        for col in columns:
            self.add(col)

    # ----- mutation (schemas grow as readers discover columns)
    def add(self, column: ColumnMetadata) -> int:
        """Append a column; a second column of the same name (any case) is an error."""
        key = column.name.lower()
        if key in self._index:
            raise ValueError(f"Duplicate column name: {column.name}")
        self._index[key] = len(self._columns)
        self._columns.append(column)
        return len(self._columns) - 1

    def replace(self, column: ColumnMetadata) -> None:
        """Replace the column of the same name in place (keeping its position)."""
        idx = self._index[column.name.lower()]
        self._columns[idx] = column

    def copy(self) -> TupleSchema:
        return TupleSchema(self._columns)

    # ----- lookup
    def column(self, key: str | int) -> ColumnMetadata | None:
        if isinstance(key, int):
            return self._columns[key] if 0 <= key < len(self._columns) else None
        idx = self._index.get(key.lower())
        return None if idx is None else self._columns[idx]

    def index(self, name: str) -> int:
        """Position of a column, or -1."""
        return self._index.get(name.lower(), -1)

    def names(self) -> list[str]:
        return [c.name for c in self._columns]

    def columns(self) -> list[ColumnMetadata]:
        return list(self._columns)

    def size(self) -> int:
        return len(self._columns)

    def is_empty(self) -> bool:
        return not self._columns

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._index

    @overload
    def __getitem__(self, key: int) -> ColumnMetadata: ...
    @overload
    def __getitem__(self, key: str) -> ColumnMetadata: ...
    def __getitem__(self, key: int | str) -> ColumnMetadata:
        if isinstance(key, int):
            return self._columns[key]
        idx = self._index.get(key.lower())
        if idx is None:
            raise KeyError(key)
        return self._columns[idx]

    def __iter__(self) -> Iterator[ColumnMetadata]:
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TupleSchema):
            return self._columns == other._columns
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple((c.name, c.type, c.mode) for c in self._columns))

    def is_equivalent(self, other: TupleSchema) -> bool:
        return len(self) == len(other) and all(
            a.is_equivalent(b) for a, b in zip(self, other, strict=True)
        )

    # ----- text (Drill's schema syntax; reading it is ``auger.types.schema_text``, the Arrow
    # and Spark forms are ``auger.types.arrow`` and ``auger.types.spark``)
    def to_text(self) -> str:
        return ", ".join(str(c) for c in self._columns)

    def __repr__(self) -> str:
        return f"TupleSchema({self.to_text()})"

    def __str__(self) -> str:
        return f"({self.to_text()})"


def _base_type_text(col: ColumnMetadata) -> str:
    t = col.type
    if t is MinorType.MAP:
        inner = ", ".join(str(c) for c in col.children or ())
        return f"STRUCT<{inner}>"
    if t is MinorType.DICT:
        kids = col.children or ()
        key = _base_type_text(kids[0]) if kids else "VARCHAR"
        value = column_type_text(kids[1]) if len(kids) > 1 else "VARCHAR"
        return f"MAP<{key}, {value}>"
    if t is MinorType.LIST:
        kids = col.children or ()
        return column_type_text(kids[0]) if kids else "ARRAY<VARCHAR>"
    if t is MinorType.VARDECIMAL:
        return f"DECIMAL({col.precision}, {col.scale})"
    if t is MinorType.VARCHAR and col.precision:
        return f"VARCHAR({col.precision})"
    if t is MinorType.INTERVALDAY:
        return "INTERVAL DAY"
    if t is MinorType.INTERVALYEAR:
        return "INTERVAL YEAR"
    if t is MinorType.BIT:
        return "BOOLEAN"
    if t is MinorType.FLOAT8:
        return "DOUBLE"
    if t is MinorType.FLOAT4:
        return "FLOAT"
    if t is MinorType.VARBINARY:
        return "VARBINARY"
    return t.value


def column_type_text(col: ColumnMetadata) -> str:
    """The column's type in Drill's schema syntax (``INT NOT NULL``, ``ARRAY<INT>``...)."""
    if col.type is MinorType.LIST or col.mode is DataMode.REPEATED:
        text = f"ARRAY<{_base_type_text(col)}>"
    else:
        text = _base_type_text(col)
        if col.mode is DataMode.REQUIRED and col.type is not MinorType.MAP:
            text += " NOT NULL"
    for key, word in (("drill.format", "FORMAT"), ("drill.default", "DEFAULT")):
        if key in col.properties:
            value = col.properties[key].replace("'", "''")
            text += f" {word} '{value}'"
    others = {k: v for k, v in col.properties.items() if k not in ("drill.format", "drill.default")}
    if others:
        body = ", ".join(
            f"'{k.replace(chr(39), chr(39) * 2)}' = '{v.replace(chr(39), chr(39) * 2)}'"
            for k, v in others.items()
        )
        text += f" PROPERTIES {{{body}}}"
    return text
