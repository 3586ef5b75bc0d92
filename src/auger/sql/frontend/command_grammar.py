"""Drill statements that sqlglot does not parse, each a tiny grammar and a frozen value.

``ALTER SESSION|SYSTEM SET|RESET``, ``SET``/``RESET``, ``USE``, ``SHOW SCHEMAS|DATABASES`` here;
the metadata and DDL statements of :mod:`auger.sql.frontend.statement_grammar` after them.
:func:`parse_command` returns None for anything else, which then goes to sqlglot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from auger.errors import UserError
from auger.sql.frontend.statement_grammar import parse_statement_command

__all__ = ["ResetOption", "SetOption", "ShowSchemas", "UseSchema", "parse_command", "parse_literal"]


@dataclass(frozen=True)
class SetOption:
    scope: str  # SESSION or SYSTEM
    name: str
    value: Any  # None: show the current value (``SET `x```)
    has_value: bool


@dataclass(frozen=True)
class ResetOption:
    scope: str
    name: str | None  # None: RESET ALL


@dataclass(frozen=True)
class UseSchema:
    name: str


@dataclass(frozen=True)
class ShowSchemas:
    like: str | None
    where: str | None = None  # the condition of ``WHERE ...``, as written


_NAME = r"(`[^`]+`|[A-Za-z_][\w.$]*)"
_SET = re.compile(
    rf"^(?:ALTER\s+(?P<scope>SESSION|SYSTEM)\s+)?SET\s+{_NAME}\s*(?:=\s*(?P<value>.+?))?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_RESET = re.compile(
    rf"^(?:ALTER\s+(?P<scope>SESSION|SYSTEM)\s+)?RESET\s+(?:(?P<all>ALL)|{_NAME})\s*$",
    re.IGNORECASE | re.DOTALL,
)
_USE = re.compile(r"^USE\s+(?P<name>.+?)\s*$", re.IGNORECASE | re.DOTALL)
_SHOW_SCHEMAS = re.compile(
    r"^SHOW\s+(?:SCHEMAS|DATABASES)"
    r"(?:\s+LIKE\s+'(?P<like>(?:[^']|'')*)'|\s+WHERE\s+(?P<where>\S.*?))?\s*$",
    re.IGNORECASE | re.DOTALL,
)


def _unquote(name: str) -> str:
    return name[1:-1] if name.startswith("`") and name.endswith("`") else name


def _schema_name(text: str) -> str:
    parts = re.findall(r"`([^`]*)`|([^.`\s]+)", text.strip())
    return ".".join(a or b for a, b in parts)


def parse_literal(text: str) -> Any:
    """A SET value: a quoted string, a number, or TRUE/FALSE; anything else is refused."""
    t = text.strip()
    if len(t) >= 2 and t[0] == "'" and t[-1] == "'":
        return t[1:-1].replace("''", "'")
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    if re.fullmatch(r"[-+]?\d+", t):
        return int(t)
    if re.fullmatch(r"[-+]?(\d+\.\d*|\.\d+|\d+)(e[-+]?\d+)?", t, re.IGNORECASE):
        return float(t)
    raise UserError.validation(
        "Drill does not support assigning non-literal values in SET statements."
    )


def parse_command(sql: str) -> object | None:
    text = sql.strip().rstrip(";").strip()
    m = _SET.match(text)
    if m:
        scope = (m.group("scope") or "SESSION").upper()
        name = _unquote(m.group(2))
        raw = m.group("value")
        value = parse_literal(raw) if raw is not None else None
        return SetOption(scope, name, value, raw is not None)
    m = _RESET.match(text)
    if m:
        scope = (m.group("scope") or "SESSION").upper()
        return ResetOption(scope, None if m.group("all") else _unquote(m.group(3)))
    m = _USE.match(text)
    if m:
        return UseSchema(_schema_name(m.group("name")))
    m = _SHOW_SCHEMAS.match(text)
    if m:
        like = m.group("like")
        return ShowSchemas(like.replace("''", "'") if like is not None else None, m.group("where"))

    return parse_statement_command(text)
