"""Drill's ltsv format, shipped as an entry-point plugin on the reader framework and queried
through SQL: columns as the labels are met, SELECT *, projection, COUNT(*), implicit columns,
Drill's options under both spellings, a provided schema, strict and lenient parsing."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

import auger
from auger.config import FormatConfig
from auger.formats import get_format, known_formats
from auger.plugins.ltsv import LtsvOptions, LtsvSyntaxError, parse_line
from auger.scan import ScanOperator
from tests.plugins.helpers import connect_with_formats, rows

# Drill's own sample: the labels of the second line come in another order
ACCESS_LOG = (
    "host:10.0.0.1\tforwardedfor:-\treq:GET /v1/xxx HTTP/1.1\tstatus:200\tsize:4968\t"
    "ua:Java/1.8.0_131\treqtime:2.532\n"
    "\n"
    "status:200\thost:10.0.0.2\treq:GET /v1/yyy HTTP/1.1\tsize:412\tua:Java/1.8.0_201\t"
    "reqtime:3.580\tvhost:api.example.com\n"
)

# a bad entry (an empty key) in the middle of the second line, and an entry without a value
INVALID = "time:30/Nov/2016:00:55:08 +0900\thost:a\nhost:b\t:xxx.xxx\tlevel:warn\tflag\n"

# Drill's options, changed: `=` between key and value, `|` between entries, `'` for quotes
PIPES = "city='New York|NY'|lat=40.6943\ncity=Berlin|lat=52.5218|note=a\\|b\n"


def test_registered_by_entry_point_like_a_third_party() -> None:
    names = {ep.name: ep.value for ep in entry_points(group="auger.formats")}
    assert names["ltsv"] == "auger.plugins.ltsv:LtsvFormat"
    assert "ltsv" in known_formats()
    assert type(get_format("ltsv")).__name__ == "LtsvFormat"


def test_options_under_drill_names_and_snake_case() -> None:
    drill = FormatConfig(
        "x", "ltsv", ("ltsv",), {"parseMode": "strict", "kvDelimiter": "=", "quoteChar": "'"}
    )
    snake = FormatConfig(
        "x", "ltsv", ("ltsv",), {"parse_mode": "STRICT", "kv_delimiter": "=", "quote_char": "'"}
    )
    assert LtsvOptions.from_config(drill) == LtsvOptions.from_config(snake)
    opts = LtsvOptions.from_config(drill)
    assert (opts.strict, opts.kv_delimiter, opts.quote, opts.entry_delimiter) == (
        True,
        "=",
        "'",
        "\t",
    )
    for bad, text in [
        ({"parseMode": "loose"}, r"parseMode \[loose\]"),
        ({"kvDelimiter": "=="}, "single character"),
        ({"entryDelimiter": ":"}, "two of the LTSV characters are the same"),
    ]:
        with pytest.raises(auger.UserError, match=text):
            LtsvOptions.from_config(FormatConfig("x", "ltsv", ("ltsv",), bad))


@pytest.mark.parametrize(
    ("line", "lenient", "strict_error"),
    [
        ("a:1\t\tb: 2 \tc:", {"a": "1", "b": "2"}, None),  # trimmed; empty value is no value
        ("a:x:y\tA:z", {"a": "z"}, None),  # split at the first `:`; a key again keeps the last
        ('q:"x\ty"\tb:c\\:d', {"q": "x\ty", "b": "c:d"}, None),  # quotes and escapes
        ("flag\ta:1", {"a": "1"}, "Key without a value at 1"),
        ("a:1\t:v", {"a": "1"}, "Empty key detected at 5"),
        ('a"b:1\tc:2', {'a"b': "1", "c": "2"}, 'Unexpected quote token ["] at 2'),
        ('a:"open', {"a": "open"}, 'Unclosed quote token ["] at 7'),
    ],
)
def test_parse_line(line: str, lenient: dict[str, str], strict_error: str | None) -> None:
    got = parse_line(line, LtsvOptions())
    assert {k: v for k, (_, v) in got.items()} == lenient
    if strict_error is None:
        assert parse_line(line, LtsvOptions(strict=True)) == got
    else:
        with pytest.raises(LtsvSyntaxError) as info:
            parse_line(line, LtsvOptions(strict=True))
        assert f"{info.value.what} at {info.value.position}" == strict_error


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ltsv")
    (root / "web" / "2016").mkdir(parents=True)
    (root / "web" / "2016" / "access.ltsv").write_text(ACCESS_LOG)
    (root / "bad").mkdir()
    (root / "bad" / "invalid.ltsv").write_text(INVALID)
    (root / "pipes.txt").write_text(PIPES)
    (root / "one_line.dat").write_text("a:1\tb:x;a:2;;b:y\n")
    return root


@pytest.fixture(scope="module")
def conn(spark: Any, data: Path) -> Iterator[Any]:
    formats = {
        "ltsv": {"type": "ltsv", "extensions": ["ltsv"]},
        # Drill's camelCase options, as pasted from a Drill configuration
        "pipes": {
            "type": "ltsv",
            "extensions": ["txt"],
            "kvDelimiter": "=",
            "entryDelimiter": "|",
            "quoteChar": "'",
        },
    }
    with connect_with_formats("ltsv", data, formats) as c:
        yield c


@pytest.mark.spark
def test_select_star_has_the_labels_as_met_all_varchar(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("SELECT * FROM dfs.ltsv.`web/2016/access.ltsv` ORDER BY host")
    names = [d[0] for d in cur.description]
    # first line's labels in its order, then the label only the second line has
    assert names == [
        "host",
        "forwardedfor",
        "req",
        "status",
        "size",
        "ua",
        "reqtime",
        "vhost",
    ]
    got = [tuple(r) for r in cur.fetchall()]
    assert got == [  # the empty line gives no row
        ("10.0.0.1", "-", "GET /v1/xxx HTTP/1.1", "200", "4968", "Java/1.8.0_131", "2.532", None),
        (
            "10.0.0.2",
            None,
            "GET /v1/yyy HTTP/1.1",
            "200",
            "412",
            "Java/1.8.0_201",
            "3.580",
            "api.example.com",
        ),
    ]
    assert rows(conn, "SELECT DISTINCT typeof(size) FROM dfs.ltsv.`web`") == [("VARCHAR",)]


@pytest.mark.spark
def test_projection_filter_count_and_implicit_columns(conn: Any) -> None:
    assert rows(conn, "SELECT COUNT(*) FROM dfs.ltsv.`web`") == [(2,)]
    got = rows(
        conn,
        "SELECT ua, reqtime, filename, dir0 FROM dfs.ltsv.`web` WHERE reqtime > 3.0",
    )
    assert got == [("Java/1.8.0_201", "3.580", "access.ltsv", "2016")]
    # a label no line has is a null column, as any missing column
    assert rows(conn, "SELECT vhost, nosuch FROM dfs.ltsv.`web` ORDER BY vhost") == [
        ("api.example.com", None),
        (None, None),
    ]


@pytest.mark.spark
def test_provided_schema_types_the_labels(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute(
        "SELECT host, size, reqtime, typeof(size), typeof(reqtime) FROM "
        "table(dfs.ltsv.`web/2016/access.ltsv`(type => 'ltsv', schema => "
        "'inline=(`size` INT, `reqtime` DOUBLE)')) ORDER BY size"
    )
    assert [tuple(r) for r in cur.fetchall()] == [
        ("10.0.0.2", 412, 3.58, "INT", "FLOAT8"),
        ("10.0.0.1", 4968, 2.532, "INT", "FLOAT8"),
    ]


@pytest.mark.spark
def test_drill_camel_case_options_from_the_configuration(conn: Any) -> None:
    got = rows(conn, "SELECT city, lat, note FROM dfs.ltsv.`pipes.txt` ORDER BY city")
    assert got == [("Berlin", "52.5218", "a|b"), ("New York|NY", "40.6943", None)]


@pytest.mark.spark
def test_lenient_skips_bad_entries_and_strict_fails_with_file_line_and_position(
    conn: Any,
) -> None:
    # lenient, the default: the empty key and the valueless `flag` are skipped, the rest kept
    got = rows(conn, "SELECT host, level FROM dfs.ltsv.`bad/invalid.ltsv` ORDER BY host")
    assert got == [("a", None), ("b", "warn")]
    with pytest.raises(auger.DatabaseError) as info:
        rows(
            conn,
            "SELECT * FROM table(dfs.ltsv.`bad/invalid.ltsv`(type => 'ltsv', "
            "parseMode => 'strict'))",
        )
    text = str(info.value)
    assert text.startswith("DATA_READ ERROR: Empty key detected at line [2] position [8]")
    assert "invalid.ltsv" in text and "Line: 2" in text and "parseMode" in text


@pytest.mark.spark
def test_table_function_options_in_snake_case(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT city FROM table(dfs.ltsv.`pipes.txt`(type => 'ltsv', kv_delimiter => '=', "
        "entry_delimiter => '|', quote_char => '''')) ORDER BY city",
    )
    assert got == [("Berlin",), ("New York|NY",)]


@pytest.mark.spark
def test_records_end_at_the_configured_line_ending(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT a, b FROM table(dfs.ltsv.`one_line.dat`(type => 'ltsv', lineEnding => ';'))",
    )
    assert got == [("1", "x"), ("2", None), (None, "y")]


@pytest.mark.spark
def test_small_batches_keep_every_row(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET `auger.scan.batch_rows` = 1")
    try:
        assert rows(conn, "SELECT COUNT(host), COUNT(vhost) FROM dfs.ltsv.`web`") == [(2, 1)]
    finally:
        cur.execute("ALTER SESSION RESET `auger.scan.batch_rows`")


def test_a_row_past_the_byte_limit_starts_the_next_batch_with_its_new_label(
    tmp_path: Path,
) -> None:
    # four 300 KB values of `a` fit under 1.5 MB; the fifth line's 1 MB one does not, and that
    # line's label `big` is new: the row moves whole to the second batch, the new column with it
    lines = [f"n:{i}\ta:{chr(65 + i) * 300_000}" for i in range(4)]
    lines += ["n:4\tbig:new\ta:" + "E" * 1_000_000, "n:5\ta:z"]
    path = tmp_path / "big.ltsv"
    path.write_text("\n".join(lines) + "\n")
    plugin, config = get_format("ltsv"), FormatConfig("ltsv", "ltsv", ("ltsv",))
    op = ScanOperator(
        lambda split: plugin.reader(split, config),
        [str(path)],
        ["*"],
        vector_size_limit=1_500_000,
    )
    batches = list(op)
    assert [b.num_rows for b in batches] == [4, 2]
    second = batches[1].to_pylist()
    assert [(r["n"], r["big"], r["a"][:3], len(r["a"])) for r in second] == [
        ("4", "new", "EEE", 1_000_000),
        ("5", None, "z", 1),
    ]
    assert [len(r["a"]) for r in batches[0].to_pylist()] == [300_000] * 4
