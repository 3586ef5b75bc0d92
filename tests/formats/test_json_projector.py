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
