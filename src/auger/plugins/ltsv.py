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

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

import pyarrow as pa

from auger.config import FormatConfig
from auger.errors import UserError
from auger.plugins.lines import LineFormatPlugin, LineReader
from auger.plugins.options import char_option, option
from auger.scan import SchemaNegotiator
from auger.scan.spec import FileSplit

__all__ = ["LtsvFormat", "LtsvOptions", "LtsvSyntaxError", "parse_line"]

PARSE_MODES = ("lenient", "strict")


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


def _line_values(
    line: str, opts: LtsvOptions, labels: dict[str, str], names: dict[str, str]
) -> dict[str, str] | None:
    """``parse_line``'s entries as lower-case label → value, for the reader's hot loop.

    ``labels`` caches each label as written → its lower-case key, so a label is trimmed and
    case-folded once per file rather than once per line; ``names`` gets each key's label as
    first met (trimmed). None for a line that needs ``parse_line`` itself: quotes or escapes,
    or an entry strict mode refuses (``parse_line`` raises there, saying where).
    """
    if opts.quote in line or opts.escape in line:
        return None
    kv = opts.kv_delimiter
    parts = [entry.partition(kv) for entry in line.split(opts.entry_delimiter)]
    if opts.strict:
        out = _checked_values(parts, opts, labels, names)
    else:
        try:  # every label met before: one comprehension
            out = {labels[label]: value.strip() for label, _, value in parts}
        except KeyError:
            out = _checked_values(parts, opts, labels, names)
    if out is not None and "" in out.values():
        # an empty value is no value (here also an entry without delimiter, in lenient mode)
        out = {key: value for key, value in out.items() if value}
    return out


def _checked_values(
    parts: list[tuple[str, str, str]],
    opts: LtsvOptions,
    labels: dict[str, str],
    names: dict[str, str],
) -> dict[str, str] | None:
    """``_line_values`` entry by entry: new labels, entries to skip, strict mode's refusals."""
    out: dict[str, str] = {}
    for raw_label, found, value in parts:
        label = raw_label.strip()
        if not found or not label:
            if opts.strict and (found or label):
                return None
            continue
        key = labels.get(raw_label)
        if key is None:
            key = labels[raw_label] = label.lower()
            names.setdefault(key, label)
        out[key] = value.strip()
    return out


def _template(
    line: str, opts: LtsvOptions, labels: dict[str, str]
) -> tuple[Callable[[str], re.Match[str] | None], tuple[str, ...]] | None:
    """A pattern for lines with the labels of ``line`` (a line without quote or escape, every
    entry ``label:value``, no label twice), in its order, and those labels' keys.

    A line it matches parses as ``_line_values`` would parse it once each value is trimmed
    (an empty one is no value), several times faster: each entry is the label as ``line``
    writes it, the delimiter, and the value up to the next entry delimiter, so every entry ends
    where ``split`` ends it and its label where ``partition`` does.
    """
    sep, kv = opts.entry_delimiter, opts.kv_delimiter
    parts = [entry.partition(kv) for entry in line.split(sep)]
    raw = [label for label, _, _ in parts]
    keys = tuple(labels.get(label, "") for label in raw)
    if not all(found for _, found, _ in parts) or "" in keys or len(set(keys)) < len(keys):
        return None
    # each label exactly as written here; a value is anything up to the next entry, trimmed
    # later (white space classes around it in the pattern would cost more than all the rest)
    value = f"([^{re.escape(sep)}]*)"
    entries = [re.escape(label + kv) + value for label in raw]
    return re.compile(re.escape(sep).join(entries)).fullmatch, keys


class LtsvReader(LineReader):
    """One file, one row per line with at least one ``label:value`` entry.

    Lines are parsed a batch's worth at a time and handed to the loader as one Arrow batch
    (``append_arrow``: the row and size limits of row writes, rows that do not fit carried to
    the next batch); a label met for the first time becomes a column there, as it would row by
    row, and a label the query does not name is never stored.
    """

    def __init__(self, path: str, options: LtsvOptions) -> None:
        super().__init__(path)
        self.options = options
        self.line_ending = options.line_ending

    def start(self, negotiator: SchemaNegotiator) -> None:
        self.negotiator = negotiator
        self.rows = negotiator.build().writer()
        # label (lower case) -> its column name (the label as first met), or None when the
        # query does not want it
        self.columns: dict[str, str | None] = {}
        self.labels: dict[str, str] = {}  # see _line_values
        self.names: dict[str, str] = {}
        #: the first clean line's labels as a pattern matching lines with the same ones
        self.template: tuple[Callable[[str], re.Match[str] | None], tuple[str, ...]] | None = None
        self.template_tried = False

    def next(self) -> bool:
        rows = self.rows
        if rows.is_full():
            return True  # rows of the last chunk that did not fit fill this batch
        room = rows.loader().target_row_count - rows.row_count()
        opts = self.options
        labels, names = self.labels, self.names
        # a record: the labels' values as a dict, or as a tuple in the template's order
        records: list[dict[str, str] | tuple[str, ...]] = []
        met: dict[str, str] = {}  # the chunk's projected labels in the order first met
        columns = self.columns
        last: tuple[str, ...] | None = None  # the labels of the last dict record
        uniform = True  # every record so far has the labels ``last``
        template = self.template
        if template is not None:  # its labels have their columns (or none) by now
            for key in template[1]:
                if (name := columns.get(key)) is not None:
                    met[key] = name
        special = (opts.quote, opts.escape)
        number = self.line_number
        more = False
        for number, line in self.numbered:
            if not line or line.isspace():
                continue
            if template is not None and special[0] not in line and special[1] not in line:
                match = template[0](line)
                if match is not None:
                    records.append(match.groups())
                    if len(records) >= room:
                        more = True
                        break
                    continue
            values = _line_values(line, opts, labels, names)
            if values is not None and template is None and self.template_tried is False:
                self.template_tried = True
                template = self.template = _template(line, opts, labels)
                if template is not None:
                    met.update(
                        (k, n) for k in template[1] if (n := self._named(k, names)) is not None
                    )
            if values is None:
                try:
                    entries = parse_line(line, opts)
                except LtsvSyntaxError as exc:
                    self.line_number = number
                    raise self._syntax_error(exc, line) from None
                values = {key: value for key, (_, value) in entries.items()}
                named = {key: label for key, (label, _) in entries.items()}
            else:
                named = None
            if not values:
                continue
            records.append(values)
            keys = tuple(values)
            if keys != last:  # most lines have the labels of the line before, in its order
                uniform = last is None
                last = keys
                for key in keys:
                    if key not in met:
                        if key in columns:
                            name = columns[key]
                        else:
                            name = self._column(key, named[key] if named else names[key])
                        if name is not None:
                            met[key] = name
            if len(records) >= room:
                more = True
                break
        self.line_number = number
        if records:
            rows.append_arrow(self._batch(records, met, last if uniform else None))
        return more

    def _named(self, key: str, names: dict[str, str]) -> str | None:
        columns = self.columns
        return columns[key] if key in columns else self._column(key, names[key])

    def _batch(
        self,
        records: list[dict[str, str] | tuple[str, ...]],
        met: dict[str, str],
        keys: tuple[str, ...] | None,
    ) -> pa.RecordBatch:
        """The records' projected labels as VARCHAR columns, in the order first met.

        ``keys``: the labels of every dict record, in order, when all have the same.
        """
        if not met:  # no label the query wants: rows without columns (COUNT(*))
            return pa.RecordBatch.from_struct_array(
                pa.array([{}] * len(records), type=pa.struct([]))
            )
        tuples = sum(1 for r in records if type(r) is tuple)
        by_key: dict[str, Sequence[str | None]] = {}
        if tuples == len(records) and self.template is not None:
            # every line matched the template: one transposition in C, then the values trimmed
            columns = zip(self.template[1], zip(*records, strict=True), strict=True)
            by_key = {k: list(map(str.strip, col)) for k, col in columns if k in met}
        else:
            if tuples:  # a mixed chunk: the template's records as dicts too
                tkeys = self.template[1] if self.template is not None else ()
                records = [
                    r
                    if type(r) is dict
                    else {k: t for k, v in zip(tkeys, r, strict=True) if (t := v.strip())}
                    for r in records
                ]
                keys = None
            dicts = cast(list[dict[str, str]], records)
            if keys is not None:  # one transposition in C
                by_key = dict(zip(keys, zip(*(e.values() for e in dicts)), strict=True))
            else:
                by_key = {key: [e.get(key) for e in dicts] for key in met}
        arrays = []
        for key in met:
            values = by_key.get(key)
            if values is None:
                values = [None] * len(records)
            elif "" in values:  # an empty value is no value
                values = [v or None for v in values]
            arrays.append(pa.array(values, type=pa.string()))
        return pa.RecordBatch.from_arrays(arrays, names=list(met.values()))

    def _column(self, key: str, label: str) -> str | None:
        name = label if self.negotiator.is_projected(label) else None
        self.columns[key] = name
        return name

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


class LtsvFormat(LineFormatPlugin):
    """Drill's ``ltsv`` plugin: columns are the labels the lines hold, met as they come."""

    type_name = "ltsv"
    extensions = ("ltsv",)

    def reader(self, file: FileSplit, config: FormatConfig) -> LtsvReader:
        return LtsvReader(file.path, LtsvOptions.from_config(config))
