"""The JSON member projector (``auger._jsonscan``): narrow reads cut objects down before pyarrow
parses them, with the answers of the Python reader on any input.

First: an ordinary narrow read goes through the projector without falling back. Then a
property test compares the default path with the Python reader on arbitrary lines, well
formed or not (escapes, nesting, members cased otherwise, broken tokens, truncation).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auger.config import FormatConfig
from auger.formats.json import JsonFormat
from auger.formats.json import plugin as json_plugin
from auger.formats.json import projector as projector_module
from auger.formats.json.projector import projector_available

from .helpers import read_file, rows_of

CFG = FormatConfig("json", "json", ("json",), {})
PYTHON = {"auger.scan.json_force_python": True}


def _read(path: Path, mode: dict[str, Any], columns: list[str]) -> Any:
    try:
        opts = dict(mode)
        opts["__table_schema__"] = JsonFormat().discover_schema([str(path)], CFG, opts).to_text()
        return rows_of(read_file(path, "json", {}, opts, columns=columns))
    except Exception as exc:
        return (type(exc).__name__, str(exc))


def test_the_projector_is_built() -> None:
    assert projector_available()


def test_a_narrow_read_is_cut_down_without_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[Any] = []
    real = json_plugin.ProjectedStream

    def spy(*args: Any, **kwargs: Any) -> Any:
        made.append(real(*args, **kwargs))
        return made[-1]

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("fell back to the Python reader")

    monkeypatch.setattr(json_plugin, "ProjectedStream", spy)
    monkeypatch.setattr(json_plugin.JsonFormat, "_python_batches", refuse)
    lines = [
        {"id": i, "name": f'n"{i}}}', "t": [i, i], "n": {"x": "]", "y": [1]}, "m": {"k": i}}
        for i in range(3000)
    ]
    path = tmp_path / "f.json"
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n\n")
    got = _read(path, {}, ["name", "m"])
    assert got == [{"name": r["name"], "m": r["m"]} for r in lines]
    assert made and made[0].fallback is None


SCALARS = st.one_of(
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(alphabet='ab"\\{}[],:\n é', max_size=5),
    st.booleans(),
    st.none(),
)
VALUES = st.recursive(
    SCALARS,
    # (maps of no members are left out: a STRUCT<> column loses its rows on both paths)
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("xyz"), inner, min_size=1)
    ),
    max_leaves=6,
)
KEYS = st.sampled_from(["a", "b", "c", "A", "d"])
OBJECTS = st.dictionaries(KEYS, VALUES, max_size=4)
BREAKS = st.sampled_from(["", "", "", "tru", "1.2.", '"open', "}", "{", "NaN", ",", " "])


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    objects=st.lists(st.tuples(OBJECTS, BREAKS, st.booleans()), min_size=1, max_size=6),
    wanted=st.sampled_from([["a"], ["b", "c"], ["d"], ["a", "c"]]),
    block=st.sampled_from([3, 16, 1 << 20]),
)
def test_projector_agrees_with_the_python_reader(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    objects: list[tuple[dict[str, Any], str, bool]],
    wanted: list[str],
    block: int,
) -> None:
    lines = []
    for obj, broken, blank in objects:
        text = json.dumps(obj)
        if broken:  # put a broken token (or a stray character) in place of a value or at the end
            text = text.replace("null", broken, 1) if "null" in text else text + broken
        lines.append(text + ("\n" if blank else ""))
    path = tmp_path / "f.json"
    path.write_text("\n".join(lines))
    # always cut (the reader does only when the first object is wider than the projection)
    monkeypatch.setattr(json_plugin, "_members_of_first", lambda head: 1000)
    monkeypatch.setattr(json_plugin, "_BLOCK", block)
    monkeypatch.setattr("auger.formats.json.projector._BLOCK", block)
    # repr: NaN equals itself there
    assert repr(_read(path, {}, wanted)) == repr(_read(path, PYTHON, wanted))


# ---------------------------------------------------------------- the fast path against the walk
#
# project() runs the structural fast path (stage 1 bit masks over 64-byte chunks, stage 2
# over the structural positions) and hands what it is unsure of to the byte-at-a-time walk;
# project_reference() is that walk alone. Both must answer alike on any bytes, for every
# stage 1 variant the CPU runs.

_jsonscan: Any = projector_module._jsonscan
VARIANTS = _jsonscan.stage1_variants() if _jsonscan is not None else []
needs_projector = pytest.mark.skipif(_jsonscan is None, reason="built without the projector")

# string pieces: escapes of every kind, backslash runs long enough to cross 64-byte chunks
PIECES = st.sampled_from(
    ["a", "é", " ", "}", ",", ":", "[", "\\\\", '\\"', "\\n", "\\u00e9", "\\/", "x" * 70]
) | st.integers(1, 70).map(lambda k: "\\\\" * k)
STRINGS = st.lists(PIECES, max_size=6).map(lambda parts: '"' + "".join(parts) + '"')
TOKENS = st.sampled_from(
    [
        *["0", "-1.5e+3", "1E5", ".5", "+1", "true", "false", "null", "NaN", "Infinity"],
        *["-Infinity", "tru", "truex", "1x", "1true", "e1", "nul", "Infinityy", "1-2"],
    ]
)
RAW_VALUES = st.recursive(
    TOKENS | STRINGS,
    lambda inner: (
        st.lists(inner, max_size=4).map(lambda xs: "[" + ",".join(xs) + "]")
        | st.lists(st.tuples(STRINGS, inner), max_size=3).map(
            lambda ms: "{" + ",".join(f"{k}:{v}" for k, v in ms) + "}"
        )
    ),
    max_leaves=8,
)
SPACE = st.sampled_from(["", "", " ", "\t", "\r", "  "])
NAMES = st.sampled_from(
    ["a", "b", "ab", "c", "A", "a\\u0062", "b\\\\", "é", "", "name_over_8", "NAME_over_8"]
)
MEMBERS = st.tuples(SPACE, NAMES, SPACE, SPACE, RAW_VALUES, SPACE).map(
    lambda m: f'{m[0]}"{m[1]}"{m[2]}:{m[3]}{m[4]}{m[5]}'
)
LINES = st.lists(MEMBERS, max_size=5).map(lambda ms: "{" + ",".join(ms) + "}")
ENDS = st.sampled_from(["\n", "\n", "\r\n", "\n\n", " \n", "", "x\n", ",\n", "}\n", "\n \t"])
KEYSETS = st.sampled_from(
    [(), (b"a",), (b"b", b"ab"), (b"c", b"a", b"zz"), (b"A",), (b"", b"name_over_8", b"\xc3\xa9")]
)


def _same(data: bytes, final: bool, keys: tuple[bytes, ...]) -> None:
    want = _jsonscan.project_reference(data, final, keys)
    for variant in VARIANTS:
        _jsonscan.use_stage1(variant)
        got = _jsonscan.project(data, final, keys)
        # the reason's wording may differ (the walk's, from the first problem it met)
        assert (bool(got[0]), *got[1:]) == (bool(want[0]), *want[1:]), (variant, data)
    _jsonscan.use_stage1(VARIANTS[-1])


@needs_projector
@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(st.tuples(SPACE, LINES, ENDS), min_size=1, max_size=8),
    keys=KEYSETS,
    cut=st.integers(0, 10**6),
    final=st.booleans(),
)
def test_fast_path_agrees_with_the_walk_on_ndjson(
    lines: list[tuple[str, str, str]], keys: tuple[bytes, ...], cut: int, final: bool
) -> None:
    data = "".join(a + b + c for a, b, c in lines).encode()
    _same(data, final, keys)
    _same(data[: cut % (len(data) + 1)], final, keys)  # truncated anywhere


@needs_projector
@settings(max_examples=300, deadline=None)
@given(
    data=st.binary(max_size=300)
    | st.lists(st.sampled_from(list(b'{}[]":,\\ \t\r\n0e-.tfnNIluasy\x00\xff')), max_size=300).map(
        bytes
    ),
    keys=KEYSETS,
    final=st.booleans(),
)
def test_fast_path_agrees_with_the_walk_on_any_bytes(
    data: bytes, keys: tuple[bytes, ...], final: bool
) -> None:
    _same(data, final, keys)
    _same(b'{"a": 1}\n' + data + b"\n", final, keys)


@needs_projector
def test_fast_path_agrees_at_every_truncation_and_block_size() -> None:
    line = (
        '{"a": "x\\\\\\"y", "b": [1, {"c": -2.5e3, "d": [true, false, null]}], '
        '"ab": "' + "\\\\" * 33 + '", "c": NaN, "n": -Infinity, "e": "é\\u00e9", "f": {}}'
    )
    data = ("\n".join([line, "  " + line, line + " \r"]) + "\n").encode()
    for keys in [(b"a",), (b"b", b"ab"), (b"f", b"c"), ()]:
        for end in range(len(data) + 1):
            _same(data[:end], False, keys)
    # the same bytes cut into blocks as the reader feeds them, tiny to whole
    for block in [1, 7, 63, 64, 65, 200, len(data)]:
        carry, got = b"", []
        for at in range(0, len(data) + block, block):
            piece = data[at : at + block]
            chunk = carry + piece
            reason, consumed, _, cut = _jsonscan.project(chunk, not piece, (b"b", b"c"))
            assert not reason
            got.append(cut)
            carry = chunk[consumed:]
        assert b"".join(got) == _jsonscan.project_reference(data, True, (b"b", b"c"))[3]


@needs_projector
def test_a_big_block_agrees_with_the_walk() -> None:
    line = '{"id": 1, "name": "x\\"y", "t": [1, 2.5], "m": {"k": null}, "z": true}\n'
    data = (line * 50000).encode()
    _same(data, False, (b"name", b"m"))
    assert _jsonscan.project(data, False, (b"id",))[2] == 50000


def test_a_boolean_in_a_later_block_of_a_double_column_is_1_or_0_on_both_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each line its own block: the second block's parse types y BOOLEAN, the schema DOUBLE
    monkeypatch.setattr(json_plugin, "_members_of_first", lambda head: 1000)
    monkeypatch.setattr(json_plugin, "_BLOCK", 3)
    monkeypatch.setattr("auger.formats.json.projector._BLOCK", 3)
    path = tmp_path / "f.json"
    path.write_text('{"a": {"x": 0, "y": 0.5}, "n": 2.5}\n{"a": {"y": true, "x": 1}, "n": false}\n')
    want = [{"a": {"x": 0, "y": 0.5}, "n": 2.5}, {"a": {"x": 1, "y": 1.0}, "n": 0.0}]
    assert _read(path, {}, ["a", "n"]) == want
    assert _read(path, PYTHON, ["a", "n"]) == want
