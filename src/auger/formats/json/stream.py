"""JSON records from a file, streamed: concatenated objects (NDJSON) or one top-level array.

The file is decoded in chunks and parsed with the C scanner of Python's ``json`` module
(``raw_decode``), so memory holds one chunk plus the record being parsed, and every record
knows its line. A malformed record is a DATA_READ error naming file, line and column, or, with
``skip_invalid``, a counted skip that resumes at the next line.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any, NoReturn

from auger.errors import UserError
from auger.formats.json.dialect import (
    DialectError,
    Incomplete,
    NotAllowed,
    parse_value,
    skip_comment,
)
from auger.formats.json.infer import MAX_DEPTH

__all__ = ["JsonStream", "json_error", "lone_surrogate"]

_CHUNK = 1 << 20
_WS = " \t\r\n"


def json_error(path: str, message: str, line: int, column: int | None = None) -> UserError:
    ctx = [f"File: {path}", f"Line: {line}"]
    if column is not None:
        ctx.append(f"Column: {column}")
    ctx.append(
        "Fix: ALTER SESSION SET `store.json.reader.skip_invalid_records` = true "
        "(or repair the record)"
    )
    return UserError.data_read(message, ctx)


# A JSON escape, read left to right so that an escaped backslash is one escape: ``\\ud800``
# is a backslash and the text "ud800", not a surrogate.
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)
_ESCAPE_BYTES = re.compile(rb"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)


def lone_surrogate(text: str | bytes, start: int = 0, end: int | None = None) -> int | None:
    """Where the first ``\\u`` escape of an unpaired UTF-16 surrogate is in JSON text (None
    when every surrogate escape is half of a pair).

    JSON spells a character beyond U+FFFF as two escapes, ``\\ud83d\\ude00``; one half alone
    (``"\\ud800"``) is no character at all: Python's decoder keeps it as a string no UTF-8
    encoder accepts (Arrow's, Spark's), and pyarrow's reader refuses the record. A record
    holding one is malformed, and the readers say where. Text without a backslash (nearly all)
    costs one byte search (memchr, a fraction of a millisecond per megabyte); text with
    backslashes but without ``\\ud``/``\\uD`` two substring searches more.
    """
    stop = len(text) if end is None else end
    if isinstance(text, bytes):
        if text.find(b"\\", start, stop) < 0:
            return None
        if text.find(b"\\ud", start, stop) < 0 and text.find(b"\\uD", start, stop) < 0:
            return None
        matches = _ESCAPE_BYTES.finditer(text, start, stop)
    else:
        if text.find("\\", start, stop) < 0:
            return None
        if text.find("\\ud", start, stop) < 0 and text.find("\\uD", start, stop) < 0:
            return None
        matches = _ESCAPE.finditer(text, start, stop)  # type: ignore[assignment]
    high: tuple[int, int] | None = None  # (start, end) of a high half awaiting its low half
    for m in matches:
        code = int(m.group(1), 16) if m.group(1) else -1
        if high is not None:
            if m.start() == high[1] and 0xDC00 <= code <= 0xDFFF:
                high = None
                continue
            return high[0]
        if 0xD800 <= code <= 0xDBFF:
            high = (m.start(), m.end())
        elif 0xDC00 <= code <= 0xDFFF:
            return m.start()
    return None if high is None else high[0]


@dataclass
class JsonStream:
    """Iterate ``(line, object)`` over the records of one JSON file.

    Attributes:
        skipped: records skipped as invalid so far (only with ``skip_invalid``).
    """

    fh: IO[bytes]
    path: str
    skip_invalid: bool = False
    all_text: bool = False
    allow_nan_inf: bool = True
    escape_any: bool = False
    skipped: int = 0
    skipped_lines: list[int] = field(default_factory=list)
    _buf: str = ""
    _pos: int = 0
    _line: int = 1  # line number at _pos
    _eof: bool = False
    _decoder: json.JSONDecoder = field(init=False)

    def __post_init__(self) -> None:
        kwargs: dict[str, Any] = {}
        if self.all_text:
            # keep the number's own text (1.50 stays "1.50"), as Drill's all-text mode does
            kwargs.update(parse_int=str, parse_float=str, parse_constant=str)
        if not self.allow_nan_inf:
            kwargs["parse_constant"] = _refuse_constant
        self._decoder = json.JSONDecoder(**kwargs)
        self._utf8 = codecs.getincrementaldecoder("utf-8")("strict")
        self._bytes_read = 0

    # ----------------------------------------------------------------- buffer
    def _fill(self, size: int = _CHUNK) -> bool:
        """Append more text to the buffer; False at the end of the file."""
        if self._eof:
            return False
        raw = self.fh.read(size)
        try:
            text = self._utf8.decode(raw, final=not raw)
        except UnicodeDecodeError as exc:
            good = raw[: max(exc.start, 0)].decode("utf-8", errors="replace")
            seen = self._buf[self._pos :] + good
            line = self._line + seen.count("\n")
            column = len(seen) - (seen.rfind("\n") + 1) + 1
            raise json_error(self.path, "JSON file is not valid UTF-8", line, column) from None
        if not raw:
            self._eof = True
        if self._bytes_read == 0 and text.startswith("\ufeff"):
            text = text[1:]  # a byte-order mark is not data
        self._bytes_read += len(raw)
        # drop what has been consumed (``_line`` already counts it)
        if self._pos:
            self._buf = self._buf[self._pos :]
            self._pos = 0
        self._buf += text
        return bool(raw) or bool(text)

    def _advance(self, to: int) -> None:
        self._line += self._buf.count("\n", self._pos, to)
        self._pos = to

    def _skip_ws(self, extra: str = "") -> str | None:
        """The next significant character (not consumed), or None at the end. Comments
        (``//`` and ``/* */``, Drill's dialect) count as white space."""
        chars = _WS + extra
        while True:
            buf, pos, n = self._buf, self._pos, len(self._buf)
            while pos < n and buf[pos] in chars:
                pos += 1
            self._advance(pos)
            if pos < n:
                if buf[pos] != "/":
                    return buf[pos]
                try:
                    self._advance(skip_comment(buf, pos, self._eof))
                except Incomplete:
                    self._fill()
                except DialectError as exc:
                    self._fail_at(exc)
                continue
            if not self._fill():
                return None

    @property
    def decoder(self) -> json.JSONDecoder:
        """The decoder records are parsed with (the options' number and constant rules)."""
        return self._decoder

    def _column(self, pos: int) -> int:
        return pos - (self._buf.rfind("\n", 0, pos) + 1) + 1

    # ---------------------------------------------------------------- records
    def __iter__(self) -> Iterator[tuple[int, Any]]:
        first = self._skip_ws()
        if first is None:
            return
        if first == "[":
            self._advance(self._pos + 1)
            yield from self._values(in_array=True)
        else:
            yield from self._values(in_array=False)

    def _values(self, in_array: bool) -> Iterator[tuple[int, Any]]:
        while True:
            ch = self._skip_ws("," if in_array else "")
            if ch is None:
                if in_array:
                    self._fail("Unexpected end of file: the top-level array is not closed")
                return
            if in_array and ch == "]":
                self._advance(self._pos + 1)
                rest = self._skip_ws()
                if rest is not None:
                    self._fail("Unexpected data after the top-level array")
                return
            line = self._line
            value = self._decode()
            if value is _SKIP:
                self.skipped_lines.append(line)
                continue
            if not isinstance(value, dict):
                if self.skip_invalid:
                    self.skipped += 1
                    self.skipped_lines.append(line)
                    continue
                raise json_error(
                    self.path,
                    f"Expected a JSON object at the top level but found {_kind_name(value)}",
                    line,
                )
            yield line, value

    def _skip_line(self) -> Any:
        """Count an invalid record skipped and go past the rest of its line in the buffer."""
        self.skipped += 1
        nl = self._buf.find("\n", self._pos)
        self._advance(len(self._buf) if nl < 0 else nl + 1)
        return _SKIP

    def _decode(self) -> Any:
        size = _CHUNK
        while True:
            try:
                try:
                    value, end = self._decoder.raw_decode(self._buf, self._pos)
                except json.JSONDecodeError as strict:
                    # not strict JSON: perhaps Drill's dialect (comments, unquoted names,
                    # any escaped character), which says in Drill's words where it breaks
                    value, end = self._dialect(strict)
            except Incomplete:
                size *= 2
                self._fill(size)
                continue
            except DialectError as exc:
                if self.skip_invalid:
                    # resume after the line where strict JSON broke: the dialect may have read
                    # on (``{oops`` takes the next line's brace for a colon's place)
                    return self._skip_from(min(exc.pos, exc.strict_pos or exc.pos))
                self._fail_at(exc)
            except (_NotAllowed, NotAllowed) as exc:
                if self.skip_invalid:
                    return self._skip_line()
                raise json_error(
                    self.path,
                    f"Error parsing JSON - Non-standard token '{exc}': {exc} is not allowed "
                    "while store.json.reader.allow_nan_inf is false",
                    self._line,
                ) from None
            except RecursionError:
                # deeper than Python's parser goes (about a thousand levels): Drill's parser
                # also stops at a maximum nesting depth
                if self.skip_invalid:
                    return self._skip_line()
                raise json_error(
                    self.path,
                    "Error parsing JSON - objects and arrays nested more than "
                    f"{MAX_DEPTH} levels deep; at most {MAX_DEPTH} are supported",
                    self._line,
                ) from None
            at = lone_surrogate(self._buf, self._pos, end)
            if at is not None:
                if self.skip_invalid:
                    self.skipped += 1
                    self._advance(end)
                    return _SKIP
                escape = self._buf[at : at + 6]
                line = self._line + self._buf.count("\n", self._pos, at)
                raise json_error(
                    self.path,
                    f"Error parsing JSON - the escape {escape} is half of a UTF-16 surrogate "
                    "pair without its other half",
                    line,
                    self._column(at),
                )
            self._advance(end)
            return value

    def _fail(self, message: str) -> None:
        raise json_error(self.path, message, self._line, self._column(self._pos))

    def _fail_at(self, exc: DialectError) -> NoReturn:
        at = max(exc.pos, self._pos)
        line = self._line + self._buf.count("\n", self._pos, at)
        raise json_error(
            self.path, f"Error parsing JSON - {exc.message}", line, self._column(at)
        ) from None

    def _skip_from(self, at: int) -> Any:
        """Count an invalid record skipped and resume after the line holding ``at``."""
        self.skipped += 1
        nl = self._buf.find("\n", max(at, self._pos))
        while nl < 0 and self._fill():
            nl = self._buf.find("\n", max(at, self._pos))
        self._advance(len(self._buf) if nl < 0 else nl + 1)
        return _SKIP

    def _dialect(self, strict: json.JSONDecodeError) -> tuple[Any, int]:
        """The record by Drill's dialect where the strict parser refused it. A record cut
        off by the end of the buffer reads more first (``Incomplete``)."""
        try:
            return parse_value(
                self._buf,
                self._pos,
                final=self._eof,
                allow_nan=self.allow_nan_inf,
                escape_any=self.escape_any,
                all_text=self.all_text,
            )
        except DialectError as exc:
            if not self._eof and self._buf.find("\n", strict.pos) < 0:
                raise Incomplete from None
            exc.strict_pos = strict.pos
            raise


_SKIP = object()


class _NotAllowed(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise _NotAllowed(name)


def _kind_name(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"
