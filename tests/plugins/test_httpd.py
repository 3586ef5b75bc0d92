"""Drill's httpd format, shipped as an entry-point plugin on the reader framework and queried
through SQL: Drill's column names and types for a LogFormat, the request line and URI parts,
query parameters as a map or flattened, SELECT *, projection, COUNT(*), implicit columns,
_raw and _matched only when named, maxErrors, a table function."""

from __future__ import annotations

import datetime as dt
import gzip
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

import auger
from auger.config import FormatConfig
from auger.formats import get_format, known_formats
from auger.plugins.httpd import HttpdOptions, parse_log_format
from auger.scan import ScanOperator
from tests.plugins.helpers import connect_with_formats, rows

UA = "Mozilla/5.0 (Windows NT 5.1; rv:35.0) Gecko/20100101 Firefox/35.0"
# Lines as Drill's own tests have them (the default, combined-like format)
ACCESS = f"""\
195.154.46.135 - - [25/Oct/2015:04:11:25 +0100] "GET /linux/doing-pxe-without-dhcp-control \
HTTP/1.1" 200 24323 "http://howto.basjes.nl/" "{UA}"
23.95.237.180 - - [25/Oct/2015:04:11:26 +0100] "GET /join_form HTTP/1.0" 200 11114 \
"http://howto.basjes.nl/" "{UA}"

158.222.5.157 - bob [25/Oct/2015:04:24:37 +0100] "GET /acl_users/require_login?came_from=\
http%3A//howto.basjes.nl/join_form&Lang=nl HTTP/1.1" 200 10716 "http://howto.basjes.nl:8080/x?a=1" \
"{UA}"
5.39.5.5 - - [25/Oct/2015:04:32:22 -0500] "POST /join_form HTTP/1.1" 302 - "-" "-"
"""

COMMON = """\
127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326
not an access log line
127.0.0.1 - - [10/Oct/2000:13:55:37 -0700] "GET /index.html?q=1 HTTP/1.0" 404 -
also not one
"""

NGINX_FORMAT = (
    '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
    '"$http_referer" "$http_user_agent" "$http_x_forwarded_for" $request_time $upstream_addr'
)
NGINX = """\
10.0.0.1 - - [25/Oct/2015:04:11:25 +0100] "GET /a?b=1 HTTP/1.1" 200 612 "-" "curl/8.0" \
"1.2.3.4, 5.6.7.8" 0.005 127.0.0.1:9000
10.0.0.2 - ann [25/Oct/2015:04:11:26 +0100] "HEAD / HTTP/1.1" 304 0 "-" "-" "-" 0.000 -
"""

ALL_COLUMNS = 118  # Drill's columns for its default LogFormat: 114 values and 4 query maps


def test_registered_by_entry_point_like_a_third_party() -> None:
    names = {ep.name: ep.value for ep in entry_points(group="auger.formats")}
    assert names["httpd"] == "auger.plugins.httpd:HttpdFormat"
    assert "httpd" in known_formats()
    assert type(get_format("httpd")).__name__ == "HttpdFormat"


def test_options_under_drill_names_and_snake_case() -> None:
    drill = {"logFormat": "common", "timestampFormat": "dd/MMM/yyyy:HH:mm:ss ZZ", "maxErrors": 3}
    snake = {
        "log_format": "common",
        "timestamp_format": "dd/MMM/yyyy:HH:mm:ss ZZ",
        "max_errors": "3",
        "flatten_wildcards": "false",
    }
    for options in (drill, snake):
        opts = HttpdOptions.from_config(FormatConfig("h", "httpd", ("httpd",), options))
        assert opts == HttpdOptions("common", "dd/MMM/yyyy:HH:mm:ss ZZ", 3, False)
    default = HttpdOptions.from_config(FormatConfig("h", "httpd", ("httpd",)))
    assert default.log_format == '%h %l %u %t "%r" %s %b "%{Referer}i" "%{User-agent}i"'
    assert default.max_errors == 0
    with pytest.raises(auger.UserError, match="directive %Z is not one"):
        HttpdOptions.from_config(FormatConfig("h", "httpd", ("httpd",), {"logFormat": "%h %Z"}))
    with pytest.raises(auger.UserError, match="has no % directives"):
        HttpdOptions.from_config(FormatConfig("h", "httpd", ("httpd",), {"logFormat": "plain"}))


def test_the_schema_is_drills_for_its_default_format() -> None:
    # known from the format alone, with the special columns last: no file is needed
    config = FormatConfig("httpd", "httpd", ("httpd",))
    schema = get_format("httpd").discover_schema([], config, {})
    assert schema.columns()[:-2] == HttpdOptions().table_schema().columns()
    names = [c.name for c in schema.columns()]
    assert len(names) == ALL_COLUMNS + 2
    assert names[:3] == [
        "connection_client_host",
        "connection_client_host_last",
        "connection_client_logname",
    ]
    assert names[-6:] == [
        "request_firstline_original_uri_query_$",
        "request_firstline_uri_query_$",
        "request_referer_last_query_$",
        "request_referer_query_$",
        "_raw",
        "_matched",
    ]
    types = {c.name: c.type.value for c in schema.columns()}
    assert types["connection_client_logname"] == "BIGINT"
    assert types["request_receive_time"] == "TIMESTAMP"
    assert types["request_receive_time_last_time__utc"] == "TIME"
    assert types["request_receive_time_date"] == "DATE"
    assert types["request_firstline_uri_port"] == "BIGINT"
    assert types["request_status_last"] == "VARCHAR"
    assert types["response_body_bytesclf"] == "BIGINT"


def test_log_format_to_regex_and_values() -> None:
    fmt = parse_log_format("combined")
    line = ACCESS.splitlines()[3]
    m = fmt.regex.fullmatch(line)
    assert m is not None

    def value(name: str) -> Any:
        group, col = fmt.columns[name]
        return col.derive(m.group(group))

    assert value("connection_client_user") == "bob"
    assert value("request_firstline_method") == "GET"
    assert value("request_firstline_uri_path") == "/acl_users/require_login"
    assert value("request_firstline_uri_query") == (
        "came_from=http%3A//howto.basjes.nl/join_form&Lang=nl"
    )
    assert value("request_firstline_uri_query_$") == [
        ("came_from", "http://howto.basjes.nl/join_form"),
        ("lang", "nl"),
    ]
    assert value("request_referer_port") == 8080
    assert value("request_referer_host") == "howto.basjes.nl"
    assert value("request_receive_time") == dt.datetime(2015, 10, 25, 3, 24, 37)
    assert value("request_receive_time_hour") == 4
    assert value("request_receive_time_hour__utc") == 3
    assert value("request_receive_time_timezone") == "+01:00"
    assert value("request_receive_time_last_monthname__utc") == "October"
    assert value("request_status_last") == "200"
    # a custom timestamp format, Java-style as Drill takes it
    custom = parse_log_format("%t %h", "yyyy-MM-dd'T'HH:mm:ssXXX")
    m = custom.regex.fullmatch("[2021-03-04T05:06:07+02:00] host")
    assert m is not None
    group, col = custom.columns["request_receive_time"]
    assert col.derive(m.group(group)) == dt.datetime(2021, 3, 4, 3, 6, 7)


@pytest.mark.parametrize(
    ("log_format", "line"),
    [
        ("%t %>s", "[04/Mar/2021:05:06:07 +0200] 200"),
        ("%{sec}t %>s", "1614827167 200"),
        ("%{msec}t %>s", "1614827167000 200"),
        ("[%{%Y-%m-%d %H:%M:%S %z}t] %>s", "[2021-03-04 05:06:07 +0200] 200"),
        ("%{end:%d.%m.%Y %H:%M:%S}t %>s", "04.03.2021 03:06:07 200"),
    ],
)
def test_apache_time_directives(log_format: str, line: str) -> None:
    fmt = parse_log_format(log_format)
    m = fmt.regex.fullmatch(line)
    assert m is not None
    for name in ("request_receive_time", "request_receive_time_last"):
        group, col = fmt.columns[name]
        assert col.derive(m.group(group)) == dt.datetime(2021, 3, 4, 3, 6, 7)
    group, col = fmt.columns["request_status_last"]
    assert col.derive(m.group(group)) == "200"


def test_user_agent_parts_with_parse_user_agent() -> None:
    fmt = parse_log_format("agent", parse_user_agent=True)
    iphone = (
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 "
        "(KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"
    )
    m = fmt.regex.fullmatch(iphone)
    assert m is not None
    got = {
        name: col.derive(m.group(group))
        for name, (group, col) in fmt.columns.items()
        if name.startswith("request_user-agent_last_")
    }
    assert got == {
        "request_user-agent_last_agent__name": "Mobile Safari",
        "request_user-agent_last_agent__version": "17.0",
        "request_user-agent_last_agent__version__major": "17",
        "request_user-agent_last_agent__name__version": "Mobile Safari 17.0",
        "request_user-agent_last_agent__name__version__major": "Mobile Safari 17",
        "request_user-agent_last_operating__system__name": "iOS",
        "request_user-agent_last_operating__system__version": "17.0",
        "request_user-agent_last_operating__system__version__major": "17",
        "request_user-agent_last_operating__system__name__version": "iOS 17.0",
        "request_user-agent_last_device__name": "iPhone",
        "request_user-agent_last_device__brand": "Apple",
    }
    # off by default, as in Drill
    assert "request_user-agent_agent__name" not in parse_log_format("agent").columns


def test_nginx_log_format_variables() -> None:
    fmt = parse_log_format(NGINX_FORMAT)
    m = fmt.regex.fullmatch(NGINX.splitlines()[0])
    assert m is not None

    def value(name: str) -> Any:
        group, col = fmt.columns[name]
        return col.derive(m.group(group))

    # the Apache directive's columns where nginx has one, else nginx_<variable> as text
    assert value("connection_client_host") == "10.0.0.1"
    assert value("request_receive_time") == dt.datetime(2015, 10, 25, 3, 11, 25)
    assert value("request_firstline_uri_query_$") == [("b", "1")]
    assert value("request_status_last") == "200"
    assert value("response_body_bytes") == 612
    assert value("request_header_x-forwarded-for") == "1.2.3.4, 5.6.7.8"
    assert value("response_server_processing_time") == 0.005
    assert value("nginx_upstream_addr") == "127.0.0.1:9000"


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("httpd")
    (root / "2015" / "oct").mkdir(parents=True)
    (root / "2015" / "oct" / "access.httpd").write_text(ACCESS)
    (root / "common.log").write_text(COMMON)
    (root / "flat.qlog").write_text(ACCESS)
    (root / "nginx.log").write_text(NGINX)
    # a query parameter first met past the lines the planner samples for the schema
    line = '1.2.3.4 - - [25/Oct/2015:04:11:25 +0100] "GET /p?{} HTTP/1.1" 200 5 "-" "{}"'
    lines = [line.format(f"a={i}", UA) for i in range(200)] + [line.format("a=1&late=yes", UA)]
    (root / "late.httpd").write_text("\n".join(lines) + "\n")
    return root


@pytest.fixture(scope="module")
def conn(spark: Any, data: Path) -> Iterator[Any]:
    formats = {
        # Drill's own configuration block, as pasted (maxErrors 0: the first bad line fails)
        "httpd": {
            "type": "httpd",
            "extensions": ["httpd"],
            "logFormat": '%h %l %u %t "%r" %s %b "%{Referer}i" "%{User-agent}i"',
            "maxErrors": 0,
            "flattenWildcards": False,
        },
        "common": {"type": "httpd", "extensions": ["log"], "log_format": "common", "max_errors": 2},
        "flat": {"type": "httpd", "extensions": ["qlog"], "flattenWildcards": True},
    }
    with connect_with_formats("web", data, formats) as c:
        yield c


@pytest.mark.spark
def test_select_star_has_drills_columns_and_no_special_ones(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("SELECT * FROM dfs.web.`2015/oct/access.httpd` ORDER BY request_receive_time")
    names = [d[0] for d in cur.description]
    assert len(names) == ALL_COLUMNS
    assert "_raw" not in names and "_matched" not in names
    got = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    assert len(got) == 4  # the empty line is skipped
    first = got[0]
    assert first["connection_client_host"] == "195.154.46.135"
    assert first["connection_client_logname"] is None
    assert first["request_firstline_original_uri_path"] == "/linux/doing-pxe-without-dhcp-control"
    assert first["request_firstline_protocol_version"] == "1.1"
    assert first["request_receive_time"] == dt.datetime(2015, 10, 25, 3, 11, 25)
    assert first["request_receive_time_last_time"] == "04:11:25.000"  # TIME, as auger shows it
    assert first["request_receive_time_weekofweekyear"] == 43
    assert first["request_referer_protocol"] == "http"
    assert first["request_referer_path"] == "/"
    assert first["request_user-agent"] == UA
    assert first["response_body_bytesclf"] == 24323
    last = got[3]
    assert last["request_receive_time"] == dt.datetime(2015, 10, 25, 9, 32, 22)
    assert last["request_receive_time_timezone"] == "-05:00"
    assert (last["request_status_last"], last["response_body_bytes"]) == ("302", 0)
    assert (last["request_referer"], last["request_referer_host"]) == (None, None)


@pytest.mark.spark
def test_projection_count_and_implicit_columns(conn: Any) -> None:
    assert rows(conn, "SELECT COUNT(*) FROM dfs.web.`2015`") == [(4,)]
    got = rows(
        conn,
        "SELECT request_firstline_method AS m, COUNT(*) AS n, MIN(filename), MIN(dir0) "
        "FROM dfs.web.`2015` GROUP BY request_firstline_method ORDER BY m",
    )
    assert got == [("GET", 3, "access.httpd", "oct"), ("POST", 1, "access.httpd", "oct")]


@pytest.mark.spark
def test_query_parameters_as_a_map(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT t.`request_firstline_uri_query_$`.came_from, "
        "t.`request_firstline_uri_query_$`.lang, t.`request_referer_query_$`.a "
        "FROM dfs.web.`2015/oct/access.httpd` t WHERE connection_client_user = 'bob'",
    )
    assert got == [("http://howto.basjes.nl/join_form", "nl", "1")]


@pytest.mark.spark
def test_flattened_query_parameters_are_columns(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT request_firstline_original_uri_query_came__from FROM dfs.web.`flat.qlog` "
        "WHERE request_firstline_original_uri_query_came__from IS NOT NULL",
    )
    assert got == [("http://howto.basjes.nl/join_form",)]


@pytest.mark.spark
def test_bad_lines_up_to_max_errors_are_rows_with_matched_false(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT _matched, _raw, connection_client_user, request_status_last, "
        "response_body_bytesclf FROM dfs.web.`common.log`",
    )
    assert got == [
        (True, COMMON.splitlines()[0], "frank", "200", 2326),
        (False, "not an access log line", None, None, None),
        (True, COMMON.splitlines()[2], None, "404", 0),
        (False, "also not one", None, None, None),
    ]
    assert rows(conn, "SELECT _raw FROM dfs.web.`common.log` WHERE _matched = false") == [
        ("not an access log line",),
        ("also not one",),
    ]


@pytest.mark.spark
def test_one_bad_line_past_max_errors_fails_with_file_and_line(conn: Any) -> None:
    with pytest.raises(auger.DatabaseError) as info:
        rows(
            conn,
            "SELECT request_status_last FROM table(dfs.web.`common.log`(type => 'httpd', "
            "logFormat => 'common', maxErrors => 1))",
        )
    text = str(info.value)
    assert text.startswith("DATA_READ ERROR: Error reading HTTPD file at line number 4")
    assert "common.log" in text and "Line: 4" in text and "also not one" in text


@pytest.mark.spark
def test_table_function_options(conn: Any) -> None:
    # Apache's common format does not match these combined lines; maxErrors -1 keeps them all
    got = rows(
        conn,
        "SELECT _matched, COUNT(*) FROM table(dfs.web.`2015/oct/access.httpd`(type => 'httpd', "
        "logFormat => 'common', maxErrors => -1)) GROUP BY _matched",
    )
    assert got == [(False, 4)]
    got = rows(
        conn,
        "SELECT connection_client_user, `request_user-agent` FROM table("
        "dfs.web.`2015/oct/access.httpd`(type => 'httpd', log_format => 'combined')) "
        "WHERE connection_client_user IS NOT NULL",
    )
    assert got == [("bob", UA)]


@pytest.mark.spark
def test_an_nginx_log_format_through_sql(conn: Any) -> None:
    # the nginx format given in a table function (a quote in it doubled, as SQL wants)
    fmt = NGINX_FORMAT.replace("'", "''")
    got = rows(
        conn,
        "SELECT connection_client_user, request_firstline_method, response_body_bytes, "
        "nginx_upstream_addr FROM table(dfs.web.`nginx.log`(type => 'httpd', "
        f"logFormat => '{fmt}')) ORDER BY request_receive_time",
    )
    assert got == [(None, "GET", 612, "127.0.0.1:9000"), ("ann", "HEAD", 0, None)]


@pytest.mark.spark
def test_parse_user_agent_in_a_table_function(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT `request_user-agent_agent__name`, `request_user-agent_operating__system__name`, "
        "COUNT(*) FROM table(dfs.web.`2015/oct/access.httpd`(type => 'httpd', "
        "parseUserAgent => true)) GROUP BY 1, 2 ORDER BY 1",
    )
    assert got == [("Firefox", "Windows", 3), (None, None, 1)]


@pytest.mark.spark
def test_small_batches_keep_every_row(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET `auger.scan.batch_rows` = 1")
    try:
        assert rows(conn, "SELECT COUNT(connection_client_host) FROM dfs.web.`2015`") == [(4,)]
    finally:
        cur.execute("ALTER SESSION RESET `auger.scan.batch_rows`")


def test_a_compressed_file_and_projection_without_spark(tmp_path: Path) -> None:
    path = tmp_path / "access.httpd.gz"
    path.write_bytes(gzip.compress(ACCESS.encode()))
    plugin, config = get_format("httpd"), FormatConfig("httpd", "httpd", ("httpd",))
    op = ScanOperator(
        lambda split: plugin.reader(split, config),
        [str(path)],
        ["request_firstline_uri_path", "_matched"],
    )
    got = [r for b in op for r in b.to_pylist()]
    assert [r["request_firstline_uri_path"] for r in got] == [
        "/linux/doing-pxe-without-dhcp-control",
        "/join_form",
        "/acl_users/require_login",
        "/join_form",
    ]
    assert all(r["_matched"] for r in got)


def test_a_line_past_the_byte_limit_moves_whole_to_the_next_batch(tmp_path: Path) -> None:
    # two 1 MB request lines do not fit one batch of 1.5 MB: the loader carries the row that
    # would pass the limit into the next batch, and no row is split or lost
    long_path = "/" + "x" * (1 << 20)
    lines = [
        f'1.1.1.{i} - - [25/Oct/2015:04:11:2{i} +0100] "GET {long_path if i in (2, 3) else "/"} '
        f'HTTP/1.1" 200 {i} "-" "-"'
        for i in range(5)
    ]
    path = tmp_path / "big.httpd"
    path.write_text("\n".join(lines) + "\n")
    plugin, config = get_format("httpd"), FormatConfig("httpd", "httpd", ("httpd",))
    op = ScanOperator(
        lambda split: plugin.reader(split, config),
        [str(path)],
        ["connection_client_host", "request_firstline_uri_path"],
        vector_size_limit=3 << 19,
    )
    batches = [[r["connection_client_host"] for r in b.to_pylist()] for b in op]
    assert [h for b in batches for h in b] == [f"1.1.1.{i}" for i in range(5)]
    assert ["1.1.1.0", "1.1.1.1", "1.1.1.2"] in batches  # the batch ends before 1.1.1.3


@pytest.mark.spark
def test_a_query_parameter_first_met_after_the_sample_is_text(conn: Any) -> None:
    # Drill's httpd scan types what no sampled line has as nullable VARCHAR (not INT)
    got = rows(
        conn,
        "SELECT t.`request_firstline_uri_query_$`.late FROM dfs.web.`late.httpd` t "
        "WHERE t.`request_firstline_uri_query_$`.late IS NOT NULL",
    )
    assert got == [("yes",)]
