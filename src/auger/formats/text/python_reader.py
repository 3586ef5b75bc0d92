"""The general text parser: Python's C ``csv`` module, fed line by line so errors know where.

This path does everything Drill's text reader does, at a lower speed than pyarrow's: comment
lines, a leading blank header line, ragged rows, line delimiters other than ``\\n``/``\\r\\n``,
and precise errors (file, line, column) for unbalanced quotes, invalid UTF-8, oversized fields.
The Arrow path (``arrow_reader``) hands files over to it when it meets any of these.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterable, Iterator
from typing import IO, Any

from auger.errors import UserError
from auger.formats.text.options import MAX_FIELDS, TextOptions

__all__ = ["Record", "field_too_long", "in_open_quote", "iter_records", "too_many_fields"]

#: (first line number of the record, its fields)
Record = tuple[int, list[str]]

# Stand-ins for CR/LF inside records when the line delimiter is something else, so that the
# csv module (which always ends records at CR/LF) sees only our delimiter as a line end.
_LF, _CR = "\ue000", "\ue001"


def _dialect(o: TextOptions) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"delimiter": o.delimiter, "strict": False}
    if not o.quote:
        kwargs["quoting"] = csv.QUOTE_NONE
        kwargs["escapechar"] = None
    else:
        kwargs["quotechar"] = o.quote
        kwargs["doublequote"] = o.escape == o.quote
        if o.escape != o.quote:
            kwargs["escapechar"] = o.escape
    return kwargs


def _utf8_error(path: str, line: int, raw: bytes, exc: UnicodeDecodeError) -> UserError:
    column = len(raw[: exc.start].decode("utf-8", errors="replace")) + 1
    return UserError.data_read(
        "Text file is not valid UTF-8",
        [
            f"File: {path}",
            f"Line: {line}",
            f"Character: {column}",
            "Fix: convert the file to UTF-8",
        ],
    )


def _split_custom(stream: IO[bytes], delimiter: bytes) -> Iterator[bytes]:
    """Pieces of the stream ended by a custom line delimiter (the delimiter kept)."""
    pending = b""
    while True:
        chunk = stream.read(1 << 20)
        if not chunk:
            break
        pending += chunk
        parts = pending.split(delimiter)
        pending = parts.pop()
        for part in parts:
            yield part + delimiter
    if pending:
        yield pending


class _Lines:
    """Decoded lines for the csv module, remembering the raw lines of the current record."""

    def __init__(self, stream: IO[bytes], o: TextOptions, path: str) -> None:
        self.path = path
        self.line_no = 0
        self.current: list[str] = []
        self._custom = not o.standard_lines
        self._skip_first = o.skip_first_line
        self._delim = o.line_delimiter
        self._source: Iterable[bytes] = (
            _split_custom(stream, o.line_delimiter.encode("utf-8")) if self._custom else stream
        )

    def __iter__(self) -> Iterator[str]:
        for raw in self._source:
            self.line_no += 1
            if self.line_no == 1 and self._skip_first:
                continue  # skip_first_line drops the first physical line, whatever it holds
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _utf8_error(self.path, self.line_no, raw, exc) from None
            if self.line_no == 1 and text.startswith("\ufeff"):
                text = text[1:]  # a byte-order mark is not data (pyarrow drops it too)
            if self._custom:
                body = text[: -len(self._delim)] if text.endswith(self._delim) else text
                text = body.replace("\n", _LF).replace("\r", _CR) + "\n"
            self.current.append(text)
            yield text


def _restore(fields: list[str]) -> list[str]:
    return [f.replace(_LF, "\n").replace(_CR, "\r") for f in fields]


def in_open_quote(text: str, o: TextOptions) -> bool:
    """Does this record's raw text end inside a quoted field (an unbalanced quote)?"""
    inside, at_start, i, n = False, True, 0, len(text)
    while i < n:
        ch = text[i]
        if inside:
            if o.escape != o.quote and ch == o.escape:
                i += 2
                continue
            if ch == o.quote:
                if o.escape == o.quote and i + 1 < n and text[i + 1] == o.quote:
                    i += 2
                    continue
                inside = False
        else:
            if ch == o.quote and at_start:
                inside = True
            at_start = ch in (o.delimiter, "\n", "\r")
        i += 1
    return inside


def too_many_fields() -> UserError:
    return UserError.unsupported("Text file contains too many fields", [f"Limit: {MAX_FIELDS}"])


def field_too_long(path: str, line: int | None, column: int, size: int, limit: int) -> UserError:
    ctx = [f"File: {path}"]
    if line is not None:
        ctx.append(f"Line: {line}")
    ctx += [
        f"Column: {column}",
        f"Field size: {size} bytes",
        f"Limit: {limit} bytes",
        "Fix: check the quotes before this field, or raise auger.scan.text_max_field_bytes",
    ]
    return UserError.data_read("Text field exceeds the maximum field size", ctx)


def iter_records(stream: IO[bytes], o: TextOptions, path: str) -> Iterator[Record]:
    """Every record of a text file with its first line number, in file order.

    Comment lines (first character is the comment character) and blank lines are dropped,
    except a blank first line, returned as ``[]`` so that a blank header can be reported.

    Raises:
        UserError: DATA_READ for invalid UTF-8, an unbalanced quote or an oversized field.
    """
    if csv.field_size_limit() < sys.maxsize:
        csv.field_size_limit(sys.maxsize)  # sizes are checked here, in bytes, with context
    lines = _Lines(stream, o, path)
    reader = csv.reader(lines, **_dialect(o))
    held: tuple[int, list[str], str] | None = None  # one record held back for the quote check
    first = True
    start = 1
    try:
        for row in reader:
            raw = "".join(lines.current)
            lines.current = []
            line, start = start, lines.line_no + 1
            is_first, first = first, False
            if (not row and not is_first) or (o.comment and raw.startswith(o.comment)):
                continue
            if lines._custom:
                row = _restore(row)
            if held is not None:
                yield held[0], held[1]
            _check_sizes(row, o, path, line)
            held = (line, row, raw)
    except csv.Error as exc:
        raise UserError.data_read(
            f"Malformed text: {exc}", [f"File: {path}", f"Line: {lines.line_no}"]
        ) from None
    if held is not None:
        if o.quote and o.quote in held[2] and in_open_quote(held[2], o):
            raise UserError.data_read(
                "Unbalanced quote: a quoted field is not closed before the end of the file",
                [
                    f"File: {path}",
                    f"Line: {held[0]}",
                    f"Column: {_open_quote_field(held[2], o) + 1}",
                    "Fix: close the quote, or set the format's quote to '\\u0000'",
                ],
            )
        yield held[0], held[1]


def _open_quote_field(text: str, o: TextOptions) -> int:
    """0-based index of the field in which the unclosed quote starts (best effort)."""
    for i in range(len(text), 0, -1):
        if in_open_quote(text[:i], o) and not in_open_quote(text[: i - 1], o):
            return text[: i - 1].count(o.delimiter)
    return 0


def _check_sizes(row: list[str], o: TextOptions, path: str, line: int) -> None:
    if len(row) > MAX_FIELDS:
        raise too_many_fields()
    limit = o.max_field_bytes
    # characters are at most 4 bytes: only long fields need an exact byte count
    for i, field in enumerate(row):
        if len(field) * 4 > limit:
            size = len(field.encode("utf-8"))
            if size > limit:
                raise field_too_long(path, line, i + 1, size, limit)
