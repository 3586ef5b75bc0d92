"""Drill's ``logRegex`` format: each line of a file split into columns by a regular expression.

Configured as Drill configures it (``regex``, ``extension``, ``maxErrors``, ``schema`` as a list
of ``{fieldName, fieldType, format}``), under Drill's camelCase names or their snake_case forms.
With a schema, every capturing group is a column: the schema's names in order, ``field_N``
(from 0) for groups it does not name; types VARCHAR (the default), INT, SMALLINT, BIGINT,
FLOAT4, FLOAT8, DATE, TIME and TIMESTAMP, the temporal ones parsed with the field's Java
``format``. Without a schema (none configured, none in a table function, and no Python named
group ``(?P<name>...)`` naming a column), the groups are one ``columns`` array of VARCHAR, as
Drill gives them: ``SELECT *`` shows the array, ``columns[0]`` reads the first group, and a
group that took no part in the match is "".

Two special columns come only when a query names them, never with ``*``: ``_raw``, the whole
line, and ``_unmatched_rows``, a line the pattern did not match. A line that does not match, or
whose value does not convert to its column's type, is an error; up to ``maxErrors`` (default
10) of them are skipped, one more fails the scan with the file and line. When the query names
``_unmatched_rows``, unmatched lines are rows instead of errors (with only that column named,
the matching lines are left out, as in Drill).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from auger.config import FormatConfig
from auger.errors import UserError
from auger.plugins.bad_lines import BadLines
from auger.plugins.lines import LineFormatPlugin, LineReader
from auger.plugins.options import int_option, option
from auger.resultset.convert import converter_for
from auger.scan import SchemaNegotiator
from auger.scan.spec import FileSplit
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.arrow import column_to_arrow
from auger.types.java_format import strptime_pattern

__all__ = ["LogRegexFormat", "LogRegexOptions"]

RAW = "_raw"
#: the array holding every group when no schema names them
COLUMNS = "columns"
UNMATCHED = "_unmatched_rows"
DEFAULT_MAX_ERRORS = 10

_TYPES: dict[str, MinorType] = {
    "VARCHAR": MinorType.VARCHAR,
    "INT": MinorType.INT,
    "INTEGER": MinorType.INT,
    "SMALLINT": MinorType.SMALLINT,
    "BIGINT": MinorType.BIGINT,
    "FLOAT4": MinorType.FLOAT4,
    "FLOAT": MinorType.FLOAT4,
    "FLOAT8": MinorType.FLOAT8,
    "DOUBLE": MinorType.FLOAT8,
    "DATE": MinorType.DATE,
    "TIME": MinorType.TIME,
    "TIMESTAMP": MinorType.TIMESTAMP,
}

#: Java's named group ``(?<name>...)`` is Python's ``(?P<name>...)``; look-behinds stay.
_JAVA_NAMED_GROUP = re.compile(r"\(\?<(?![=!])")


@dataclass(frozen=True)
class LogField:
    name: str
    type: MinorType
    format: str | None


@dataclass(frozen=True)
class LogRegexOptions:
    """A ``logRegex`` format's options, checked once."""

    regex: re.Pattern[str]
    fields: tuple[LogField, ...]
    max_errors: int
    #: no schema names the groups: they are one ``columns`` array (Drill's rule)
    as_array: bool = False

    @classmethod
    def from_config(cls, config: FormatConfig) -> LogRegexOptions:
        text = option(config, "regex")
        if not text:
            raise UserError.validation(
                f"Format [{config.name}] of type logRegex has no regex",
                ["Fix: set regex = '(\\d+) (\\w+) (.*)' in the format's options"],
            )
        try:
            regex = re.compile(_JAVA_NAMED_GROUP.sub("(?P<", str(text)))
        except re.error as exc:
            raise UserError.validation(
                f"Format [{config.name}]: the regex [{text}] is invalid: {exc}",
                ["Fix: correct the regex; groups in parentheses become columns"],
            ) from None
        if regex.groups == 0:
            raise UserError.validation(
                f"Format [{config.name}]: the regex [{text}] has no groups, so no columns",
                ["Fix: put the parts to extract in parentheses"],
            )
        schema = option(config, "schema") or []
        if len(schema) > regex.groups:
            raise UserError.validation(
                f"Format [{config.name}]: the schema lists {len(schema)} fields but the regex "
                f"has {regex.groups} groups",
                ["Fix: one schema entry per group of the regex, in order"],
            )
        names = list(regex.groupindex)  # Python's own named groups, used where no schema names
        fields = [
            _field(config.name, i, schema[i] if i < len(schema) else {}, names)
            for i in range(regex.groups)
        ]
        max_errors = int_option(config, "maxErrors", DEFAULT_MAX_ERRORS)
        return cls(regex, tuple(fields), max_errors, as_array=not schema and not names)

    def table_schema(self) -> TupleSchema:
        """The columns every file of the format has (the special ones aside)."""
        if self.as_array:
            return TupleSchema([ColumnMetadata(COLUMNS, MinorType.VARCHAR, DataMode.REPEATED)])
        return TupleSchema(ColumnMetadata.optional(f.name, f.type) for f in self.fields)


def _field(fmt: str, index: int, spec: Mapping[str, Any], group_names: Sequence[str]) -> LogField:
    by_index = {v: k for k, v in _group_numbers(group_names).items()}
    name = spec.get("fieldName") or spec.get("field_name") or by_index.get(index + 1)
    type_name = str(spec.get("fieldType") or spec.get("field_type") or "VARCHAR").upper()
    minor = _TYPES.get(type_name)
    if minor is None:
        raise UserError.validation(
            f"Format [{fmt}]: field [{name or index}] has type [{type_name}], which logRegex "
            "does not read",
            [f"Fix: use one of {', '.join(sorted(set(_TYPES)))}"],
        )
    pattern = spec.get("format")
    return LogField(str(name or f"field_{index}"), minor, str(pattern) if pattern else None)


def _group_numbers(names: Sequence[str]) -> dict[str, int]:
    return {name: i + 1 for i, name in enumerate(names)}


def _converter(field: LogField) -> Callable[[str], Any]:
    minor = field.type
    # int() and float() ignore surrounding white space themselves
    if minor in (MinorType.INT, MinorType.SMALLINT, MinorType.BIGINT):
        return int
    if minor in (MinorType.FLOAT4, MinorType.FLOAT8):
        return float
    if minor in (MinorType.DATE, MinorType.TIME, MinorType.TIMESTAMP):
        pattern = strptime_pattern(field.format) if field.format else None

        def temporal(s: str) -> Any:
            parsed = (
                dt.datetime.strptime(s, pattern)
                if pattern
                else dt.datetime.fromisoformat(s.replace(" ", "T", 1))
            )
            if minor is MinorType.DATE:
                return parsed.date()
            if minor is MinorType.TIME:
                return parsed.time()
            return parsed

        return temporal
    return lambda s: s


class LogRegexReader(LineReader):
    """One file, one row per line (or per unmatched line, when ``_unmatched_rows`` is named).

    Lines are read a batch's worth at a time and handed to the loader as one Arrow batch per
    chunk (``append_arrow``: the same row and size limits as row writes, the rows that do not
    fit carried to the next batch), so a value costs a list append rather than a writer call.
    Only when unmatched lines are rows (``_unmatched_rows`` named), or no column is projected
    (``COUNT(*)``), are rows written one at a time.
    """

    special_columns = ((RAW, MinorType.VARCHAR), (UNMATCHED, MinorType.VARCHAR))
    schema_complete = True  # known from the configuration alone: no file needs opening to plan

    def __init__(self, path: str, options: LogRegexOptions) -> None:
        super().__init__(path)
        self.options = options
        self.bad_lines = BadLines(
            options.max_errors,
            "skipped",
            "correct the line or the regex, or raise maxErrors to skip more bad lines",
        )

    def table_schema(self) -> TupleSchema:
        return self.options.table_schema()

    def start(self, negotiator: SchemaNegotiator) -> None:
        opts = self.options
        negotiator.add_context(f"Regex: {opts.regex.pattern}")
        self.context = negotiator.error_context
        # Groups nobody asked for are neither extracted nor converted.
        self.want_array = opts.as_array and negotiator.is_projected(COLUMNS)
        projected = [
            (i, f)
            for i, f in enumerate(opts.fields)
            if not opts.as_array and negotiator.is_projected(f.name)
        ]
        self.wanted = [(i + 1, _converter(f), f.name) for i, f in projected]
        #: the projected fields as (group index from 0, converter or None for text, name, type)
        self.columns = [
            (
                i,
                None if f.type is MinorType.VARCHAR else _converter(f),
                f.name,
                column_to_arrow(ColumnMetadata.required(f.name, f.type)),
            )
            for i, f in projected
        ]
        wanted_names = {name for _, _, name in self.wanted}
        self.want_raw = self.is_named(RAW)
        self.want_unmatched = self.is_named(UNMATCHED)
        # Only `_unmatched_rows` named: matching lines give no rows (Drill's rule).
        self.write_matched = (
            bool(wanted_names) or self.want_array or self.want_raw or not self.want_unmatched
        )
        self.rows = negotiator.build().writer()
        self.setters = {name: self.rows.scalar(name) for name in wanted_names}
        self.array_writer = self.rows.array(COLUMNS) if self.want_array else None
        self.raw_writer = self.rows.scalar(RAW) if self.want_raw else None
        self.unmatched_writer = self.rows.scalar(UNMATCHED) if self.want_unmatched else None
        # Chunks need a column to carry their row count; unmatched lines interleave rows.
        self.by_chunk = (
            bool(self.columns) or self.want_array or self.want_raw
        ) and not self.want_unmatched

    def next(self) -> bool:
        return self._next_chunk() if self.by_chunk else self._next_rows()

    def _next_chunk(self) -> bool:
        """Read up to a batch of lines and append them as one Arrow batch."""
        rows = self.rows
        if rows.is_full():
            return True  # the rows of the last chunk that did not fit fill this batch
        room = rows.loader().target_row_count - rows.row_count()
        fullmatch = self.options.regex.fullmatch
        lines: list[str] = []
        groups: list[tuple[str | None, ...]] = []
        numbers: list[int] = []
        bad: list[tuple[int, str, str]] = []  # unmatched lines, counted in line order
        number = self.line_number
        more = False
        for number, line in self.numbered:
            match = fullmatch(line)
            if match is None:
                bad.append((number, line, "does not match the regex"))
                continue
            lines.append(line)
            groups.append(match.groups())
            numbers.append(number)
            if len(groups) >= room:
                more = True
                break
        self.line_number = number
        if groups:
            rows.append_arrow(self._chunk_batch(lines, groups, numbers, bad))
        for number, line, what in bad:
            self._error(line, what, number)
        return more

    def _chunk_batch(
        self,
        lines: list[str],
        groups: list[tuple[str | None, ...]],
        numbers: list[int],
        bad: list[tuple[int, str, str]],
    ) -> pa.RecordBatch:
        """The chunk's projected columns as Arrow. Lines whose values do not convert join
        ``bad`` (in line order) and are left out."""
        columns: list[Sequence[Any]] = []
        # most groups wanted: one transposition in C beats a comprehension per column
        every = list(zip(*groups, strict=True)) if len(self.columns) * 4 > len(groups[0]) else None
        try:
            for index, convert, _, _ in self.columns:
                values: Sequence[Any] = every[index] if every else [g[index] for g in groups]
                if convert is not None:
                    if None in values:  # an optional group that did not take part
                        values = [None if v is None else convert(v) for v in values]
                    else:
                        values = list(map(convert, values))
                columns.append(values)
        except ValueError:
            lines, converted = self._convert_rows(lines, groups, numbers, bad)
            columns = list(converted)
        arrays: list[pa.Array] = []
        names: list[str] = []
        for (_, _, name, arrow_type), values in zip(self.columns, columns, strict=True):
            try:
                arrays.append(pa.array(values, type=arrow_type))
            except (TypeError, OverflowError, pa.ArrowException):
                raise self._unfit(name, values) from None
            names.append(name)
        if self.want_array:
            arrays.append(pa.array([_group_texts(g) for g in groups], type=pa.list_(pa.string())))
            names.append(COLUMNS)
        if self.want_raw:
            arrays.append(pa.array(lines, type=pa.string()))
            names.append(RAW)
        return pa.RecordBatch.from_arrays(arrays, names=names)

    def _convert_rows(
        self,
        lines: list[str],
        groups: list[tuple[str | None, ...]],
        numbers: list[int],
        bad: list[tuple[int, str, str]],
    ) -> tuple[list[str], list[list[Any]]]:
        """The chunk converted line by line: the lines kept and their columns' values."""
        kept: list[str] = []
        columns: list[list[Any]] = [[] for _ in self.columns]
        for line, found, number in zip(lines, groups, numbers, strict=True):
            row: list[Any] = []
            try:
                for i, convert, _, _ in self.columns:
                    text = found[i]
                    row.append(text if text is None or convert is None else convert(text))
            except ValueError as exc:
                bad.append((number, line, f"has a value that does not convert: {exc}"))
                continue
            for values, value in zip(columns, row, strict=True):
                values.append(value)
            kept.append(line)
        bad.sort(key=lambda b: b[0])
        return kept, columns

    def _unfit(self, name: str, values: Sequence[Any]) -> Exception:
        """The error the column's writer gives for the first value it cannot hold."""
        field = next(f for f in self.options.fields if f.name == name)
        store = converter_for(ColumnMetadata.optional(name, field.type))
        for value in values:
            if value is not None:
                try:
                    store(value)
                except ValueError as exc:
                    return exc
        return UserError.data_read(f"Column `{name}` of [{self.path}] has a value it cannot hold")

    def _next_rows(self) -> bool:
        """One row at a time: unmatched lines as rows, or no column to carry a chunk."""
        regex = self.options.regex
        rows = self.rows
        while not rows.is_full():
            numbered = next(self.numbered, None)
            if numbered is None:
                return False
            self.line_number, line = numbered
            match = regex.fullmatch(line)
            if match is None:
                if self.unmatched_writer is not None:
                    rows.start()
                    self.unmatched_writer.set_string(line)
                    rows.save()
                else:
                    self._error(line, "does not match the regex")
                continue
            if not self.write_matched:
                continue
            values: list[tuple[str, Any]] = []
            try:
                for group, convert, name in self.wanted:
                    text = match.group(group)
                    values.append((name, None if text is None else convert(text)))
            except ValueError as exc:
                self._error(line, f"has a value that does not convert: {exc}")
                continue
            rows.start()
            for name, value in values:
                if value is not None:
                    self.setters[name].set(value)
            if self.array_writer is not None:
                self.array_writer.set(_group_texts(match.groups()))
            if self.raw_writer is not None:
                self.raw_writer.set_string(line)
            rows.save()
        return True

    def _error(self, line: str, what: str, number: int | None = None) -> None:
        n = self.line_number if number is None else number
        self.bad_lines.count(
            f"Too many errors in [{self.path}]: more than maxErrors "
            f"({self.options.max_errors}) lines were skipped; line {n} {what}",
            n,
            line,
        )


def _group_texts(groups: Sequence[str | None]) -> list[str]:
    """A match's groups as the ``columns`` array holds them: "" for a group that took no part."""
    return ["" if g is None else g for g in groups]


class LogRegexFormat(LineFormatPlugin):
    """Drill's ``logRegex`` plugin: the schema comes from the format's options, not the files."""

    type_name = "logRegex"
    extensions = ("log",)

    def reader(self, file: FileSplit, config: FormatConfig) -> LogRegexReader:
        return LogRegexReader(file.path, LogRegexOptions.from_config(config))
