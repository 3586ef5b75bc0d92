"""Drill's ``syslog`` format: RFC 5424 syslog lines, one event per line.

A line is ``<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID STRUCTURED-DATA MSG``, any field but
the priority, version and message may be ``-`` (no value). The columns are Drill's:

========================  =========  =====================================================
``event_date``            TIMESTAMP  the timestamp in UTC, to the millisecond as in Drill
``severity_code``         INT        ``PRI % 8``
``facility_code``         INT        ``PRI // 8``
``severity``              VARCHAR    its name (``EMERG`` ... ``DEBUG``)
``facility``              VARCHAR    its name (``KERN`` ... ``LOCAL7``)
``ip``                    VARCHAR    the HOSTNAME field
``app_name``              VARCHAR
``process_id``            VARCHAR    the PROCID field
``message_id``            VARCHAR    the MSGID field
``structured_data_text``  VARCHAR    the structured data as Drill prints it:
                                     ``{id=[name=value, ...], ...}``
``structured_data``       MAP        every parameter of every element, by name
``message``               VARCHAR    the free text after the structured data
``_raw``                  VARCHAR    the whole line; only when a query names it, never in ``*``
========================  =========  =====================================================

Options, under Drill's camelCase names or their snake_case forms: ``maxErrors`` (default 10):
lines that are not RFC 5424 are skipped, and one more than ``maxErrors`` fails the query with
the file, the line and what is wrong; ``flattenStructuredData`` (default false): instead of the
``structured_data`` map, one VARCHAR column ``structured_data_<name>`` per parameter name,
added as they are met. Empty lines are skipped.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from auger.config import FormatConfig
from auger.plugins.bad_lines import BadLines
from auger.plugins.lines import LineFormatPlugin, LineReader
from auger.plugins.options import bool_option, int_option
from auger.resultset.writers.scalar import ScalarWriter
from auger.resultset.writers.tuple import TupleWriter
from auger.scan import SchemaNegotiator
from auger.scan.spec import FileSplit
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

__all__ = ["SyslogFormat", "SyslogLineError", "SyslogOptions", "parse_syslog_line"]

RAW = "_raw"
STRUCTURED_DATA = "structured_data"
FLAT_PREFIX = "structured_data_"
DEFAULT_MAX_ERRORS = 10

SEVERITIES = ("EMERG", "ALERT", "CRIT", "ERR", "WARNING", "NOTICE", "INFO", "DEBUG")
#: Facility names by code, as Drill reports them (12 to 15 are ntp, audit, alert and clock)
FACILITIES = (
    "KERN", "USER", "MAIL", "DAEMON", "AUTH", "SYSLOG", "LPR", "NEWS",
    "UUCP", "CRON", "AUTHPRIV", "FTP", "NTP", "AUDIT", "ALERT", "CLOCK",
    "LOCAL0", "LOCAL1", "LOCAL2", "LOCAL3", "LOCAL4", "LOCAL5", "LOCAL6", "LOCAL7",
)  # fmt: skip

#: The header's seven space-separated fields, then the structured data and the message.
#: Structured data is ``-`` or ``[...]`` elements whose quoted values may hold ``]``.
_LINE = re.compile(
    r"<(?P<pri>\d{1,3})>(?P<version>\d{1,2}) (?P<ts>\S+) (?P<host>\S+) (?P<app>\S+) "
    r"(?P<proc>\S+) (?P<msgid>\S+) "
    r'(?P<sd>-|(?:\[(?:[^\]"]|"(?:[^"\\]|\\.)*")*\])+)(?: (?P<msg>.*))?',
    re.DOTALL,
)
_TIMESTAMP = re.compile(
    r"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:[Zz]|[+-]\d\d:\d\d)", re.ASCII
)
_SD_NAME = r'[^ =\]"]+'
_SD_ELEMENT = re.compile(rf'\[({_SD_NAME})((?: {_SD_NAME}="(?:[^"\\]|\\.)*")*)\]')
_SD_PARAM = re.compile(rf' ({_SD_NAME})="((?:[^"\\]|\\.)*)"')
_SD_ESCAPE = re.compile(r"\\(.)")

COLUMNS: tuple[tuple[str, MinorType], ...] = (
    ("event_date", MinorType.TIMESTAMP),
    ("severity_code", MinorType.INT),
    ("facility_code", MinorType.INT),
    ("severity", MinorType.VARCHAR),
    ("facility", MinorType.VARCHAR),
    ("ip", MinorType.VARCHAR),
    ("app_name", MinorType.VARCHAR),
    ("process_id", MinorType.VARCHAR),
    ("message_id", MinorType.VARCHAR),
    ("structured_data_text", MinorType.VARCHAR),
)


class SyslogLineError(ValueError):
    """A line that is not RFC 5424 syslog; the message says what is wrong."""


@dataclass(frozen=True)
class SyslogEvent:
    """One parsed line; ``None`` where the line has ``-``."""

    priority: int
    timestamp: dt.datetime | None
    host: str | None
    app_name: str | None
    process_id: str | None
    message_id: str | None
    structured_data: dict[str, list[tuple[str, str]]] | None
    message: str | None

    @property
    def severity_code(self) -> int:
        return self.priority & 7

    @property
    def facility_code(self) -> int:
        return self.priority >> 3

    def structured_data_text(self) -> str | None:
        """Drill's rendering: elements by id in sorted order, parameters as written."""
        if self.structured_data is None:
            return None
        elements = sorted(self.structured_data.items())
        return (
            "{"
            + ", ".join(f"{i}=[{', '.join(f'{k}={v}' for k, v in ps)}]" for i, ps in elements)
            + "}"
        )


def _nil(text: str) -> str | None:
    return None if text == "-" else text


def _timestamp(text: str) -> dt.datetime | None:
    if text == "-":
        return None
    if not _TIMESTAMP.fullmatch(text):
        raise SyslogLineError(
            f"has a timestamp [{text}] that is not RFC 3339 (such as 2003-10-11T22:14:15.003Z)"
        )
    try:
        stamp = dt.datetime.fromisoformat(text.upper())
    except ValueError as exc:
        raise SyslogLineError(f"has a timestamp [{text}] that is not a date: {exc}") from None
    utc = stamp.astimezone(dt.UTC).replace(tzinfo=None)
    return utc.replace(microsecond=utc.microsecond // 1000 * 1000)


def _structured_data(text: str) -> dict[str, list[tuple[str, str]]] | None:
    if text == "-":
        return None
    elements: dict[str, list[tuple[str, str]]] = {}
    pos = 0
    while pos < len(text):
        m = _SD_ELEMENT.match(text, pos)
        if m is None:
            raise SyslogLineError(
                f'has structured data [{text[pos:][:80]}] that is not [id name="value" ...]'
            )
        params = [
            (k, _SD_ESCAPE.sub(r"\1", v) if "\\" in v else v)
            for k, v in _SD_PARAM.findall(m.group(2))
        ]
        elements[m.group(1)] = params
        pos = m.end()
    return elements


def parse_syslog_line(line: str, want_sd: bool = True) -> SyslogEvent:
    """Parse one RFC 5424 line (without its line end). Raises ``SyslogLineError``.

    ``want_sd=False`` leaves the structured data unparsed (``None``) when nobody reads it.
    """
    m = _LINE.fullmatch(line)
    if m is None:
        raise SyslogLineError(_diagnose(line))
    if m.group("version") != "1":
        raise SyslogLineError(
            f"has version {m.group('version')}; only RFC 5424 version 1 lines are read"
        )
    priority = int(m.group("pri"))
    if priority > 191:
        raise SyslogLineError(f"has priority <{priority}>, above the highest, 191")
    return SyslogEvent(
        priority,
        _timestamp(m.group("ts")),
        _nil(m.group("host")),
        _nil(m.group("app")),
        _nil(m.group("proc")),
        _nil(m.group("msgid")),
        _structured_data(m.group("sd")) if want_sd else None,
        m.group("msg"),
    )


def _diagnose(line: str) -> str:
    if not re.match(r"<\d{1,3}>", line):
        return "does not start with a priority such as <165>"
    if not re.match(r"<\d{1,3}>\d{1,2} ", line):
        return "has no version (1) after its priority"
    return (
        "is not <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID STRUCTURED-DATA MSG "
        '(a field missing, or structured data that is not [id name="value" ...])'
    )


@dataclass(frozen=True)
class SyslogOptions:
    """A ``syslog`` format's options, checked once."""

    max_errors: int = DEFAULT_MAX_ERRORS
    flatten_structured_data: bool = False

    @classmethod
    def from_config(cls, config: FormatConfig) -> SyslogOptions:
        return cls(
            int_option(config, "maxErrors", DEFAULT_MAX_ERRORS),
            bool_option(config, "flattenStructuredData", False),
        )

    def table_schema(self) -> TupleSchema:
        """The columns every file has (``_raw`` aside); flattened structured data is added
        as it is met."""
        cols = [ColumnMetadata.optional(name, minor) for name, minor in COLUMNS]
        if not self.flatten_structured_data:
            cols.append(ColumnMetadata.map(STRUCTURED_DATA, (), DataMode.OPTIONAL))
        cols.append(ColumnMetadata.optional("message", MinorType.VARCHAR))
        return TupleSchema(cols)


#: How each fixed column's value comes out of a parsed line.
_VALUES: dict[str, Callable[[SyslogEvent], Any]] = {
    "event_date": lambda e: e.timestamp,
    "severity_code": lambda e: e.severity_code,
    "facility_code": lambda e: e.facility_code,
    "severity": lambda e: SEVERITIES[e.severity_code],
    "facility": lambda e: FACILITIES[e.facility_code],
    "ip": lambda e: e.host,
    "app_name": lambda e: e.app_name,
    "process_id": lambda e: e.process_id,
    "message_id": lambda e: e.message_id,
    "structured_data_text": lambda e: e.structured_data_text(),
    "message": lambda e: e.message,
}


def _setter(writer: ScalarWriter, minor: MinorType) -> Callable[[Any], None]:
    """The writer's most direct setter for the column's type."""
    return writer.set_string if minor is MinorType.VARCHAR else writer.set


class SyslogReader(LineReader):
    """One file, one row per RFC 5424 line."""

    special_columns = ((RAW, MinorType.VARCHAR),)

    def __init__(self, path: str, options: SyslogOptions) -> None:
        super().__init__(path)
        self.options = options
        self.bad_lines = BadLines(
            options.max_errors,
            "skipped",
            "correct the line, or raise maxErrors to skip more bad lines",
        )

    def table_schema(self) -> TupleSchema:
        return self.options.table_schema()

    def start(self, negotiator: SchemaNegotiator) -> None:
        opts = self.options
        self.negotiator = negotiator
        self.rows = rows = negotiator.build().writer()
        projected = negotiator.is_projected
        # Columns nobody asked for are neither computed nor written.
        types = dict(COLUMNS)
        self.fixed = [
            (value_of, _setter(rows.scalar(name), types.get(name, MinorType.VARCHAR)))
            for name, value_of in _VALUES.items()
            if projected(name)
        ]
        self.raw_writer = rows.scalar(RAW) if self.is_named(RAW) else None
        self.map_writer: TupleWriter | None = None
        if not opts.flatten_structured_data and projected(STRUCTURED_DATA):
            self.map_writer = rows.tuple(STRUCTURED_DATA)
        # a structured-data parameter (lower case) -> its writer, None when not projected
        self.sd_writers: dict[str, ScalarWriter | None] = {}
        self.want_sd = (
            self.map_writer is not None
            or opts.flatten_structured_data
            or projected("structured_data_text")
        )

    def next(self) -> bool:
        rows = self.rows
        fixed = self.fixed
        for number, text in self.numbered:
            self.line_number = number
            line = text.strip()
            if not line:
                continue
            try:
                event = parse_syslog_line(line, self.want_sd)
            except SyslogLineError as exc:
                self._error(line, str(exc))
                continue
            rows.start()
            for value_of, setter in fixed:
                value = value_of(event)
                if value is not None:
                    setter(value)
            if event.structured_data:
                self._write_structured_data(event.structured_data)
            if self.raw_writer is not None:
                self.raw_writer.set_string(line)
            rows.save()
            if rows.is_full():
                return True
        return False

    def _write_structured_data(self, elements: dict[str, list[tuple[str, str]]]) -> None:
        flatten = self.options.flatten_structured_data
        if not flatten and self.map_writer is None:
            return
        values = {name.lower(): (name, value) for ps in elements.values() for name, value in ps}
        writers = self.sd_writers
        for key, (name, value) in values.items():
            writer = writers[key] if key in writers else self._sd_writer(key, name, flatten)
            if writer is not None:
                writer.set_string(value)

    def _sd_writer(self, key: str, name: str, flatten: bool) -> ScalarWriter | None:
        """The writer of one parameter: a column of its own, or a member of the map."""
        tuple_writer: TupleWriter = self.rows if flatten else self.map_writer  # type: ignore[assignment]
        column = FLAT_PREFIX + name if flatten else name
        writer: ScalarWriter | None = None
        wanted = (
            self.negotiator.is_projected(column) if flatten else tuple_writer.is_projected(column)
        )
        if wanted:
            if tuple_writer.index(column) < 0:
                tuple_writer.add_column(ColumnMetadata.optional(column, MinorType.VARCHAR))
            writer = tuple_writer.scalar(column)
        self.sd_writers[key] = writer
        return writer

    def _error(self, line: str, what: str) -> None:
        self.bad_lines.count(
            "Maximum Error Threshold Exceeded. Error reading Syslog file at line "
            f"{self.line_number}: the line {what}",
            self.line_number,
            line,
        )


class SyslogFormat(LineFormatPlugin):
    """Drill's ``syslog`` plugin: a fixed set of columns, plus structured data as met."""

    type_name = "syslog"
    extensions = ("syslog",)

    def reader(self, file: FileSplit, config: FormatConfig) -> SyslogReader:
        return SyslogReader(file.path, SyslogOptions.from_config(config))
