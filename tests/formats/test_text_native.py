"""auger's own text tokenizer (``auger._textscan``) against the Python parser, Drill's rules.

The tokenizer hands anything unusual to the Python parser, so agreeing with it could mean
never reading anything itself: the first tests check that ordinary files (quotes, line
breaks in quotes, CRLF, comments, ragged rows, a byte order mark, projections) are read
without any fallback; the property test then compares every shape on arbitrary input, cut
into tiny blocks so that records straddle every block boundary.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auger.formats.text import plugin as text_plugin
from auger.formats.text.native_reader import native_available

from .helpers import read_file, rows_of

NATIVE = {"auger.scan.text_reader": "auto"}
PYTHON = {"auger.scan.text_force_python": True}


def _read(
    path: Path, mode: dict[str, Any], config: dict[str, Any], shape: tuple[str, Any]
) -> list[dict[str, Any]]:
    kind, arg = shape
    options: dict[str, Any] = dict(mode)
    columns: list[str] | None = None
    if kind == "named":  # a header file, some of its columns
        columns = arg
    elif kind == "indexes":  # a headerless file, columns[n] push-down
        options["__projection__"] = [f"columns[{i}]" for i in arg]
        columns = ["columns"]
    return rows_of(read_file(path, "text", config, options, columns=columns))


def test_the_tokenizer_is_built() -> None:
    """CI builds the C extension; without it the text paths below would be pyarrow's."""
    assert native_available()


@pytest.fixture
def no_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("fell back to the Python parser")

    monkeypatch.setattr(text_plugin.TextFormat, "_python_batches", refuse)
    monkeypatch.setattr(text_plugin, "arrow_tables", refuse)


ORDINARY = (
    b"\xef\xbb\xbfname,note,n\r\n"
    b'alpha,"with, comma",1\r\n'
    b'"b""q""",plain,2\n'
    b"# a comment line\n"
    b"\n"
    b'gamma,"two\nlines",3\n'
    b"short\n"
    b"long,x,4,extra,more\n"
    b'"",,5\n'
    b"caf\xc3\xa9,\xe2\x82\xac,6"
)


def test_ordinary_header_file_is_read_without_fallback(tmp_path: Path, no_fallback: None) -> None:
    path = tmp_path / "f.csvh"
    path.write_bytes(ORDINARY)
    got = _read(path, NATIVE, {"extract_header": True}, ("named", None))
    assert got == [
        {"name": "alpha", "note": "with, comma", "n": "1"},
        {"name": 'b"q"', "note": "plain", "n": "2"},
        {"name": "gamma", "note": "two\nlines", "n": "3"},
        {"name": "short", "note": "", "n": ""},
        {"name": "long", "note": "x", "n": "4"},
        {"name": "", "note": "", "n": "5"},
        {"name": "café", "note": "€", "n": "6"},
    ]


def test_ordinary_headerless_file_is_read_without_fallback(
    tmp_path: Path, no_fallback: None
) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(ORDINARY)
    rows = [r["columns"] for r in _read(path, NATIVE, {}, ("all", None))]
    assert rows[0] == ["name", "note", "n"]
    assert rows[3] == ["gamma", "two\nlines", "3"]
    assert rows[4] == ["short"]
    assert rows[5] == ["long", "x", "4", "extra", "more"]
    pushed = [r["columns"] for r in _read(path, NATIVE, {}, ("indexes", [2]))]
    assert pushed[4] == [""]  # positions not asked for are "", up to the row's length
    assert pushed[5] == ["", "", "4"]


@pytest.mark.parametrize(
    "text",
    [
        b'a,b"c\n',  # a quote inside an unquoted field
        b'"a"b,c\n',  # text after a closing quote
        b'a,"open\n',  # a quote left open
        b"a\rb\n",  # a lone carriage return
        b"a,\xff\n",  # invalid UTF-8
    ],
)
def test_messy_input_is_left_to_the_python_parser(tmp_path: Path, text: bytes) -> None:
    """Whatever the tokenizer cannot read as Drill does, the Python parser reads or reports:
    the default path gives the Python parser's answer (rows or the same error)."""
    path = tmp_path / "f.csv"
    path.write_bytes(b"x,y\n" * 3 + text + b"z,w\n")

    def outcome(mode: dict[str, Any]) -> Any:
        try:
            return _read(path, mode, {}, ("all", None))
        except Exception as exc:
            return (type(exc).__name__, str(exc))

    assert outcome(NATIVE) == outcome(PYTHON)


FIELD = st.text(alphabet='ab,"#\n\r é\t|', max_size=6)
RECORDS = st.lists(st.lists(FIELD, min_size=1, max_size=5), max_size=8)
SHAPES = st.sampled_from(
    [
        ("all", None),
        ("indexes", [0]),
        ("indexes", [1, 3]),
        ("indexes", [4]),
        ("named", None),
        ("named", ["c1"]),
        ("named", ["c0", "c2"]),
    ]
)


def _render(records: list[list[str]], quote_all: bool, crlf: bool, delimiter: str) -> bytes:
    """Records as CSV, quoting fields that need it (or all), so most inputs are well formed;
    raw line breaks, quotes and comment characters in unquoted fields make the rest messy."""
    out = []
    for rec in records:
        fields = []
        for f in rec:
            if quote_all or (f and f[0] == '"') or delimiter in f:
                fields.append('"' + f.replace('"', '""') + '"')
            else:
                fields.append(f)
        out.append(delimiter.join(fields))
    end = "\r\n" if crlf else "\n"
    return end.join(out).encode()


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    records=RECORDS,
    quote_all=st.booleans(),
    crlf=st.booleans(),
    trailing=st.booleans(),
    shape=SHAPES,
    block=st.sampled_from([1, 2, 3, 7, 64]),
    skip_first=st.booleans(),
    delimiter=st.sampled_from([",", "\t", "|"]),
)
def test_tokenizer_agrees_with_the_python_parser(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    records: list[list[str]],
    quote_all: bool,
    crlf: bool,
    trailing: bool,
    shape: tuple[str, Any],
    block: int,
    skip_first: bool,
    delimiter: str,
) -> None:
    data = _render(records, quote_all, crlf, delimiter) + (b"\n" if trailing else b"")
    config: dict[str, Any] = {"delimiter": delimiter}
    if shape[0] == "named":
        data = delimiter.join(["c0", "c1", "c2"]).encode() + b"\n" + data
        config["extract_header"] = True
    else:
        config["skip_first_line"] = skip_first
    path = tmp_path / "f.csv"
    path.write_bytes(data)
    monkeypatch.setattr(text_plugin, "BLOCK_SIZE", block)

    def outcome(mode: dict[str, Any]) -> Any:
        try:
            return _read(path, mode, config, shape)
        except Exception as exc:
            return (type(exc).__name__, str(exc))

    assert outcome(NATIVE) == outcome(PYTHON)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.binary(max_size=300),
    bom=st.booleans(),
    block=st.integers(1, 40),
    room=st.integers(1, 16),
    cuts=st.lists(st.integers(0, 100), min_size=1, max_size=50),
)
def test_blocks_hand_every_byte_over_once_in_order(
    monkeypatch: pytest.MonkeyPatch,
    data: bytes,
    bom: bool,
    block: int,
    room: int,
    cuts: list[int],
) -> None:
    """The reader's blocks (read ahead in a thread into two buffers, the unparsed tail of one
    put in front of the next, in room grown when a tail is longer): whatever is parsed of each,
    the next starts with the rest and goes on with the file, the byte order mark left out."""
    import io

    from auger.formats.text import native_reader

    monkeypatch.setattr(native_reader, "_ROOM", room)
    raw = (b"\xef\xbb\xbf" if bom else b"") + data
    if block < 3:  # (a first block too short to hold the mark)
        data = raw
    blocks = native_reader._Blocks(io.BufferedReader(io.BytesIO(raw)), block)  # type: ignore[arg-type]
    done = 0  # bytes of data parsed
    try:
        for step in range(10_000):
            view, final = blocks.next()
            got = bytes(view)
            assert got == data[done : done + len(got)]
            view.release()
            if final:  # the input ended: the rest of it is all there
                assert done + len(got) == len(data)
                break
            n = min(len(got), cuts[step % len(cuts)])
            blocks.consumed(n)
            done += n
        else:
            pytest.fail("no end of input")
    finally:
        blocks.close()


@pytest.mark.parametrize("first", [1, 5, 64])
def test_blocks_start_small_and_grow_to_the_block(
    monkeypatch: pytest.MonkeyPatch, first: int
) -> None:
    """A buffer starts at what the first read needs (a file of a few bytes, one of thousands,
    costs no block of megabytes) and grows to the block once the input fills it; the bytes
    answered are the file's all the same."""
    import io

    from auger.formats.text import native_reader

    monkeypatch.setattr(native_reader, "_ROOM", 4)
    monkeypatch.setattr(native_reader, "_FIRST_READ", first)
    small = native_reader._Blocks(io.BufferedReader(io.BytesIO(b"a,b\n")), 1 << 20)  # type: ignore[arg-type]
    try:
        view, final = small.next()
        assert bytes(view) == b"a,b\n" and not final
        view.release()
        small.consumed(4)
        view, final = small.next()
        assert bytes(view) == b"" and final
        view.release()
        assert all(len(buf) <= 4 + max(first, 8) for buf in small._bufs)  # far from 1 MiB
    finally:
        small.close()
    data = bytes(range(256)) * 40  # 10 240 bytes: blocks of 1 000
    big = native_reader._Blocks(io.BufferedReader(io.BytesIO(data)), 1000)  # type: ignore[arg-type]
    seen = b""
    try:
        while True:
            view, final = big.next()
            seen += bytes(view)
            n = len(view)
            view.release()
            if final:
                break
            big.consumed(n)
    finally:
        big.close()
    assert seen == data
    assert max(len(buf) for buf in big._bufs) == 4 + 1000
