"""Drill's ``httpd`` format: web server access logs, parsed by the server's own LogFormat.

``logFormat`` is the Apache ``LogFormat`` string the server writes its log with (default
Drill's: ``%h %l %u %t "%r" %s %b "%{Referer}i" "%{User-agent}i"``), one of Apache's
named formats ``common``, ``combined``, ``combinedio``, ``referer`` and ``agent``, or an nginx
``log_format`` (``$remote_addr - $remote_user [$time_local] "$request" ...``: a variable that
is an Apache directive under another name gives that directive's columns, ``$http_<name>``
``request_header_<name>``, ``$request_time`` ``response_server_processing_time`` (FLOAT8),
any other ``nginx_<variable>`` as text). Several formats may be given one per line; each line
of the file is parsed with the first that matches it. Each format is turned into one regular
expression (each directive a group, the text between them literal), and only the groups a
query projects are converted.

Columns are named as Drill names them (the log parser's field path with ``.`` → ``_`` and
``_`` → ``__``), each directive giving the columns Drill gives for it:

* ``%h`` ``connection_client_host``, ``%a`` ``connection_client_ip``, ``%l``
  ``connection_client_logname`` (BIGINT), ``%u`` ``connection_client_user``, each with a
  ``_last`` twin, as Drill has them;
* ``%t`` ``request_receive_time`` (TIMESTAMP, in UTC) and its parts: ``_epoch``, ``_date``,
  ``_time``, ``_year``, ``_month``, ``_monthname``, ``_day``, ``_hour``, ``_minute``,
  ``_second``, ``_millisecond``, ``_microsecond``, ``_nanosecond``, ``_weekofweekyear``,
  ``_weekyear`` in the log's own zone and each again in UTC (``__utc``), and ``_timezone``;
  all again under ``request_receive_time_last``. ``timestampFormat`` (a Java pattern, default
  ``dd/MMM/yyyy:HH:mm:ss ZZ``) says how the time is written;
* ``%r`` ``request_firstline`` with ``_method``, ``_protocol``, ``_protocol_version`` and
  ``_uri``; the URI with ``_protocol``, ``_userinfo``, ``_host``, ``_port`` (BIGINT),
  ``_path``, ``_query``, ``_ref`` and ``_query_$``, a map of the query parameters (decoded);
  all again under ``request_firstline_original``;
* ``%s``/``%>s`` ``request_status_last`` (``%<s`` ``request_status_original``), ``%b``
  ``response_body_bytesclf``, ``response_body_bytes`` and ``response_body_bytes_last``
  (``-``, no body, is 0), ``%B`` ``response_body_bytes``, ``%D`` ``server_process_time`` (µs),
  ``%T`` ``response_server_processing_time`` (s), ``%I``/``%O``/``%S`` ``request_bytes``,
  ``response_bytes``, ``total_bytes`` (all BIGINT), and the other Apache directives as text;
* ``%{Referer}i`` ``request_referer`` (a URI, with the same parts, and a ``_last`` twin),
  ``%{User-agent}i`` ``request_user-agent`` (and ``_last``), any other ``%{Name}i``
  ``request_header_name`` (``%{Name}o``, ``%{Name}C``, ``%{Name}e``, ``%{Name}n`` likewise
  ``response_header_``, ``request_cookies_``, ``server_environment_``,
  ``server_module_note_``).

With ``parseUserAgent`` (default false) the user agent is also taken apart by ua-parser into
``request_user-agent_agent__name``, ``_agent__version``, ``_agent__version__major``,
``_agent__name__version``, ``_agent__name__version__major``, ``_operating__system__name``,
``_operating__system__version``, ``_operating__system__version__major``,
``_operating__system__name__version``, ``_device__name`` and ``_device__brand`` (Drill's names;
the values are ua-parser's, which may name a browser or system differently from Drill's
analyser), and the same under ``request_user-agent_last``.

``-``, Apache's "no value", is NULL. With ``flattenWildcards`` the query parameters are columns
of their own (``request_firstline_uri_query_<name>``) instead of the ``_query_$`` maps.

Two special columns appear only when a query names them, never with ``*``: ``_raw``, the line,
and ``_matched``, whether it matched the format. A line that does not match is an error: up to
``maxErrors`` (default 0) are kept as rows with ``_matched`` false and no parsed values, one more
fails the query with the file and line (a negative ``maxErrors`` keeps them all). Empty lines
are skipped.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from auger.config import FormatConfig
from auger.errors import UserError
from auger.plugins.bad_lines import BadLines
from auger.plugins.lines import LineFormatPlugin, LineReader
from auger.plugins.options import bool_option, int_option, option
from auger.resultset.writers.scalar import ScalarWriter
from auger.resultset.writers.tuple import TupleWriter
from auger.scan import SchemaNegotiator
from auger.scan.spec import FileSplit
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.java_format import strptime_pattern

__all__ = ["HttpdFormat", "HttpdOptions", "LogFormat", "parse_log_format"]

RAW = "_raw"
MATCHED = "_matched"
WILDCARD = "_$"
DEFAULT_LOG_FORMAT = '%h %l %u %t "%r" %s %b "%{Referer}i" "%{User-agent}i"'
DEFAULT_TIMESTAMP_FORMAT = "dd/MMM/yyyy:HH:mm:ss ZZ"
DEFAULT_MAX_ERRORS = 0

#: Apache's own names for its usual formats
NAMED_FORMATS = {
    "common": '%h %l %u %t "%r" %>s %b',
    "combined": '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"',
    "combinedio": '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %I %O',
    "referer": "%{Referer}i -> %U",
    "agent": "%{User-agent}i",
}

#: ``%`` [conditions] [< or >] [{argument}] [< or >] letter
_DIRECTIVE = re.compile(r"%(?:!?\d{3}(?:,\d{3})*)?([<>]?)(?:\{([^}]*)\})?([<>]?)([a-zA-Z%])")

V, N = MinorType.VARCHAR, MinorType.BIGINT
Value = Any
Derive = Callable[[str], Value]


# ----------------------------------------------------------------- values of one directive
def _text(s: str) -> str | None:
    return None if s == "-" else s


def _number(s: str) -> int | None:
    try:
        return int(s)
    except ValueError:
        return None


def _bytes_clf(s: str) -> int | None:
    return 0 if s == "-" else _number(s)


def _memo(fn: Callable[[str], Any]) -> Callable[[str], Any]:
    """One entry of memory: the columns of one directive share one parse per line."""
    last: list[Any] = [None, None]

    def memo(s: str) -> Any:
        if s is not last[0]:
            last[0], last[1] = s, fn(s)
        return last[1]

    return memo


@dataclass(frozen=True)
class Column:
    """One output column: its Drill name, type, and how its value comes from the text."""

    name: str
    type: MinorType
    derive: Derive
    #: the query-parameter map (``..._query_$``): ``derive`` gives the parameters as pairs
    wildcard: bool = False


def _uri_parts(s: str) -> dict[str, Any] | None:
    if s == "-" or not s:
        return None
    try:
        parts = urlsplit(s)
        port = parts.port
    except ValueError:
        return {"path": s}
    return {
        "protocol": parts.scheme or None,
        "userinfo": parts.netloc.rpartition("@")[0] or None if "@" in parts.netloc else None,
        "host": parts.hostname or None,
        "port": port,
        "path": parts.path or None,
        "query": parts.query or None,
        "ref": parts.fragment or None,
        "params": [(k.lower(), v) for k, v in parse_qsl(parts.query, keep_blank_values=True)],
    }


def _uri_columns(base: str, text_of: Derive) -> list[Column]:
    parts = _memo(lambda s: _uri_parts(s))

    def part(key: str) -> Derive:
        def derive(s: str) -> Value:
            p = parts(text_of(s) or "-")
            return None if p is None else p.get(key)

        return derive

    cols = [Column(base, V, lambda s: _text(text_of(s) or "-"))]
    for key in ("host", "path", "port", "protocol", "query", "ref", "userinfo"):
        cols.append(Column(f"{base}_{key}", N if key == "port" else V, part(key)))
    cols.append(Column(f"{base}_query{WILDCARD}", MinorType.MAP, part("params"), wildcard=True))
    return cols


def _firstline_parts(s: str) -> tuple[str | None, str | None, str | None]:
    pieces = s.split(" ")
    if s == "-" or len(pieces) < 2:
        return None, None, None
    if len(pieces) == 2:
        return pieces[0], pieces[1], None
    return pieces[0], " ".join(pieces[1:-1]), pieces[-1]


def _firstline_columns(base: str) -> list[Column]:
    parts = _memo(_firstline_parts)

    def version(s: str) -> str | None:
        proto = parts(s)[2]
        return proto.partition("/")[2] or None if proto else None

    cols = [
        Column(base, V, _text),
        Column(f"{base}_method", V, lambda s: parts(s)[0]),
        Column(f"{base}_protocol", V, lambda s: parts(s)[2]),
        Column(f"{base}_protocol_version", V, version),
    ]
    return cols + _uri_columns(f"{base}_uri", lambda s: parts(s)[1])


# ----------------------------------------------------------------- time
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    )
}
_MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_APACHE_TIME = re.compile(r"(\d\d)/(\w{3})/(\d{4}):(\d\d):(\d\d):(\d\d) ([+-])(\d\d)(\d\d)")
_ZONE_LETTERS = re.compile(r"Z+|X+|x+")


def _time_parser(java_format: str | None) -> Callable[[str], dt.datetime | None]:
    """The log's time as an aware datetime; Apache's own format without ``strptime``."""
    if not java_format or java_format == DEFAULT_TIMESTAMP_FORMAT:

        def apache(s: str) -> dt.datetime | None:
            m = _APACHE_TIME.fullmatch(s)
            if m is None or m.group(2) not in _MONTHS:
                return None
            d, mon, y, hh, mm, ss, sign, zh, zm = m.groups()
            offset = dt.timedelta(hours=int(zh), minutes=int(zm))
            zone = dt.timezone(-offset if sign == "-" else offset)
            return dt.datetime(int(y), _MONTHS[mon], int(d), int(hh), int(mm), int(ss), 0, zone)

        return apache
    pattern = _ZONE_LETTERS.sub("%z", strptime_pattern(java_format))

    def custom(s: str) -> dt.datetime | None:
        try:
            parsed = dt.datetime.strptime(s, pattern)
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)

    return custom


def _zone_text(t: dt.datetime) -> str:
    offset = t.utcoffset() or dt.timedelta()
    minutes = int(offset.total_seconds()) // 60
    if minutes == 0:
        return "Z"
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


#: the parts of a time, computed on the log's local time and on UTC
_TIME_PARTS: tuple[tuple[str, MinorType, Callable[[dt.datetime], Value]], ...] = (
    ("date", MinorType.DATE, lambda t: t.date()),
    ("day", N, lambda t: t.day),
    ("hour", N, lambda t: t.hour),
    ("microsecond", N, lambda t: t.microsecond),
    ("millisecond", N, lambda t: t.microsecond // 1000),
    ("minute", N, lambda t: t.minute),
    ("month", N, lambda t: t.month),
    ("monthname", V, lambda t: _MONTH_NAMES[t.month - 1]),
    ("nanosecond", N, lambda t: t.microsecond * 1000),
    ("second", N, lambda t: t.second),
    ("time", MinorType.TIME, lambda t: t.time().replace(tzinfo=None)),
    ("weekofweekyear", N, lambda t: t.isocalendar()[1]),
    ("weekyear", N, lambda t: t.isocalendar()[0]),
    ("year", N, lambda t: t.year),
)


def _time_columns(base: str, parse: Callable[[str], dt.datetime | None]) -> list[Column]:
    def both(s: str) -> tuple[dt.datetime, dt.datetime] | None:
        t = parse(s)
        return None if t is None else (t, t.astimezone(dt.UTC))

    # the log's time and the same in UTC, once per line for all the columns
    parsed = _memo(both)

    def utc_naive(s: str) -> dt.datetime | None:
        t = parsed(s)
        return None if t is None else t[1].replace(tzinfo=None)

    def local(fn: Callable[[dt.datetime], Value]) -> Derive:
        return lambda s: None if (t := parsed(s)) is None else fn(t[0])

    def utc(fn: Callable[[dt.datetime], Value]) -> Derive:
        return lambda s: None if (t := parsed(s)) is None else fn(t[1])

    cols = [
        Column(base, MinorType.TIMESTAMP, utc_naive),
        Column(f"{base}_epoch", MinorType.TIMESTAMP, utc_naive),
        Column(f"{base}_timezone", V, local(_zone_text)),
    ]
    for name, minor, fn in _TIME_PARTS:
        cols.append(Column(f"{base}_{name}", minor, local(fn)))
        cols.append(Column(f"{base}_{name}__utc", minor, utc(fn)))
    return cols


# ----------------------------------------------------------------- directives
def _drill_name(path: str) -> str:
    """A log parser field path as Drill names its column: ``_`` doubled, ``.`` → ``_``."""
    return path.replace("_", "__").replace(".", "_")


def _twins(cols: list[Column], base: str, twin: str) -> list[Column]:
    """The same columns again under another base name (Drill's ``_last``/``original``)."""
    return cols + [Column(twin + c.name[len(base) :], c.type, c.derive, c.wildcard) for c in cols]


#: letter -> (field path, kind): kinds are text, number and the special ones handled below
_SIMPLE: dict[str, tuple[str, str]] = {
    "a": ("connection.client.ip", "text"),
    "A": ("connection.server.ip", "text"),
    "B": ("response.body.bytes", "number"),
    "D": ("server.process.time", "number"),
    "f": ("server.filename", "text"),
    "H": ("request.protocol", "text"),
    "I": ("request.bytes", "number"),
    "k": ("connection.keepalivecount", "number"),
    "L": ("request.errorlogid", "text"),
    "m": ("request.method", "text"),
    "O": ("response.bytes", "number"),
    "p": ("request.server.port.canonical", "number"),
    "P": ("connection.server.child.processid", "number"),
    "q": ("request.querystring", "text"),
    "R": ("request.handler", "text"),
    "S": ("total.bytes", "number"),
    "T": ("response.server.processing.time", "number"),
    "U": ("request.urlpath", "text"),
    "v": ("connection.server.name.canonical", "text"),
    "V": ("connection.server.name", "text"),
    "X": ("response.connection.status", "text"),
}
_ARGUMENT_PREFIX = {
    "i": "request.header.",
    "o": "response.header.",
    "C": "request.cookies.",
    "e": "server.environment.",
    "n": "server.module_note.",
}
_PORTS = {
    "canonical": "connection.server.port.canonical",
    "local": "connection.server.port",
    "remote": "connection.client.port",
}


@dataclass(frozen=True)
class Directive:
    """One ``%`` directive of a LogFormat: its columns and the regex for its text."""

    text: str
    columns: tuple[Column, ...]
    #: the regex of its value (a quoted string's instead, when the format quotes it)
    pattern: str
    #: regexes of text around the value that belongs to the directive (``%t``'s brackets)
    frame: tuple[str, str] = ("", "")


def _with_twin(cols: list[Column], twin: str = "_last") -> tuple[Column, ...]:
    """The columns and their twins (``_last``, ``_original``), as Drill lists both."""
    base = cols[0].name
    return tuple(_twins(cols, base, base + twin))


def _epoch_parser(unit: str) -> Callable[[str], dt.datetime | None]:
    scale = {"sec": 1, "msec": 1_000, "usec": 1_000_000}[unit]

    def epoch(s: str) -> dt.datetime | None:
        n = _number(s)
        if n is None:
            return None
        return dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(
            microseconds=n * 1_000_000 // scale
        )

    return epoch


def _strftime_parser(pattern: str) -> Callable[[str], dt.datetime | None]:
    """Apache's ``%{format}t`` is a strftime format, which ``strptime`` reads back."""

    def parse(s: str) -> dt.datetime | None:
        try:
            parsed = dt.datetime.strptime(s, pattern)
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)

    return parse


def _directive(
    text: str, before: str, letter: str, argument: str | None, fmt: str | None
) -> Directive:
    word = r"\S*"
    free = r".*?"
    if letter == "h":
        return Directive(text, _with_twin([Column("connection_client_host", V, _text)]), word)
    if letter == "l":
        return Directive(text, _with_twin([Column("connection_client_logname", N, _number)]), word)
    if letter == "u":
        return Directive(text, _with_twin([Column("connection_client_user", V, _text)]), word)
    if letter == "a" and argument == "c":
        return Directive(text, (Column("connection_client_peerip", V, _text),), word)
    if letter == "p" and argument in _PORTS:
        return Directive(text, (Column(_drill_name(_PORTS[argument]), N, _number),), word)
    if letter == "P" and argument == "tid":
        return Directive(text, (Column("connection_server_child_threadid", N, _number),), word)
    if letter == "t":
        base = "request_receive_time"
        if not argument:
            # Apache writes its default time in brackets, outside the value
            cols = _time_columns(base, _time_parser(fmt))
            return Directive(text, _with_twin(cols), r"[^\]]*", (r"\[", r"\]"))
        # %{format}t: a strftime format (after an optional begin:/end:), or an epoch unit
        spec = argument
        for prefix in ("begin:", "end:"):
            spec = spec.removeprefix(prefix)
        if spec in ("sec", "msec", "usec"):
            return Directive(text, _with_twin(_time_columns(base, _epoch_parser(spec))), word)
        return Directive(text, _with_twin(_time_columns(base, _strftime_parser(spec))), free)
    if letter == "r":
        return Directive(
            text, _with_twin(_firstline_columns("request_firstline"), "_original"), free
        )
    if letter == "s":
        name = "request_status_original" if before == "<" else "request_status_last"
        return Directive(text, (Column(name, V, _text),), word)
    if letter == "b":
        names = ("response_body_bytes", "response_body_bytes_last", "response_body_bytesclf")
        return Directive(text, tuple(Column(n, N, _bytes_clf) for n in names), word)
    if letter in _ARGUMENT_PREFIX and argument:
        header = argument.lower()
        if letter == "i" and header == "referer":
            return Directive(text, _with_twin(_uri_columns("request_referer", lambda s: s)), free)
        if letter == "i" and header == "user-agent":
            return Directive(text, _with_twin([Column("request_user-agent", V, _text)]), free)
        name = _drill_name(_ARGUMENT_PREFIX[letter] + header)
        return Directive(text, (Column(name, V, _text),), free)
    if letter in _SIMPLE:
        path, kind = _SIMPLE[letter]
        column = Column(_drill_name(path), *((N, _number) if kind == "number" else (V, _text)))
        return Directive(text, (column,), word)
    raise UserError.validation(
        f"The logFormat directive {text} is not one auger's httpd format reads",
        ["Fix: use Apache's mod_log_config directives (%h %l %u %t %r %s %b %{Header}i ...)"],
    )


_QUOTED = r'(?:[^"\\]|\\.)*'


@dataclass
class LogFormat:
    """One LogFormat: its regex (one group per directive) and its columns by name."""

    text: str
    regex: re.Pattern[str]
    #: column name -> (group number, column); the first directive giving a name keeps it
    columns: dict[str, tuple[int, Column]] = field(default_factory=dict)


#: an nginx ``log_format`` variable: ``$name`` or ``${name}``
_NGINX_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")

#: nginx variables that are an Apache directive under another name
_NGINX_AS_APACHE = {
    "remote_addr": "%h",
    "remote_user": "%u",
    "request": "%r",
    "status": "%>s",
    "body_bytes_sent": "%B",
    "bytes_sent": "%O",
    "http_referer": "%{Referer}i",
    "http_user_agent": "%{User-agent}i",
    "request_method": "%m",
    "server_protocol": "%H",
    "uri": "%U",
    "pid": "%P",
    "server_name": "%V",
    "server_port": "%{local}p",
    "remote_port": "%{remote}p",
    "server_addr": "%A",
    "connection_requests": "%k",
}


def _iso_time(s: str) -> dt.datetime | None:
    try:
        t = dt.datetime.fromisoformat(s)
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=dt.UTC)


def _msec_time(s: str) -> dt.datetime | None:
    try:
        seconds = float(s)
    except ValueError:
        return None
    return dt.datetime.fromtimestamp(seconds, dt.UTC)


def _float(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


def _nginx_variable(name: str, timestamp_format: str | None) -> Directive:
    """An nginx variable's columns: an Apache directive's where nginx has one, else text."""
    text = f"${name}"
    base = "request_receive_time"
    if name in _NGINX_AS_APACHE:
        m = _DIRECTIVE.fullmatch(_NGINX_AS_APACHE[name])
        assert m is not None
        before, argument, after, letter = m.groups()
        return _directive(text, before or after, letter, argument, timestamp_format)
    if name == "time_local":  # Apache's %t without the brackets, which the format writes
        cols = _time_columns(base, _time_parser(timestamp_format))
        return Directive(text, _with_twin(cols), r"[^\]]*")
    if name == "time_iso8601":
        return Directive(text, _with_twin(_time_columns(base, _iso_time)), r"\S*")
    if name == "msec":
        return Directive(text, _with_twin(_time_columns(base, _msec_time)), r"\S*")
    if name == "request_uri":
        return Directive(text, tuple(_uri_columns("request_firstline_uri", lambda s: s)), r"\S*")
    if name in ("args", "query_string"):
        column = Column("request_firstline_uri_query", V, _text)
        return Directive(text, (column,), r"\S*")
    if name == "request_time":
        return Directive(
            text, (Column("response_server_processing_time", MinorType.FLOAT8, _float),), r"\S*"
        )
    if name.startswith("http_"):
        header = name[5:].replace("_", "-")
        return Directive(text, (Column(_drill_name("request.header." + header), V, _text),), r".*?")
    if name.startswith("sent_http_"):
        header = name[10:].replace("_", "-")
        column = Column(_drill_name("response.header." + header), V, _text)
        return Directive(text, (column,), r".*?")
    return Directive(text, (Column(f"nginx_{name}", V, _text),), r"\S*")


#: the parts of a user agent, named as Drill's user agent analysis names them, and how each
#: comes from ua-parser's result
_USER_AGENT_PARTS: tuple[tuple[str, Callable[[Any], str | None]], ...] = (
    ("agent__name", lambda r: r.user_agent and r.user_agent.family),
    ("agent__version", lambda r: r.user_agent and _version(r.user_agent)),
    ("agent__version__major", lambda r: r.user_agent and r.user_agent.major),
    ("agent__name__version", lambda r: r.user_agent and _named(r.user_agent)),
    ("agent__name__version__major",
     lambda r: r.user_agent and _named(r.user_agent, major=True)),
    ("operating__system__name", lambda r: r.os and r.os.family),
    ("operating__system__version", lambda r: r.os and _version(r.os)),
    ("operating__system__version__major", lambda r: r.os and r.os.major),
    ("operating__system__name__version", lambda r: r.os and _named(r.os)),
    ("device__name", lambda r: r.device and r.device.family),
    ("device__brand", lambda r: r.device and r.device.brand),
)  # fmt: skip


def _version(part: Any) -> str | None:
    numbers = [n for n in (part.major, part.minor, part.patch) if n is not None]
    return ".".join(numbers) or None


def _named(part: Any, major: bool = False) -> str | None:
    version = part.major if major else _version(part)
    return f"{part.family} {version}" if version else part.family


def _user_agent_parser() -> Callable[[str], Any]:
    try:
        # deferred: optional dependency, absent in some installs
        from ua_parser import parse
    except ImportError:  # pragma: no cover - a dependency of auger
        raise UserError.validation(
            "parseUserAgent needs the ua-parser package, which is not installed",
            ["Fix: pip install ua-parser, or set parseUserAgent = false"],
        ) from None
    return _memo(lambda s: None if s == "-" else parse(s))


def _user_agent_columns(base: str, parse: Callable[[str], Any]) -> list[Column]:
    def part(fn: Callable[[Any], str | None]) -> Derive:
        return lambda s: None if (r := parse(s)) is None else (fn(r) or None)

    return [Column(f"{base}_{name}", V, part(fn)) for name, fn in _USER_AGENT_PARTS]


def parse_log_format(
    text: str, timestamp_format: str | None = None, parse_user_agent: bool = False
) -> LogFormat:
    """An Apache LogFormat (or a name such as ``combined``), or an nginx ``log_format`` (its
    ``$variables``), as a regex and its columns."""
    fmt = NAMED_FORMATS.get(text.strip().lower(), text)
    fmt = fmt.replace('\\"', '"')  # as written inside a server config's quotes
    nginx = "%" not in fmt and _NGINX_VARIABLE.search(fmt) is not None
    regex: list[str] = []
    columns: dict[str, tuple[int, Column]] = {}
    pos = 0
    group = 0
    for m in (_NGINX_VARIABLE if nginx else _DIRECTIVE).finditer(fmt):
        literal = fmt[pos : m.start()]
        regex.append(re.escape(literal))
        pos = m.end()
        if nginx:
            directive = _nginx_variable(m.group(1) or m.group(2), timestamp_format)
        elif m.group(4) == "%":
            regex.append("%")
            continue
        else:
            before, argument, after, letter = m.groups()
            directive = _directive(m.group(0), before or after, letter, argument, timestamp_format)
        quoted = literal.endswith('"') and fmt[pos : pos + 1] == '"'
        pattern = _QUOTED if quoted and not directive.frame[0] else directive.pattern
        regex.append(f"{directive.frame[0]}({pattern}){directive.frame[1]}")
        group += 1
        for col in directive.columns:
            columns.setdefault(col.name, (group, col))
    regex.append(re.escape(fmt[pos:]))
    user_agent = columns.get("request_user-agent")
    if parse_user_agent and user_agent is not None:
        parse = _user_agent_parser()
        for base in ("request_user-agent", "request_user-agent_last"):
            for col in _user_agent_columns(base, parse):
                columns.setdefault(col.name, (user_agent[0], col))
    if group == 0:
        raise UserError.validation(
            f"The logFormat [{text}] has no % directives (nor $variables), so no columns",
            ["Fix: set logFormat to the server's LogFormat, such as '%h %l %u %t \"%r\" %>s %b'"],
        )
    return LogFormat(text, re.compile("".join(regex), re.DOTALL), columns)


@dataclass(frozen=True)
class HttpdOptions:
    """An ``httpd`` format's options, checked once."""

    log_format: str = DEFAULT_LOG_FORMAT
    timestamp_format: str | None = None
    max_errors: int = DEFAULT_MAX_ERRORS
    flatten_wildcards: bool = False
    parse_user_agent: bool = False

    @classmethod
    def from_config(cls, config: FormatConfig) -> HttpdOptions:
        log_format = option(config, "logFormat") or DEFAULT_LOG_FORMAT
        timestamp_format = option(config, "timestampFormat") or None
        opts = cls(
            str(log_format),
            None if timestamp_format is None else str(timestamp_format),
            int_option(config, "maxErrors", DEFAULT_MAX_ERRORS),
            bool_option(config, "flattenWildcards", False),
            bool_option(config, "parseUserAgent", False),
        )
        opts.formats()  # a bad format fails here, naming the format's option
        return opts

    def formats(self) -> list[LogFormat]:
        lines = [f for f in self.log_format.splitlines() if f.strip()]
        return [
            parse_log_format(line, self.timestamp_format, self.parse_user_agent) for line in lines
        ]

    def table_schema(self) -> TupleSchema:
        """Every column of every format, sorted by name with the maps last (as Drill); the
        special ``_raw`` and ``_matched`` aside."""
        columns: dict[str, Column] = {}
        for fmt in self.formats():
            for name, (_, col) in fmt.columns.items():
                columns.setdefault(name, col)
        scalars = sorted(c.name for c in columns.values() if not c.wildcard)
        cols = [ColumnMetadata.optional(n, columns[n].type) for n in scalars]
        if not self.flatten_wildcards:
            maps = sorted(c.name for c in columns.values() if c.wildcard)
            cols += [ColumnMetadata.map(n, (), DataMode.OPTIONAL) for n in maps]
        return TupleSchema(cols)


def _setter(writer: ScalarWriter, minor: MinorType) -> Callable[[Any], None]:
    return writer.set_string if minor is V else writer.set


class HttpdReader(LineReader):
    """One file, one row per non-empty line."""

    special_columns = ((RAW, V), (MATCHED, MinorType.BIT))

    def __init__(self, path: str, options: HttpdOptions) -> None:
        super().__init__(path)
        self.options = options
        self.bad_lines = BadLines(
            options.max_errors,
            "kept",
            "set logFormat to the LogFormat the server writes this log with, or raise "
            "maxErrors to keep lines that do not match (see them with WHERE _matched = false)",
            negative_is_unlimited=True,
        )

    def table_schema(self) -> TupleSchema:
        return self.options.table_schema()

    def start(self, negotiator: SchemaNegotiator) -> None:
        opts = self.options
        negotiator.add_context(f"logFormat: {opts.log_format}")
        self.negotiator = negotiator
        self.rows = rows = negotiator.build().writer()
        projected = negotiator.is_projected
        # Per format: (regex, [(group, derive, setter)], [(group, derive, map writer, base)]).
        self.formats: list[tuple[re.Pattern[str], list[Any], list[Any]]] = []
        for fmt in opts.formats():
            scalars: list[tuple[int, Derive, Callable[[Any], None]]] = []
            wildcards: list[tuple[int, Derive, TupleWriter | None, str]] = []
            for name, (group, col) in fmt.columns.items():
                if col.wildcard:
                    base = name[: -len(WILDCARD)]
                    if opts.flatten_wildcards:
                        wildcards.append((group, col.derive, None, base))
                    elif projected(name):
                        wildcards.append((group, col.derive, rows.tuple(name), base))
                elif projected(name):
                    scalars.append((group, col.derive, _setter(rows.scalar(name), col.type)))
            self.formats.append((fmt.regex, scalars, wildcards))
        self.raw_writer = rows.scalar(RAW) if self.is_named(RAW) else None
        self.matched_writer = rows.scalar(MATCHED) if self.is_named(MATCHED) else None
        # flattened parameters: column name -> writer, None when not projected
        self.flat_writers: dict[str, ScalarWriter | None] = {}
        self.member_writers: dict[tuple[int, str], ScalarWriter | None] = {}

    def next(self) -> bool:
        rows = self.rows
        formats = self.formats
        for number, line in self.numbered:
            self.line_number = number
            if not line:
                continue
            match = None
            for fmt in formats:
                match = fmt[0].fullmatch(line)
                if match is not None:
                    break
            if match is None:
                self._error(line)
                rows.start()
                if self.matched_writer is not None:
                    self.matched_writer.set(False)
                if self.raw_writer is not None:
                    self.raw_writer.set_string(line)
                rows.save()
                if rows.is_full():
                    return True
                continue
            _, scalars, wildcards = fmt
            rows.start()
            groups = match.groups()
            for group, derive, setter in scalars:
                value = derive(groups[group - 1])
                if value is not None:
                    setter(value)
            for group, derive, writer, base in wildcards:
                params = derive(groups[group - 1])
                if params:
                    self._write_params(writer, base, params)
            if self.matched_writer is not None:
                self.matched_writer.set(True)
            if self.raw_writer is not None:
                self.raw_writer.set_string(line)
            rows.save()
            if rows.is_full():
                return True
        return False

    def _write_params(
        self, writer: TupleWriter | None, base: str, params: Sequence[tuple[str, str]]
    ) -> None:
        for key, value in params:
            if writer is None:  # flattenWildcards: a column of its own
                column = f"{base}_{key.replace('_', '__')}"
                target = self._flat_writer(column)
            else:
                target = self._member_writer(writer, key)
            if target is not None:
                target.set_string(value)

    def _flat_writer(self, column: str) -> ScalarWriter | None:
        if column in self.flat_writers:
            return self.flat_writers[column]
        writer: ScalarWriter | None = None
        if self.negotiator.is_projected(column):
            if self.rows.index(column) < 0:
                self.rows.add_column(ColumnMetadata.optional(column, V))
            writer = self.rows.scalar(column)
        self.flat_writers[column] = writer
        return writer

    def _member_writer(self, writer: TupleWriter, key: str) -> ScalarWriter | None:
        cache_key = (id(writer), key)
        if cache_key in self.member_writers:
            return self.member_writers[cache_key]
        member: ScalarWriter | None = None
        if writer.is_projected(key):
            if writer.index(key) < 0:
                writer.add_column(ColumnMetadata.optional(key, V))
            member = writer.scalar(key)
        self.member_writers[cache_key] = member
        return member

    def _error(self, line: str) -> None:
        self.bad_lines.count(
            f"Error reading HTTPD file at line number {self.line_number}: the line does "
            "not match the logFormat",
            self.line_number,
            line,
        )


class HttpdFormat(LineFormatPlugin):
    """Drill's ``httpd`` plugin: columns from the LogFormat, not from the files."""

    type_name = "httpd"
    extensions = ("httpd",)

    def reader(self, file: FileSplit, config: FormatConfig) -> HttpdReader:
        return HttpdReader(file.path, HttpdOptions.from_config(config))
