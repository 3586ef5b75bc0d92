"""The general text parser: Drill's quoting rules in Python, fed line by line so errors know where.

This path does everything Drill's text reader does, at a lower speed than pyarrow's: comment
lines, a leading blank header line, ragged rows, line delimiters other than ``\\n``/``\\r\\n``,
quotes where pyarrow's rules differ from Drill's (see :class:`_Parser`), and precise errors
(file, line, column) for unbalanced quotes, invalid UTF-8, oversized fields. The Arrow path
(``arrow_reader``) hands files over to it when it meets any of these. Lines without a quote are
split with ``str.split``; quoted fields are scanned with ``re``/``str.find`` jumps.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import IO, Any

from auger.errors import UserError
from auger.formats.text.text_options import MAX_FIELDS, TextOptions

__all__ = ["Record", "field_too_long", "in_open_quote", "iter_records", "too_many_fields"]

#: (first line number of the record, its fields)
Record = tuple[int, list[str]]

# Stand-ins for CR/LF inside records when the line delimiter is something else, so that the
# parser (which ends records at CR/LF) sees only our delimiter as a line end.
_LF, _CR = "\ue000", "\ue001"


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
    """Decoded lines for the parser, counting physical lines for error messages."""

    def __init__(self, stream: IO[bytes], o: TextOptions, path: str) -> None:
        self.path = path
        self.line_no = 0
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
                if not text:
                    continue
            if self._custom:
                body = text[: -len(self._delim)] if text.endswith(self._delim) else text
                text = body.replace("\n", _LF).replace("\r", _CR) + "\n"
            yield text


def _restore(fields: list[str]) -> list[str]:
    return [f.replace(_LF, "\n").replace(_CR, "\r") for f in fields]


class _OneLine:
    """The lines of a long-lived ``csv.reader``: the one line set before each read."""

    def __init__(self) -> None:
        self.line: str | None = None

    def __iter__(self) -> _OneLine:
        return self

    def __next__(self) -> str:
        line, self.line = self.line, None
        if line is None:
            raise StopIteration
        return line


class _Open(Exception):
    """The input ended inside a quoted field (field index given)."""

    def __init__(self, field: int) -> None:
        super().__init__(field)
        self.field = field


class _Parser:
    """Records by Drill's text rules, pulling lines from ``source`` as quoted fields need them.

    Drill's rules, which neither Python's ``csv`` module nor pyarrow follow on their own:

    - only a quote that is a field's first character opens a quoted field; elsewhere in an
      unquoted field it is an ordinary character (``ab"c`` reads ``ab"c``);
    - inside a quoted field a quote closes it only when a delimiter, a line end, white space or
      the end of the input follows; a doubled quote is one quote (when the escape is the quote);
      a quote followed by anything else is kept and the field goes on (``"not"end"`` reads
      ``not"end``);
    - white space between a closing quote and the delimiter is dropped; when more text follows
      it, the quote and the white space are kept and the field goes on;
    - an escape other than the quote escapes only a following quote (``~x`` stays ``~x``); with
      such an escape, text right after a closing quote is an error.

    Line ends: LF, CRLF, and (as pyarrow reads them) a lone CR outside quotes.
    """

    def __init__(self, lines: _Lines, o: TextOptions, path: str) -> None:
        self._lines = lines
        self._src = iter(lines)
        self._o = o
        self._path = path
        self._q = o.quote
        self._e = o.escape if o.quote else ""
        self._d = o.delimiter
        self._buf = ""
        self._pos = 0
        specials = sorted({self._q, self._e} - {""})
        self._special = re.compile("|".join(map(re.escape, specials))) if specials else None
        self._clean, dialect = _clean_line(o)
        self._feed = _OneLine()
        self._csv = csv.reader(self._feed, **dialect)

    def _more(self) -> bool:
        """Append the next line to the buffer; False at the end of the input."""
        line = next(self._src, None)
        if line is None:
            return False
        if self._pos >= len(self._buf):
            self._buf, self._pos = line, 0
        else:
            self._buf += line
        return True

    def _char(self, i: int) -> str:
        """The character at ``i`` ("" at the end of the input), pulling lines as needed."""
        while i >= len(self._buf):
            if not self._more():
                return ""
        return self._buf[i]

    def records(self) -> Iterator[Record]:
        """(first line number, fields) of each record; a blank line is ``[]``; comment lines
        are skipped."""
        q, d, comment = self._q, self._d, self._o.comment
        while True:
            if self._pos >= len(self._buf) and not self._more():
                return
            line_no = self._lines.line_no
            buf, start = self._buf, self._pos
            first = buf[start]
            if comment and first == comment:
                nl = buf.find("\n", start)
                self._pos = len(buf) if nl < 0 else nl + 1
                continue
            if start == 0 and (not q or q not in buf):
                # a whole line without quotes: split it (the common case, kept fast)
                body = buf[:-1] if buf.endswith("\n") else buf
                if body.endswith("\r"):
                    body = body[:-1]
                if "\r" not in body:
                    self._pos = len(buf)
                    yield line_no, (body.split(d) if body else [])
                    continue
            if start == 0 and self._clean is not None and self._clean.fullmatch(buf):
                # a whole line of plainly quoted fields, read alike by Drill and by the csv
                # module (a few times faster than the loop below)
                self._pos = len(buf)
                self._feed.line = buf
                yield line_no, next(self._csv)
                continue
            if first == "\n" or (first == "\r" and self._char(start + 1) in ("\n", "")):
                self._end_line(start)
                yield line_no, []
                continue
            try:
                yield line_no, self._record()
            except _Open as exc:
                raise UserError.data_read(
                    "Unbalanced quote: a quoted field is not closed before the end of the file",
                    [
                        f"File: {self._path}",
                        f"Line: {line_no}",
                        f"Column: {exc.field + 1}",
                        "Fix: close the quote, or set the format's quote to '\\u0000'",
                    ],
                ) from None

    def _record(self) -> list[str]:
        """The fields of the record at the buffer position; moves past its line end."""
        fields: list[str] = []
        d = self._d
        while True:
            i = self._pos
            if self._o.trim:  # Drill skips leading white space before looking for a quote
                while (c := self._char(i)) and c <= " " and c not in (d, "\n", "\r"):
                    i += 1
            if self._q and self._char(i) == self._q:
                value, i = self._quoted(i + 1, "", len(fields))
            else:
                value, i = self._plain(i)
            fields.append(value)
            if self._char(i) == d:
                self._pos = i + 1
                continue
            self._end_line(i)
            return fields

    def _end_line(self, i: int) -> None:
        """Move past the line end at ``i`` (CRLF, LF, a lone CR, or the end of the input)."""
        c = self._char(i)
        if c == "\r" and self._char(i + 1) == "\n":
            i += 1
        self._pos = i + 1 if c else i

    def _plain(self, i: int) -> tuple[str, int]:
        """An unquoted field from ``i``: everything up to the delimiter or the line end."""
        buf = self._buf
        nl = buf.find("\n", i)
        stop = len(buf) if nl < 0 else nl
        cut = buf.find(self._d, i, stop)
        if cut >= 0:
            stop = cut
        cr = buf.find("\r", i, stop)
        if cr >= 0:
            stop = cr
        return buf[i:stop], stop

    def _quoted(self, i: int, prev: str, field: int) -> tuple[str, int]:
        """The rest of a quoted field from ``i`` (after the opening quote); ``prev`` is the
        quote or escape just read and not yet decided, else "". Returns the value and the
        index of the character that ends the field (delimiter, line end or end of input)."""
        q, e, d = self._q, self._e, self._d
        if not prev:
            # the usual field: its next quote closes it, nothing to unescape
            buf = self._buf
            j = buf.find(q, i)
            if j >= 0 and (e == q or buf.find(e, i, j) < 0):
                after = self._char(j + 1)
                if after in (d, "\n", "\r", ""):
                    return self._buf[i:j], j + 1
        out: list[str] = []
        while True:
            if not prev and self._special is not None:
                # an ordinary run: copy it up to the next quote or escape
                while (m := self._special.search(self._buf, i)) is None:
                    out.append(self._buf[i:])
                    i = len(self._buf)
                    if not self._more():
                        raise _Open(field)
                out.append(self._buf[i : m.start()])
                i = m.start()
            c = self._char(i)
            if not c:
                if prev == q:
                    return "".join(out), i  # closed by the end of the input
                raise _Open(field)
            if prev == q and (c == d or c <= " "):
                break  # the closing quote
            if c == q:
                if prev == e:
                    out.append(q)  # an escaped (or doubled) quote
                    prev = ""
                else:
                    prev = q
                i += 1
                continue
            if prev == e:
                out.append(e)  # kept: an escape not before a quote, or a lone inner quote
            elif prev == q:
                raise self._unexpected(c, field)
            if c == e:
                prev = e
            else:
                out.append(c)
                prev = ""
            i += 1
        j = i
        while (c := self._char(j)) and c <= " " and c not in (d, "\n", "\r"):
            j += 1
        if not c or c in (d, "\n", "\r"):
            return "".join(out), j
        # more text after the quote and white space: both are kept, the field goes on
        out.append(q + self._buf[i:j])
        if c != e:
            out.append(c)
        rest, end = self._quoted(j + 1, c if c in (q, e) else "", field)
        out.append(rest)
        return "".join(out), end

    def _unexpected(self, c: str, field: int) -> UserError:
        return UserError.data_read(
            f"Unexpected character '{c}' after the closing quote of a field; expected the "
            f"delimiter '{self._d}'",
            [
                f"File: {self._path}",
                f"Line: {self._lines.line_no}",
                f"Column: {field + 1}",
                f"Fix: escape the quote with '{self._e}'",
            ],
        )


def _clean_line(o: TextOptions) -> tuple[re.Pattern[str] | None, dict[str, Any]]:
    """A pattern of the lines whose quotes Python's ``csv`` module reads as Drill does (each
    field unquoted without a quote, or quoted, closed right before a delimiter or the line
    end, with doubled quotes only), and the ``csv`` options to read them."""
    if not o.quote:
        return None, {}
    q, d = re.escape(o.quote), re.escape(o.delimiter)
    dialect: dict[str, Any] = {"delimiter": o.delimiter, "quotechar": o.quote, "strict": True}
    if o.escape == o.quote:
        quoted, plain = f"{q}[^{q}]*(?:{q}{q}[^{q}]*)*{q}", f"[^{q}{d}\r\n]*"
        dialect["doublequote"] = True
    else:
        e = re.escape(o.escape)  # lines with the escape go the long way
        quoted, plain = f"{q}[^{q}{e}]*{q}", f"[^{q}{d}{e}\r\n]*"
        dialect.update(doublequote=False, escapechar=o.escape)
    field = f"(?:{quoted}|{plain})"
    return re.compile(f"{field}(?:{d}{field})*\r?\n?"), dialect


def in_open_quote(text: str, o: TextOptions) -> bool:
    """Does this text end inside a quoted field (by Drill's rules)?"""
    lines = _Lines(io.BytesIO(text.encode("utf-8")), replace(o, skip_first_line=False), "")
    try:
        for _ in _Parser(lines, replace(o, comment=""), "").records():
            pass
    except UserError as exc:
        return exc.message.startswith("Unbalanced quote")
    return False


def too_many_fields(path: str, line: int, fields: int) -> UserError:
    """Drill's error for a record of more than :data:`MAX_FIELDS` fields, located.

    The limit is fixed (Drill's too), so the fix is in the file: such a record is nearly
    always several records run together (a line delimiter other than the format's, or a
    quote that is never closed) or a file of another format."""
    return UserError.unsupported(
        "Text file contains too many fields",
        [
            f"File: {path}",
            f"Line: {line}",
            f"Fields: {fields}",
            f"Limit: {MAX_FIELDS}",
            "Fix: check the file's line delimiter, field delimiter and quotes (a record this "
            "wide is usually many records run together), or split the record",
        ],
    )


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
    lines = _Lines(stream, o, path)
    first = True
    for line, row in _Parser(lines, o, path).records():
        is_first, first = first, False
        if not row and not is_first:
            continue
        if lines._custom:
            row = _restore(row)
        _check_sizes(row, o, path, line)
        yield line, row


def _check_sizes(row: list[str], o: TextOptions, path: str, line: int) -> None:
    if len(row) > MAX_FIELDS:
        raise too_many_fields(path, line, len(row))
    limit = o.max_field_bytes
    # characters are at most 4 bytes: only long fields need an exact byte count
    for i, field in enumerate(row):
        if len(field) * 4 > limit:
            size = len(field.encode("utf-8"))
            if size > limit:
                raise field_too_long(path, line, i + 1, size, limit)
