"""Drill's ``ltsv`` format: Labeled Tab-Separated Values, one record per line.

A line is ``label:value`` entries separated by tabs (``host:10.0.0.1<TAB>status:200``). Every
label met becomes a nullable VARCHAR column, added when it is first met (a late schema), so a
file's columns are the union of its lines' labels in the order they appear. A provided schema
(``.drill.schema`` or a table function's ``schema => 'inline=(...)'``) types them; the scan
converts the text.

Options, under Drill's camelCase names or their snake_case forms: ``parseMode`` (``lenient``, the
default, or ``strict``), ``escapeCharacter`` (``\\``), ``kvDelimiter`` (``:``),
``entryDelimiter`` (tab), ``lineEnding`` (newline) and ``quoteChar`` (``"``), each of the last
five one character.

What a line may hold: labels and values are trimmed; an empty value is no value (the column stays
null); a value that starts with the quote character runs to the closing quote, delimiters
included; the escape character makes the next character literal; empty lines, and lines with no
``label:value`` entry at all, give no row; a label met twice in a line keeps its last value.
Entries that break the format (no delimiter, an empty label, a quote or escape in a label, a
quote left open) fail the query in ``strict`` mode, with the line and position. ``lenient`` mode
recovers: it skips an entry without a delimiter or without a label, takes a quote or escaped
character in a label literally, and closes an open quote at the end of the line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.base import open_input
from auger.plugins.options import char_option, option
from auger.resultset.writers.scalar import ScalarWriter
from auger.scan import FormatReader, ReaderFormatPlugin, SchemaNegotiator
from auger.scan.spec import FileSplit
from auger.types import ColumnMetadata, MinorType

__all__ = ["LtsvFormat", "LtsvOptions", "LtsvSyntaxError", "parse_line"]

PARSE_MODES = ("lenient", "strict")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class LtsvOptions:
    """An ``ltsv`` format's options, checked once."""

    strict: bool = False
    escape: str = "\\"
    kv_delimiter: str = ":"
    entry_delimiter: str = "\t"
    line_ending: str = "\n"
    quote: str = '"'

    @classmethod
    def from_config(cls, config: FormatConfig) -> LtsvOptions:
        mode = str(option(config, "parseMode", "lenient") or "lenient").strip().lower()
        if mode not in PARSE_MODES:
            raise UserError.validation(
                f"Format [{config.name}]: parseMode [{mode}] is not one of "
                f"{', '.join(PARSE_MODES)}",
                ["Fix: set parseMode = 'lenient' (skip bad entries) or 'strict' (fail on them)"],
            )
        opts = cls(
            strict=mode == "strict",
            escape=char_option(config, "escapeCharacter", cls.escape),
            kv_delimiter=char_option(config, "kvDelimiter", cls.kv_delimiter),
            entry_delimiter=char_option(config, "entryDelimiter", cls.entry_delimiter),
            line_ending=char_option(config, "lineEnding", cls.line_ending),
            quote=char_option(config, "quoteChar", cls.quote),
        )
        roles = {
            "escapeCharacter": opts.escape,
            "kvDelimiter": opts.kv_delimiter,
            "entryDelimiter": opts.entry_delimiter,
            "lineEnding": opts.line_ending,
            "quoteChar": opts.quote,
        }
        if len(set(roles.values())) < len(roles):
            raise UserError.validation(
                f"Format [{config.name}]: two of the LTSV characters are the same: "
                + ", ".join(f"{k} = {v!r}" for k, v in roles.items()),
                ["Fix: give each of these options its own character"],
            )
        return opts


class LtsvSyntaxError(ValueError):
    """An entry that breaks the format; ``position`` is 1-based within the line."""

    def __init__(self, what: str, position: int) -> None:
        super().__init__(what)
        self.what = what
        self.position = position


def parse_line(line: str, opts: LtsvOptions) -> dict[str, tuple[str, str]]:
    """The ``label:value`` entries of one line, keyed by lower-case label (as columns are).

    Each value is ``(label as written, value)``; entries without a value are left out. Raises
    ``LtsvSyntaxError`` in strict mode for an entry that breaks the format; lenient mode skips it.
    """
    if opts.quote in line or opts.escape in line:
        return _parse_quoted(line, opts)
    out: dict[str, tuple[str, str]] = {}
    kv = opts.kv_delimiter
    position = 1
    for entry in line.split(opts.entry_delimiter):
        start = position
        position += len(entry) + 1
        label, found, value = entry.partition(kv)
        label = label.strip()
        if not found:
            if label and opts.strict:
                raise LtsvSyntaxError("Key without a value", start)
            continue
        value = value.strip()
        if not label:
            if opts.strict:
                raise LtsvSyntaxError("Empty key detected", start)
            continue
        if value:
            out[label.lower()] = (label, value)
    return out


def _parse_quoted(line: str, opts: LtsvOptions) -> dict[str, tuple[str, str]]:
    """``parse_line`` for a line with quote or escape characters: one character at a time."""
    out: dict[str, tuple[str, str]] = {}
    esc, quote, kv, sep = opts.escape, opts.quote, opts.kv_delimiter, opts.entry_delimiter
    strict = opts.strict
    label: list[str] = []
    value: list[str] = []
    in_value = quoted = was_quoted = False
    start = 1  # position of the entry's first character

    def finish() -> None:
        name = "".join(label).strip()
        text = "".join(value) if was_quoted else "".join(value).strip()
        if not in_value:
            if name and strict:
                raise LtsvSyntaxError("Key without a value", start)
        elif not name:
            if strict:
                raise LtsvSyntaxError("Empty key detected", start)
        elif text:
            out[name.lower()] = (name, text)

    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == esc:
            # the next character is literal; in a label only lenient mode allows it
            if not in_value and strict:
                raise LtsvSyntaxError(f"Unexpected escape token [{esc}]", i + 1)
            if i + 1 < n:
                (value if in_value else label).append(line[i + 1])
            i += 2
            continue
        if quoted:
            if c == quote:
                quoted = False
            else:
                value.append(c)
        elif c == sep:
            finish()
            label, value = [], []
            in_value = was_quoted = False
            start = i + 2
        elif not in_value:
            if c == kv:
                in_value = True
            elif c == quote and strict:
                raise LtsvSyntaxError(f"Unexpected quote token [{quote}]", i + 1)
            else:
                label.append(c)
        elif c == quote and not value and not was_quoted:
            quoted = was_quoted = True
        else:
            value.append(c)
        i += 1
    if quoted and strict:
        raise LtsvSyntaxError(f"Unclosed quote token [{quote}]", n)
    finish()
    return out


def _records(file: IO[bytes], ending: str) -> Iterator[bytes]:
    """The file's records, split at ``ending`` (lines unless configured otherwise)."""
    if ending == "\n":
        yield from file
        return
    mark = ending.encode("utf-8")
    tail = b""
    while chunk := file.read(_CHUNK):
        parts = (tail + chunk).split(mark)
        tail = parts.pop()
        yield from parts
    if tail:
        yield tail


class LtsvReader(FormatReader):
    """One file, one row per line with at least one ``label:value`` entry."""

    def __init__(self, path: str, options: LtsvOptions) -> None:
        self.path = path
        self.options = options
        self.file: IO[bytes] | None = None
        self.line_number = 0

    def open(self, negotiator: SchemaNegotiator) -> bool:
        self.negotiator = negotiator
        self.rows = negotiator.build().writer()
        # label (lower case) -> its writer, or None when the query does not want it
        self.writers: dict[str, ScalarWriter | None] = {}
        self.file = open_input(self.path)
        self.records = _records(self.file, self.options.line_ending)
        return True

    def _writer(self, key: str, label: str) -> ScalarWriter | None:
        rows = self.rows
        writer: ScalarWriter | None = None
        if self.negotiator.is_projected(label):
            if rows.index(label) < 0:
                rows.add_column(ColumnMetadata.optional(label, MinorType.VARCHAR))
            writer = rows.scalar(label)
        self.writers[key] = writer
        return writer

    def next(self) -> bool:
        rows = self.rows
        opts = self.options
        writers = self.writers
        for raw in self.records:
            self.line_number += 1
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if not line.strip():
                continue
            try:
                entries = parse_line(line, opts)
            except LtsvSyntaxError as exc:
                raise self._syntax_error(exc, line) from None
            if not entries:
                continue
            rows.start()
            for key, (label, value) in entries.items():
                writer = writers[key] if key in writers else self._writer(key, label)
                if writer is not None:
                    writer.set_string(value)
            rows.save()
            if rows.is_full():
                return True
        return False

    def _syntax_error(self, exc: LtsvSyntaxError, line: str) -> UserError:
        n = self.line_number
        return UserError.data_read(
            f"{exc.what} at line [{n}] position [{exc.position}]",
            [
                f"Line: {n}",
                f"Text: {line[:200]}",
                "Fix: correct the line, or set parseMode = 'lenient' to skip such entries",
            ],
        )

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


class LtsvFormat(ReaderFormatPlugin):
    """Drill's ``ltsv`` plugin: columns are the labels the lines hold, met as they come."""

    type_name = "ltsv"
    extensions = ("ltsv",)

    def reader(self, file: FileSplit, config: FormatConfig) -> LtsvReader:
        return LtsvReader(file.path, LtsvOptions.from_config(config))
