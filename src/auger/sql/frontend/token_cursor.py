"""A tiny token cursor for the Drill statements sqlglot cannot parse.

The grammars of ``SHOW FILES``, ``CREATE SCHEMA ... FOR TABLE``, ``CREATE VIEW`` and friends
are a handful of keywords, compound names, strings and one parenthesised list each; a cursor
over words, backticked names, strings and punctuation is all they need. Errors point at the
line and column of the offending token, as Drill's parser does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from auger.errors import UserError

__all__ = ["Cursor", "Token", "split_schema_path"]

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+|--[^\n]*|/\*.*?\*/)
    |(?P<quoted>`(?:[^`]|``)*`)
    |(?P<string>'(?:[^']|'')*')
    |(?P<word>[A-Za-z_$][\w$]*)
    |(?P<number>[-+]?\d+(?:\.\d*)?)
    |(?P<punct>.)
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class Token:
    kind: str  # quoted, string, word, number, punct
    text: str
    start: int
    end: int

    @property
    def value(self) -> str:
        """Identifier or string content without quotes."""
        if self.kind == "quoted":
            return self.text[1:-1].replace("``", "`")
        if self.kind == "string":
            return self.text[1:-1].replace("''", "'")
        return self.text


def _tokens(text: str) -> list[Token]:
    out: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:  # an unterminated quote or string
            raise UserError.parse(f"Lexical error at {_where(text, pos)}: unterminated quote")
        kind = m.lastgroup or "punct"
        if kind != "ws":
            out.append(Token(kind, m.group(0), m.start(), m.end()))
        pos = m.end()
    return out


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line}, column {col}"


class Cursor:
    """Walks the tokens of one statement (trailing ``;`` already removed)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    # ----- looking
    def peek(self, offset: int = 0) -> Token | None:
        j = self.i + offset
        return self.toks[j] if j < len(self.toks) else None

    def at(self, *words: str) -> bool:
        """True when the next tokens are these keywords (case-insensitive)."""
        for k, word in enumerate(words):
            t = self.peek(k)
            if t is None or t.kind != "word" or t.text.upper() != word.upper():
                return False
        return True

    def at_punct(self, p: str) -> bool:
        t = self.peek()
        return t is not None and t.kind == "punct" and t.text == p

    def at_end(self) -> bool:
        return self.i >= len(self.toks)

    # ----- taking
    def take(self) -> Token:
        t = self.peek()
        if t is None:
            self.fail()
        assert t is not None
        self.i += 1
        return t

    def accept(self, *words: str) -> bool:
        if self.at(*words):
            self.i += len(words)
            return True
        return False

    def expect(self, *words: str) -> None:
        for word in words:
            if not self.accept(word):
                self.fail()

    def expect_punct(self, p: str) -> None:
        if not self.at_punct(p):
            self.fail()
        self.i += 1

    def string(self) -> str:
        t = self.peek()
        if t is None or t.kind != "string":
            self.fail()
        self.i += 1
        return t.value  # type: ignore[union-attr]

    def name(self) -> list[str]:
        """A compound identifier: parts separated by dots, bare or backticked."""
        parts = [self._part()]
        while self.at_punct(".") and self.peek(1) is not None:
            self.i += 1
            parts.append(self._part())
        return parts

    def _part(self) -> str:
        t = self.peek()
        if t is None or t.kind not in ("word", "quoted"):
            self.fail()
        self.i += 1
        return t.value  # type: ignore[union-attr]

    def balanced(self) -> str:
        """The text inside the parentheses that start here (nesting, strings respected)."""
        self.expect_punct("(")
        start = self.toks[self.i - 1].end
        depth = 1
        while True:
            t = self.take()
            if t.kind == "punct" and t.text == "(":
                depth += 1
            elif t.kind == "punct" and t.text == ")":
                depth -= 1
                if depth == 0:
                    return self.text[start : t.start]

    def rest(self) -> str:
        """The remaining text, from the next token on."""
        t = self.peek()
        return "" if t is None else self.text[t.start :].strip()

    def end(self) -> None:
        if not self.at_end():
            self.fail()

    def fail(self, message: str | None = None) -> None:
        t = self.peek()
        if t is None:
            where = _where(self.text, len(self.text))
            raise UserError.parse(
                message or f'Encountered "<EOF>" at {where}.', [f"SQL Query: {self.text}"]
            )
        raise UserError.parse(
            message or f'Encountered "{t.text}" at {_where(self.text, t.start)}.',
            [f"SQL Query: {self.text}"],
        )


def split_schema_path(parts: list[str]) -> list[str]:
    """Schema name parts with dotted parts (```dfs.tmp```) split: Drill accepts both forms."""
    out: list[str] = []
    for p in parts:
        out.extend(x for x in p.split(".") if x)
    return out
