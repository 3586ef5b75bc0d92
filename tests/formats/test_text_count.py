"""Counting text records without parsing (``COUNT(*)``) gives exactly the full parse's count.

The reference is the Python parser reading every field; the count path must agree on every file
it accepts, and hand every other file to the parsers.
"""

from __future__ import annotations

import gzip
import io
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.text import TextOptions, arrow_reader
from auger.formats.text import plugin as text_plugin
from auger.formats.text.counting import block_counts
from auger.scan.spec import FileSplit

from .helpers import read_file

PYTHON = {"auger.scan.text_force_python": True}

# pieces that matter to line counting: line ends, quotes, comments, blanks, non-ASCII, bad bytes
_TOKENS = st.sampled_from(
    [
        b"a",
        b"bc",
        b",",
        b"\n",
        b"\n",
        b"\r\n",
        b"\r",
        b" ",
        b'"',
        b"#",
        "é".encode(),
        b"\xef\xbb\xbf",
        b"\xff",
        b"\x00",
        b"x" * 12,
        b"\\",
    ]
)
_CONFIGS = st.fixed_dictionaries(
    {
        "extract_header": st.booleans(),
        "skip_first_line": st.booleans(),
        "comment": st.sampled_from(["#", "\u0000"]),
        "quote": st.sampled_from(['"', "\u0000"]),
        "escape": st.sampled_from(['"', "\\"]),
    }
)


def _reference(
    path: Path, config: dict[str, Any], options: dict[str, Any], python: bool = True
) -> int | None:
    """Records of the full parse (every field; by default with the Python parser); None when it
    reports an error."""
    try:
        batches = read_file(path, "text", config, {**(PYTHON if python else {}), **options})
    except UserError:
        return None
    return sum(b.num_rows for b in batches)


def _counted(path: Path, config: dict[str, Any], options: dict[str, Any]) -> int:
    batches = read_file(path, "text", config, options, columns=[])
    return sum(b.num_rows for b in batches)


def _counter_total(
    data: bytes, config: dict[str, Any], options: dict[str, Any], block: int
) -> int | None:
    o = TextOptions.from_config(FormatConfig("t", "text", (), config), options)
    counts = list(block_counts(lambda: io.BytesIO(data), o, block))
    if any(c is None for c in counts):
        return None
    return sum(c for c in counts if c is not None)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.lists(_TOKENS, max_size=40).map(b"".join),
    config=_CONFIGS,
    block=st.integers(1, 9),
    field_limit=st.sampled_from([6, 1 << 20]),
)
def test_count_path_equals_full_parse(
    data: bytes, config: dict[str, Any], block: int, field_limit: int
) -> None:
    options = {"auger.scan.text_max_field_bytes": field_limit}
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        path = Path(tmp) / "f.csv"
        path.write_bytes(data)
        mp.setattr(text_plugin, "_COUNT_BLOCK", block)
        expected = _reference(path, config, options, python=False)
        trusted = _counter_total(data, config, options, block)
        counted: int | None
        try:
            counted = _counted(path, config, options)
        except UserError:
            counted = None  # the header itself is bad (or the parse failed): reported
        if expected is not None:
            assert counted == expected
        if trusted is not None and data[:1] not in (b"", b"\n", b"\r"):
            # what the counter accepts, both parsers read without error, to the same count
            # (only a bad header, read before counting, is still reported)
            skip = 1 if (config["extract_header"] or config["skip_first_line"]) else 0
            if counted is None:
                assert expected is None
            else:
                assert expected == _reference(path, config, options) == max(0, trusted - skip)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"1,2\n3,4\n", 2),
        (b"1,2\n3,4", 2),  # last line without a line end
        (b"1,2\r\n3,4\r\n", 2),
        (b"1,2\n\n\n3,4\n\n", 2),  # empty lines are not records
        (b"1,2\r\n\r\n3,4\r\n", 2),
        (b"1\n \n,\n", 3),  # a blank-looking line with a space or a delimiter is a record
        ("é,ü\nß\n".encode(), 2),
    ],
)
def test_plain_files_are_counted_without_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: bytes, expected: int
) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(text)

    def no_parse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("parsed a file the count path should have counted")

    monkeypatch.setattr(text_plugin, "arrow_tables", no_parse)
    monkeypatch.setattr(text_plugin, "iter_records", no_parse)
    assert _counted(path, {}, {}) == expected


@pytest.mark.parametrize(
    "text",
    [
        b'1,"a\nb"\n2,c\n',  # a quoted line break
        b"1,2\n#c\n3\n",  # a comment line
        b"1,2\r3,4\r",  # CR-only line ends
        b"1,\xff\n2\n",  # invalid UTF-8
        b"\xef\xbb\xbf1\n2\n",  # a byte-order mark
    ],
)
def test_special_files_are_parsed(tmp_path: Path, text: bytes) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(text)
    expected = _reference(path, {}, {}, python=False)
    got: int | UserError
    try:
        got = _counted(path, {}, {})
    except UserError as exc:
        got = exc
    if expected is None:
        assert isinstance(got, UserError)
    else:
        assert got == expected


def test_header_and_skip_first_line_are_not_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(text_plugin, "arrow_tables", None)  # counted, never parsed
    path = tmp_path / "f.csvh"
    path.write_bytes(b'"a","b"\n1,2\n\n3,4\n')  # a quoted header is fine
    assert _counted(path, {"extract_header": True}, {}) == 2
    assert _counted(path, {"skip_first_line": True}, {}) == 2
    path.write_bytes(b"a,b")
    assert _counted(path, {"extract_header": True}, {}) == 0


def test_header_fill_columns_keep_their_rows(tmp_path: Path) -> None:
    """A header file lacking a table column the query names delivers "" rows for it."""
    path = tmp_path / "f.csvh"
    path.write_bytes(b"a,b\n1,2\n3,4\n")
    cfg = FormatConfig("text", "text", (), {"extract_header": True})
    options = {"__table_schema__": "`a` VARCHAR NOT NULL, `z` VARCHAR NOT NULL"}
    batches = list(
        text_plugin.TextFormat().read_arrow(FileSplit(str(path)), cfg, options, ["z"], 4096)
    )
    assert [r for b in batches for r in b.to_pylist()] == [{"z": ""}, {"z": ""}]


def test_compressed_file_is_counted(tmp_path: Path) -> None:
    path = tmp_path / "f.csv.gz"
    path.write_bytes(gzip.compress(b"1,2\n3,4\n\n5\n" * 1000))
    assert _counted(path, {}, {}) == 3000


def test_truncated_compressed_file_reports_it(tmp_path: Path) -> None:
    path = tmp_path / "f.csv.gz"
    path.write_bytes(gzip.compress(b"1,2\n" * 10000)[:-20])
    with pytest.raises(UserError, match="Truncated compressed file"):
        _counted(path, {}, {})


@pytest.mark.parametrize("config", [{}, {"extract_header": True}, {"skip_first_line": True}])
def test_byte_range_splits_count_every_row_once(tmp_path: Path, config: dict[str, Any]) -> None:
    path = tmp_path / "f.csv"
    lines = [f"{i},v{i}" + ("\r\n" if i % 3 else "\n") for i in range(2000)]
    data = "".join(lines).encode()
    path.write_bytes(data)
    cfg = FormatConfig("text", "text", (), config)
    plugin = text_plugin.TextFormat()
    total = 0
    step = 997
    for start in range(0, len(data), step):
        split = FileSplit(str(path), len(data), start=start, length=min(step, len(data) - start))
        total += sum(b.num_rows for b in plugin.read_arrow(split, cfg, {}, [], 4096))
    whole = read_file(path, "text", config, PYTHON)
    assert total == sum(b.num_rows for b in whole)


def test_count_with_a_limit_stops_early(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a pushed LIMIT, rows arrive per block: a late quote does not cost a re-read of the
    rows already delivered, and the count stays exact across the hand-over to the parser."""
    path = tmp_path / "f.csv"
    body = b"1,2\n" * 50_000 + b'3,"x\ny"\n' + b"4\n" * 10
    path.write_bytes(body)
    cfg = FormatConfig("text", "text", (), {})
    reader = text_plugin.TextFormat().read_arrow(
        FileSplit(str(path)), cfg, {"__limit__": 10}, [], 4096
    )
    first = next(reader)
    assert 0 < first.num_rows <= 65536  # from the first small block, not the whole file
    rest = sum(b.num_rows for b in reader)
    assert first.num_rows + rest == 50_011


def test_limit_reads_small_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A small LIMIT parses small blocks, with the same rows as a full read."""
    path = tmp_path / "f.csv"
    path.write_bytes(b"".join(f"{i},{'v' * 40}\n".encode() for i in range(100_000)))
    sizes: list[int] = []

    def spy(real: Any) -> Any:
        def spied(*args: Any, **kwargs: Any) -> Any:
            sizes.append(args[5] if len(args) > 5 else kwargs.get("block_size", 0))
            return real(*args, **kwargs)

        return spied

    # whichever tokenizer reads it (both take the block size sixth)
    monkeypatch.setattr(text_plugin, "arrow_tables", spy(arrow_reader.arrow_tables))
    monkeypatch.setattr(text_plugin, "native_batches", spy(text_plugin.native_batches))
    cfg = FormatConfig("text", "text", (), {})
    reader = text_plugin.TextFormat().read_arrow(
        FileSplit(str(path)), cfg, {"__limit__": 10}, None, 10
    )
    first = next(reader)
    reader.close()
    assert sizes and sizes[0] <= 1 << 16
    # one small block's rows (the scan cuts them to the LIMIT), not the file's 100 000
    assert first.num_rows < (1 << 16) // 40
    assert first.slice(0, 10).to_pylist() == [{"columns": [str(i), "v" * 40]} for i in range(10)]
