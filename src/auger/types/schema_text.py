"""Drill's schema syntax, read into a ``TupleSchema`` (written by ``metadata.column_type_text``).

This is the column-list language of ``CREATE SCHEMA (...) FOR TABLE`` and of ``.drill.schema``
files, which SQL parsers do not know::

    a INT NOT NULL, b VARCHAR(10) DEFAULT 'x', c INT ARRAY, d ARRAY<ARRAY<BIGINT>>,
    m STRUCT<x BIGINT, y VARCHAR> PROPERTIES {'k' = 'v'}, dt DATE FORMAT 'yyyy-MM-dd',
    kv MAP<VARCHAR, INT>

Conventions for nested types in ``ColumnMetadata``: a repeated map is a MAP column in REPEATED
mode; an array of arrays is a LIST column (REPEATED) whose one child is the element column (itself
REPEATED when the element is an array); a DICT has two children, ``key`` and ``value``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from auger.errors import UserError
from auger.types.metadata import ColumnMetadata, DataMode, MinorType, TupleSchema

__all__ = ["parse_schema", "parse_type"]

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<quoted>`(?:[^`]|``)*`)
      | (?P<string>'(?:[^'\\]|''|\\.)*')
      | (?P<number>-?\d+)
      | (?P<word>[A-Za-z_$][\w$]*)
      | (?P<punct>[(),<>{}=])
    )""",
    re.VERBOSE,
)

# Type names accepted by Drill's schema parser, mapped to auger's types.
_SIMPLE_TYPES: dict[str, MinorType] = {
    "INT": MinorType.INT,
    "INTEGER": MinorType.INT,
    "BIGINT": MinorType.BIGINT,
    "SMALLINT": MinorType.SMALLINT,
    "TINYINT": MinorType.TINYINT,
    "FLOAT": MinorType.FLOAT4,
    "FLOAT4": MinorType.FLOAT4,
    "REAL": MinorType.FLOAT4,
    "DOUBLE": MinorType.FLOAT8,
    "FLOAT8": MinorType.FLOAT8,
    "DECIMAL": MinorType.VARDECIMAL,
    "DEC": MinorType.VARDECIMAL,
    "NUMERIC": MinorType.VARDECIMAL,
    "VARDECIMAL": MinorType.VARDECIMAL,
    "BOOLEAN": MinorType.BIT,
    "BOOL": MinorType.BIT,
    "BIT": MinorType.BIT,
    "VARCHAR": MinorType.VARCHAR,
    "CHAR": MinorType.VARCHAR,
    "CHARACTER": MinorType.VARCHAR,
    "STRING": MinorType.VARCHAR,
    "BINARY": MinorType.VARBINARY,
    "VARBINARY": MinorType.VARBINARY,
    "DATE": MinorType.DATE,
    "TIME": MinorType.TIME,
    "TIMESTAMP": MinorType.TIMESTAMP,
    "LATE": MinorType.LATE,
    "DYNAMIC": MinorType.LATE,
}

_INTERVAL_UNITS = {"YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND"}


@dataclass
class _Tok:
    kind: str
    text: str
    pos: int


def _tokenize(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise UserError.parse(
                f"Unable to parse schema [{text}]: unexpected character "
                f"'{text[pos:].lstrip()[:1]}' at position {pos + 1}",
            )
        kind = m.lastgroup or ""
        toks.append(_Tok(kind, m.group(kind), m.start(kind)))
        pos = m.end()
    return toks


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0

    # ----- token helpers
    def peek(self, offset: int = 0) -> _Tok | None:
        j = self.i + offset
        return self.toks[j] if j < len(self.toks) else None

    def at_word(self, *words: str) -> bool:
        t = self.peek()
        return t is not None and t.kind == "word" and t.text.upper() in words

    def at_punct(self, p: str) -> bool:
        t = self.peek()
        return t is not None and t.kind == "punct" and t.text == p

    def take(self) -> _Tok:
        t = self.peek()
        if t is None:
            self.fail("unexpected end of schema")
        self.i += 1
        return t  # type: ignore[return-value]

    def expect_punct(self, p: str) -> None:
        if not self.at_punct(p):
            self.fail(f"expected '{p}'")
        self.i += 1

    def expect_word(self, word: str) -> None:
        if not self.at_word(word):
            self.fail(f"expected {word}")
        self.i += 1

    def fail(self, why: str) -> None:
        t = self.peek()
        where = f"at '{t.text}' (position {t.pos + 1})" if t else "at the end"
        raise UserError.parse(f"Unable to parse schema [{self.text}]: {why} {where}")

    # ----- grammar
    def schema(self) -> TupleSchema:
        wrapped = self.at_punct("(")
        if wrapped:
            self.take()
        cols = TupleSchema()
        if not (wrapped and self.at_punct(")")) and self.peek() is not None:
            while True:
                col = self.column()
                if col.name in cols:
                    raise UserError.parse(
                        f"Unable to parse schema [{self.text}]: duplicate column name [{col.name}]"
                    )
                cols.add(col)
                if self.at_punct(","):
                    self.take()
                    continue
                break
        if wrapped:
            self.expect_punct(")")
        if self.peek() is not None:
            self.fail("unexpected text")
        return cols

    def name(self) -> str:
        t = self.take()
        if t.kind == "quoted":
            return t.text[1:-1].replace("``", "`")
        if t.kind == "word":
            return t.text
        self.i -= 1
        self.fail("expected a column name")
        return ""  # unreachable

    def column(self) -> ColumnMetadata:
        name = self.name()
        col = self.type_spec(name)
        if self.at_word("ARRAY"):
            self.take()
            col = _as_array(col)
        if self.at_word("NOT"):
            self.take()
            self.expect_word("NULL")
            if col.mode is DataMode.OPTIONAL:
                col = col.with_mode(DataMode.REQUIRED)
        elif self.at_word("NULL"):
            self.take()
        props: dict[str, str] = dict(col.properties)
        while self.at_word("FORMAT", "DEFAULT", "PROPERTIES"):
            word = self.take().text.upper()
            if word == "PROPERTIES":
                props.update(self.properties())
            else:
                props[f"drill.{word.lower()}"] = self.string()
        return col.with_properties(**props) if props != dict(col.properties) else col

    def string(self) -> str:
        t = self.take()
        if t.kind != "string":
            self.i -= 1
            self.fail("expected a quoted string")
        body = t.text[1:-1]
        return re.sub(r"''|\\(.)", lambda m: "'" if m.group(0) == "''" else m.group(1), body)

    def properties(self) -> dict[str, str]:
        self.expect_punct("{")
        out: dict[str, str] = {}
        while not self.at_punct("}"):
            key = self.string()
            self.expect_punct("=")
            out[key] = self.string()
            if self.at_punct(","):
                self.take()
        self.expect_punct("}")
        return out

    def int_args(self) -> list[int]:
        args: list[int] = []
        if self.at_punct("("):
            self.take()
            while True:
                t = self.take()
                if t.kind != "number":
                    self.i -= 1
                    self.fail("expected a number")
                args.append(int(t.text))
                if self.at_punct(","):
                    self.take()
                    continue
                break
            self.expect_punct(")")
        return args

    def type_spec(self, name: str) -> ColumnMetadata:
        t = self.peek()
        if t is None or t.kind != "word":
            self.fail("expected a type")
        word = self.take().text.upper()  # type: ignore[union-attr]
        if word == "ARRAY":
            self.expect_punct("<")
            elem = self.type_spec(name)
            if self.at_word("NOT"):
                self.take()
                self.expect_word("NULL")
            self.expect_punct(">")
            return _as_array(elem)
        if word in ("STRUCT", "MAP") and self.at_punct("<"):
            self.take()
            if word == "MAP":
                key = self.type_spec("key").with_mode(DataMode.REQUIRED)
                self.expect_punct(",")
                value = self.type_spec("value")
                if self.at_word("NOT"):
                    self.take()
                    self.expect_word("NULL")
                    value = value.with_mode(DataMode.REQUIRED)
                self.expect_punct(">")
                return ColumnMetadata(name, MinorType.DICT, DataMode.OPTIONAL, (key, value))
            members: list[ColumnMetadata] = []
            while not self.at_punct(">"):
                members.append(self.column())
                if self.at_punct(","):
                    self.take()
            self.expect_punct(">")
            return ColumnMetadata(name, MinorType.MAP, DataMode.REQUIRED, members)
        if word == "INTERVAL":
            units = []
            while self.at_word(*_INTERVAL_UNITS, "TO"):
                units.append(self.take().text.upper())
                self.int_args()
            if units and units[0] in ("YEAR", "MONTH"):
                return ColumnMetadata(name, MinorType.INTERVALYEAR)
            if units:
                return ColumnMetadata(name, MinorType.INTERVALDAY)
            return ColumnMetadata(name, MinorType.INTERVAL)
        if word in ("DOUBLE",) and self.at_word("PRECISION"):
            self.take()
        if word in ("CHARACTER", "CHAR", "BINARY") and self.at_word("VARYING"):
            self.take()
        minor = _SIMPLE_TYPES.get(word)
        if minor is None:
            self.i -= 1
            self.fail("unknown type")
            raise AssertionError  # unreachable
        args = self.int_args()
        precision = args[0] if args else 0
        scale = args[1] if len(args) > 1 else 0
        if minor is MinorType.VARDECIMAL and not args:
            precision, scale = 38, 0
        return ColumnMetadata(name, minor, DataMode.OPTIONAL, None, precision, scale)


def _as_array(elem: ColumnMetadata) -> ColumnMetadata:
    """Wrap a parsed element type into the array column of the same name."""
    if elem.mode is DataMode.REPEATED:
        # ARRAY<ARRAY<...>>: a list whose element is itself an array.
        return ColumnMetadata(elem.name, MinorType.LIST, DataMode.REPEATED, (elem,))
    return elem.with_mode(DataMode.REPEATED)


def parse_schema(text: str) -> TupleSchema:
    """Parse a column list (optionally wrapped in parentheses) into a ``TupleSchema``.

    The same few texts are parsed again and again (a scan's schema, once per file of thousands
    of small ones), so parses are kept: each call gets its own copy of the schema (its columns
    are immutable values and are shared)."""
    return _parsed(text).copy()


@functools.lru_cache(maxsize=512)
def _parsed(text: str) -> TupleSchema:
    return _Parser(text).schema()


def parse_type(name: str, text: str) -> ColumnMetadata:
    """Parse one type (``INT NOT NULL``, ``ARRAY<VARCHAR>``) as a column called ``name``."""
    return parse_schema(f"`{name.replace('`', '``')}` {text}")[0]
