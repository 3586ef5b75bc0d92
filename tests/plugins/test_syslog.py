"""Drill's syslog format, shipped as an entry-point plugin on the reader framework and queried
through SQL: Drill's columns, structured data as a map or flattened, SELECT *, projection,
COUNT(*), implicit columns, _raw only when named, maxErrors, a table function."""

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
from auger.plugins.syslog import SyslogLineError, SyslogOptions, parse_syslog_line
from auger.scan import ScanOperator
from tests.plugins.helpers import connect_with_formats, rows

# RFC 5424's own examples, as in Drill's tests
LOGS = """\
<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - 'su root' failed on /dev/pts/8
<34>1 1985-04-12T19:20:50.52-04:00 mymachine.example.com su - ID47 - 'su root' failed

<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make the do-nuts.
<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 \
iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]
"""

AUDIT = """\
<86>1 2015-08-05T21:58:59.693Z 192.168.2.132 SecureAuth0 23108 ID52020 [SecureAuth@27389 \
UserAgent="Mozilla/5.0 (Windows NT 6.1)" Realm="SecureAuth0" Note="a \\"quoted\\" \\] bracket"] \
Found the user
<134>1 2016-04-01T16:44:00.58Z MacBook-Pro-3 - 94473 - - {"pid":94473,"msg":"hello world"}
"""

BROKEN = """\
<34>1 2003-10-11T22:14:15.003Z host su - ID47 - fine
Oct 11 22:14:15 host su: an RFC 3164 line
<34>1 2003-10-11 host su - ID47 - a date without a time
<34>1 2003-10-11T22:14:15.003Z host su - ID47 - fine again
"""


def test_registered_by_entry_point_like_a_third_party() -> None:
    names = {ep.name: ep.value for ep in entry_points(group="auger.formats")}
    assert names["syslog"] == "auger.plugins.syslog:SyslogFormat"
    assert "syslog" in known_formats()
    assert type(get_format("syslog")).__name__ == "SyslogFormat"


def test_options_under_drill_names_and_snake_case() -> None:
    drill = {"maxErrors": 3, "flattenStructuredData": True}
    snake = {"max_errors": "3", "flatten_structured_data": "true"}
    for options in (drill, snake):
        opts = SyslogOptions.from_config(FormatConfig("s", "syslog", ("syslog",), options))
        assert opts == SyslogOptions(max_errors=3, flatten_structured_data=True)
    assert SyslogOptions.from_config(FormatConfig("s", "syslog", ("syslog",))) == SyslogOptions(
        max_errors=10, flatten_structured_data=False
    )
    with pytest.raises(auger.UserError, match="flattenStructuredData must be true or false"):
        SyslogOptions.from_config(
            FormatConfig("s", "syslog", ("syslog",), {"flattenStructuredData": "yes"})
        )


def test_parse_a_line() -> None:
    event = parse_syslog_line(LOGS.splitlines()[1])
    assert event.timestamp == dt.datetime(1985, 4, 12, 23, 20, 50, 520000)  # in UTC
    assert (event.severity_code, event.facility_code, event.host, event.app_name) == (
        2,
        4,
        "mymachine.example.com",
        "su",
    )
    assert (event.process_id, event.message_id, event.structured_data) == (None, "ID47", None)
    sd = parse_syslog_line(AUDIT.splitlines()[0]).structured_data
    assert sd == {
        "SecureAuth@27389": [
            ("UserAgent", "Mozilla/5.0 (Windows NT 6.1)"),
            ("Realm", "SecureAuth0"),
            ("Note", 'a "quoted" ] bracket'),
        ]
    }


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("Oct 11 22:14:15 host su: hi", "does not start with a priority"),
        ("<34>2 2003-10-11T22:14:15Z h a p m - x", "has version 2"),
        ("<34>1 2003-10-11 h a p m - x", "timestamp [2003-10-11] that is not RFC 3339"),
        ("<200>1 - h a p m - x", "priority <200>"),
        ("<34>1 - h a p m [id x] y", "structured data [[id x]]"),
        ("<34>1 - h a", "is not <PRI>1 TIMESTAMP"),
    ],
)
def test_lines_that_are_not_rfc_5424_say_why(line: str, what: str) -> None:
    with pytest.raises(SyslogLineError) as info:
        parse_syslog_line(line)
    assert what in str(info.value)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("syslog")
    (root / "hosts" / "a").mkdir(parents=True)
    (root / "hosts" / "a" / "logs.syslog").write_text(LOGS)
    (root / "audit.syslog").write_text(AUDIT)
    (root / "audit.flat").write_text(AUDIT)
    (root / "broken.syslog").write_text(BROKEN)
    # a parameter first met past the lines the planner samples for the schema
    early = [f'<34>1 2003-10-11T22:14:15.003Z h{i} su - ID47 [a@1 n="{i}"] x' for i in range(200)]
    late = '<34>1 2003-10-11T22:14:15.003Z late su - ID47 [a@1 n="200" late="yes"] x'
    (root / "late.syslog").write_text("\n".join([*early, late]) + "\n")
    return root


@pytest.fixture(scope="module")
def conn(spark: Any, data: Path) -> Iterator[Any]:
    formats = {
        # Drill's configuration block, as pasted
        "syslog": {
            "type": "syslog",
            "extensions": ["syslog"],
            "maxErrors": 1,
            "flattenStructuredData": False,
        },
        "flat": {
            "type": "syslog",
            "extensions": ["flat"],
            "flatten_structured_data": True,
        },
    }
    with connect_with_formats("logs", data, formats) as c:
        yield c


FIXED = [
    "event_date",
    "severity_code",
    "facility_code",
    "severity",
    "facility",
    "ip",
    "app_name",
    "process_id",
    "message_id",
    "structured_data_text",
]


@pytest.mark.spark
def test_select_star_has_drill_columns_and_no_raw(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("SELECT * FROM dfs.logs.`hosts/a/logs.syslog` ORDER BY event_date")
    assert [d[0] for d in cur.description] == [*FIXED, "structured_data", "message"]
    got = [tuple(r) for r in cur.fetchall()]
    assert len(got) == 4  # the empty line is skipped
    first = got[0]
    assert first[:10] == (
        dt.datetime(1985, 4, 12, 23, 20, 50, 520000),
        2,
        4,
        "CRIT",
        "AUTH",
        "mymachine.example.com",
        "su",
        None,
        "ID47",
        None,
    )
    assert first[11] == "'su root' failed"
    # to the millisecond, in UTC, as Drill
    assert got[1][0] == dt.datetime(2003, 8, 24, 12, 14, 15)
    assert got[1][3:9] == ("NOTICE", "LOCAL4", "192.0.2.1", "myproc", "8710", None)
    last = got[3]
    assert last[9] == (
        "{examplePriority@32473=[class=high], "
        "exampleSDID@32473=[iut=3, eventSource=Application, eventID=1011]}"
    )
    assert last[11] is None  # no message after the structured data


@pytest.mark.spark
def test_projection_count_and_implicit_columns(conn: Any) -> None:
    assert rows(conn, "SELECT COUNT(*) FROM dfs.logs.`hosts`") == [(4,)]
    got = rows(
        conn,
        "SELECT severity, COUNT(*) AS n, MIN(filename), MIN(dir0) FROM dfs.logs.`hosts` "
        "GROUP BY severity ORDER BY severity",
    )
    assert got == [("CRIT", 2, "logs.syslog", "a"), ("NOTICE", 2, "logs.syslog", "a")]


@pytest.mark.spark
def test_raw_only_when_named(conn: Any) -> None:
    got = rows(conn, "SELECT _raw FROM dfs.logs.`audit.syslog` WHERE ip = 'MacBook-Pro-3'")
    assert got == [(AUDIT.splitlines()[1],)]


@pytest.mark.spark
def test_structured_data_as_a_map(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT t.structured_data.UserAgent, t.structured_data.Note, message "
        "FROM dfs.logs.`audit.syslog` t ORDER BY event_date",
    )
    assert got == [
        ("Mozilla/5.0 (Windows NT 6.1)", 'a "quoted" ] bracket', "Found the user"),
        (None, None, '{"pid":94473,"msg":"hello world"}'),
    ]


@pytest.mark.spark
def test_flattened_structured_data_are_columns_of_their_own(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("SELECT * FROM dfs.logs.`audit.flat` ORDER BY event_date")
    assert [d[0] for d in cur.description] == [
        *FIXED,
        "message",
        "structured_data_UserAgent",
        "structured_data_Realm",
        "structured_data_Note",
    ]
    got = [tuple(r) for r in cur.fetchall()]
    assert got[0][-4:] == (
        "Found the user",
        "Mozilla/5.0 (Windows NT 6.1)",
        "SecureAuth0",
        'a "quoted" ] bracket',
    )
    assert got[1][-3:] == (None, None, None)
    assert rows(conn, "SELECT structured_data_Realm FROM dfs.logs.`audit.flat`") == [
        ("SecureAuth0",),
        (None,),
    ]


@pytest.mark.spark
def test_more_bad_lines_than_max_errors_fail_with_file_and_line(conn: Any) -> None:
    # two lines are not RFC 5424 and the workspace format has maxErrors = 1
    with pytest.raises(auger.DatabaseError) as info:
        rows(conn, "SELECT message FROM dfs.logs.`broken.syslog`")
    text = str(info.value)
    assert text.startswith(
        "DATA_READ ERROR: Maximum Error Threshold Exceeded. Error reading Syslog file at line 3"
    )
    assert "broken.syslog" in text and "Line: 3" in text and "not RFC 3339" in text


@pytest.mark.spark
def test_table_function_options(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT message FROM table(dfs.logs.`broken.syslog`(type => 'syslog', "
        "maxErrors => 2)) ORDER BY message",
    )
    assert got == [("fine",), ("fine again",)]
    got = rows(
        conn,
        "SELECT structured_data_Realm FROM table(dfs.logs.`audit.syslog`(type => 'syslog', "
        "flattenStructuredData => true)) WHERE structured_data_Realm IS NOT NULL",
    )
    assert got == [("SecureAuth0",)]


@pytest.mark.spark
def test_small_batches_keep_every_row(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET `auger.scan.batch_rows` = 1")
    try:
        assert rows(conn, "SELECT COUNT(message) FROM dfs.logs.`hosts`") == [(3,)]
    finally:
        cur.execute("ALTER SESSION RESET `auger.scan.batch_rows`")


def test_a_compressed_file_and_projection_without_spark(tmp_path: Path) -> None:
    path = tmp_path / "logs.syslog.gz"
    path.write_bytes(gzip.compress(LOGS.encode()))
    plugin, config = get_format("syslog"), FormatConfig("syslog", "syslog", ("syslog",))
    op = ScanOperator(lambda split: plugin.reader(split, config), [str(path)], ["ip", "_raw"])
    got = [r for b in op for r in b.to_pylist()]
    assert [r["ip"] for r in got] == ["mymachine.example.com"] * 2 + ["192.0.2.1"] + [
        "mymachine.example.com"
    ]
    assert [r["_raw"] for r in got] == [line for line in LOGS.splitlines() if line]


@pytest.mark.spark
def test_a_map_member_first_met_after_the_sample_is_text(conn: Any) -> None:
    # Drill's syslog scan types what no sampled line has as nullable VARCHAR (not INT), so
    # the member reads as the text the reader writes
    got = rows(
        conn,
        "SELECT ip, t.structured_data.late FROM dfs.logs.`late.syslog` t "
        "WHERE t.structured_data.late IS NOT NULL",
    )
    assert got == [("late", "yes")]
    cur = conn.cursor()
    cur.execute("SELECT t.structured_data.nowhere, nosuch FROM dfs.logs.`late.syslog` t LIMIT 1")
    assert [d[1] for d in cur.description] == ["CHARACTER VARYING", "CHARACTER VARYING"]
    assert [tuple(r) for r in cur.fetchall()] == [(None, None)]
