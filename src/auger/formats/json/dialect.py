"""Drill's JSON dialect: what Drill's parser accepts beyond strict JSON, and its words for what
it refuses.

Drill reads JSON with comments (``// to the end of the line`` and ``/* ... */``) wherever
white space may stand, member names without quotes (``{ a : 1 }``, names made of letters,
digits, ``_`` and ``$`` not starting with a digit), NaN and ±Infinity unless
``store.json.reader.allow_nan_inf`` is false, and a backslash before any character (``\\S`` is
``S``) when ``store.json.reader.allow_escape_any_char`` is true.

Strict JSON is parsed by the C scanner of Python's ``json`` module; only a record it refuses
comes here (:func:`parse_value`), so plain files pay nothing for the dialect. The errors name
the fault as Drill's parser does (``Unrecognized character escape 'S' (code 83)``,
``Illegal unquoted character ((CTRL-CHAR, code 9)): ...``) with its offset in the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["DialectError", "Incomplete", "parse_value", "skip_comment"]


class DialectError(ValueError):
    """A record Drill's parser refuses: ``message`` in Drill's words, ``pos`` in the text."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos
        #: where strict JSON broke, when the dialect read on from there
        self.strict_pos: int | None = None


class Incomplete(Exception):
    """The text ended inside the value: more of the file may complete it."""


class NotAllowed(ValueError):
    """NaN or Infinity while they are refused (the token's name is the message)."""


_WS = " \t\r\n"
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?")
_NAME_START = re.compile(r"[A-Za-z_$]|[^\x00-\x7f]")
_NAME = re.compile(r"(?:[A-Za-z0-9_$]|[^\x00-\x7f])+")
_PLAIN = re.compile(r'[^"\\\x00-\x1f]*')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_WORD = re.compile(r"[A-Za-z0-9_$+\-.]+")
_VALUE_HINT = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"


def _char(c: str) -> str:
    """A character as Drill's parser names it: ``'x' (code 120)``, ``(CTRL-CHAR, code 9)``."""
    code = ord(c)
    if code < 32:
        return f"(CTRL-CHAR, code {code})"
    return f"'{c}' (code {code})"


def skip_comment(text: str, pos: int, final: bool) -> int:
    """The position after the comment starting at ``pos`` (text[pos] is ``/``)."""
    n = len(text)
    if pos + 1 >= n:
        if not final:
            raise Incomplete
        raise DialectError("Unexpected end-of-input: was expecting a comment", pos)
    kind = text[pos + 1]
    if kind == "/":
        nl = text.find("\n", pos + 2)
        if nl < 0:
            if not final:
                raise Incomplete
            return n
        return nl + 1
    if kind == "*":
        end = text.find("*/", pos + 2)
        if end < 0:
            if not final:
                raise Incomplete
            raise DialectError("Unexpected end-of-input in a comment", n)
        return end + 2
    raise DialectError(
        f"Unexpected character ({_char(kind)}): was expecting either '*' or '/' for a comment",
        pos + 1,
    )


class _Parser:
    def __init__(
        self,
        text: str,
        final: bool,
        allow_nan: bool,
        escape_any: bool,
        number: Callable[[str, bool], Any],
    ) -> None:
        self.s = text
        self.n = len(text)
        self.final = final
        self.allow_nan = allow_nan
        self.escape_any = escape_any
        self.number = number

    def end(self, pos: int, what: str) -> DialectError:
        if not self.final:
            raise Incomplete
        return DialectError(f"Unexpected end-of-input: {what}", pos)

    def ws(self, pos: int) -> int:
        s, n = self.s, self.n
        while True:
            while pos < n and s[pos] in _WS:
                pos += 1
            if pos < n and s[pos] == "/":
                pos = skip_comment(s, pos, self.final)
                continue
            return pos

    def value(self, pos: int, depth: int) -> tuple[Any, int]:
        s = self.s
        if pos >= self.n:
            raise self.end(pos, f"expected a valid value {_VALUE_HINT}")
        c = s[pos]
        if c == "{":
            return self.obj(pos + 1, depth + 1)
        if c == "[":
            return self.arr(pos + 1, depth + 1)
        if c == '"':
            return self.string(pos + 1)
        m = _WORD.match(s, pos)
        if m is None:
            raise DialectError(
                f"Unexpected character ({_char(c)}): expected a valid value {_VALUE_HINT}", pos
            )
        if m.end() >= self.n and not self.final:
            raise Incomplete
        word = m.group()
        if word in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[word], m.end()
        if word in ("NaN", "Infinity", "-Infinity", "+Infinity"):
            if not self.allow_nan:
                raise NotAllowed(word)
            return self.number(word.lstrip("+"), True), m.end()
        num = _NUMBER.match(s, pos)
        if num is not None and num.end() == m.end():
            return self.number(num.group(), bool(num.group(1) or num.group(2))), num.end()
        if c in "-0123456789":
            if len(word) > 1 and word[0] == "0" and word[1].isdigit():
                raise DialectError("Invalid numeric value: Leading zeroes not allowed", pos)
            raise DialectError(f"Invalid numeric value: malformed number '{word}'", pos)
        raise DialectError(f"Unrecognized token '{word}': was expecting {_VALUE_HINT}", pos)

    def string(self, pos: int) -> tuple[str, int]:
        s, n = self.s, self.n
        parts: list[str] = []
        while True:
            m = _PLAIN.match(s, pos)
            assert m is not None
            parts.append(m.group())
            pos = m.end()
            if pos >= n:
                raise self.end(pos, "was expecting closing quote for a string value")
            c = s[pos]
            if c == '"':
                return "".join(parts), pos + 1
            if c != "\\":
                raise DialectError(
                    f"Illegal unquoted character ({_char(c)}): has to be escaped using "
                    "backslash to be included in string value",
                    pos,
                )
            if pos + 1 >= n:
                raise self.end(pos, "was expecting closing quote for a string value")
            e = s[pos + 1]
            if e == "u":
                hexa = s[pos + 2 : pos + 6]
                if len(hexa) < 4 and not self.final:
                    raise Incomplete
                try:
                    code = int(hexa, 16) if len(hexa) == 4 and hexa.isalnum() else -1
                except ValueError:
                    code = -1
                if code < 0:
                    raise DialectError(
                        "Unexpected character in a \\u escape: expected a hex-digit", pos + 2
                    )
                parts.append(chr(code))
                pos += 6
                continue
            plain = _ESCAPES.get(e)
            if plain is None:
                if not self.escape_any:
                    raise DialectError(f"Unrecognized character escape {_char(e)}", pos + 1)
                plain = e
            parts.append(plain)
            pos += 2

    def name(self, pos: int) -> tuple[str, int]:
        s = self.s
        if s[pos] == '"':
            return self.string(pos + 1)
        if _NAME_START.match(s, pos) is None:
            raise DialectError(
                f"Unexpected character ({_char(s[pos])}): was expecting either valid name "
                "character (for unquoted name) or double-quote (for quoted) to start field name",
                pos,
            )
        m = _NAME.match(s, pos)
        assert m is not None
        if m.end() >= self.n and not self.final:
            raise Incomplete
        return m.group(), m.end()

    def obj(self, pos: int, depth: int) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        pos = self.ws(pos)
        if pos < self.n and self.s[pos] == "}":
            return out, pos + 1
        while True:
            if pos >= self.n:
                raise self.end(pos, "expected close marker for OBJECT")
            key, pos = self.name(pos)
            pos = self.ws(pos)
            if pos >= self.n:
                raise self.end(pos, "expected close marker for OBJECT")
            if self.s[pos] != ":":
                raise DialectError(
                    f"Unexpected character ({_char(self.s[pos])}): was expecting a colon to "
                    "separate field name and value",
                    pos,
                )
            value, pos = self.value(self.ws(pos + 1), depth)
            out[key] = value
            pos = self.ws(pos)
            if pos >= self.n:
                raise self.end(pos, "expected close marker for OBJECT")
            c = self.s[pos]
            if c == "}":
                return out, pos + 1
            if c != ",":
                raise DialectError(
                    f"Unexpected character ({_char(c)}): was expecting comma to separate "
                    "Object entries",
                    pos,
                )
            pos = self.ws(pos + 1)

    def arr(self, pos: int, depth: int) -> tuple[list[Any], int]:
        out: list[Any] = []
        pos = self.ws(pos)
        if pos < self.n and self.s[pos] == "]":
            return out, pos + 1
        while True:
            value, pos = self.value(pos, depth)
            out.append(value)
            pos = self.ws(pos)
            if pos >= self.n:
                raise self.end(pos, "expected close marker for ARRAY")
            c = self.s[pos]
            if c == "]":
                return out, pos + 1
            if c != ",":
                raise DialectError(
                    f"Unexpected character ({_char(c)}): was expecting comma to separate "
                    "Array entries",
                    pos,
                )
            pos = self.ws(pos + 1)


def _native_number(text: str, fractional: bool) -> Any:
    return float(text) if fractional else int(text)


def parse_value(
    text: str,
    pos: int,
    *,
    final: bool,
    allow_nan: bool = True,
    escape_any: bool = False,
    all_text: bool = False,
) -> tuple[Any, int]:
    """One JSON value of Drill's dialect at ``pos`` (comments before it skipped): the value
    and the position after it. Numbers keep their text in all-text mode.

    Raises:
        DialectError: the value is malformed (message in Drill's words, position).
        Incomplete: the text ends inside the value and ``final`` is false.
        NotAllowed: NaN or Infinity while ``allow_nan`` is false.
        RecursionError: nested too deep for Python's stack.
    """
    number = (lambda t, _f: t) if all_text else _native_number
    parser = _Parser(text, final, allow_nan, escape_any, number)
    return parser.value(parser.ws(pos), 0)
