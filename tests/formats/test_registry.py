"""Format registry: built-ins, entry-point plugins, duplicates; compressed inputs by suffix."""

from __future__ import annotations

import bz2
import gzip
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import zstandard

from auger.config import FormatConfig
from auger.errors import ErrorKind, UserError
from auger.formats import (
    DuplicateFormatError,
    FormatPlugin,
    get_format,
    known_formats,
    register_format,
    registry,
    unregister_format,
)
from auger.formats.base import open_input
from auger.scan.run import run_scan
from auger.scan.spec import ColumnSource, FileSplit, ScanSpec
from auger.types import ColumnMetadata, MinorType, TupleSchema


class LinesFormat(FormatPlugin):
    """A toy plugin: every line of a file is one row of column ``line``."""

    type_name = "lines"
    extensions = ("txt",)

    def discover_schema(
        self, files: Sequence[str], config: FormatConfig, options: Mapping[str, Any]
    ) -> TupleSchema:
        return TupleSchema([ColumnMetadata("line", MinorType.VARCHAR)])

    def read_arrow(
        self,
        split: FileSplit,
        config: FormatConfig,
        options: Mapping[str, Any],
        columns: Sequence[str] | None,
        batch_rows: int,
    ) -> Iterator[pa.RecordBatch]:
        with open_input(split.path) as fh:
            lines = fh.read().decode().splitlines()
        yield pa.RecordBatch.from_pydict({"line": lines})


class FakeEntryPoint:
    def __init__(self, name: str, target: Any) -> None:
        self.name = name
        self._target = target

    def load(self) -> Any:
        return self._target


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(registry, "_registered", {})
    monkeypatch.setattr(registry, "_instances", {})
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    monkeypatch.setattr(registry, "_from_entry_points", set())
    monkeypatch.setattr(registry, "_shipped", {})
    yield


def test_builtins_are_known(fresh_registry: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "entry_points", lambda group: [])
    assert {"text", "json", "parquet"} <= set(known_formats())
    assert get_format("text").type_name == "text"
    assert get_format("text") is get_format("text")


def test_entry_point_plugin_is_loaded_and_scans(
    fresh_registry: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[str] = []

    def fake_entry_points(group: str) -> list[FakeEntryPoint]:
        calls.append(group)
        return [FakeEntryPoint("lines", LinesFormat)]

    monkeypatch.setattr(registry, "entry_points", fake_entry_points)
    assert "lines" in known_formats()
    assert calls == ["auger.formats"]
    assert isinstance(get_format("lines"), LinesFormat)
    path = tmp_path / "a.txt"
    path.write_text("one\ntwo\n")
    spec = ScanSpec(
        format_name="lines",
        format_type="lines",
        format_options={},
        selection_root=str(tmp_path),
        files=(FileSplit(str(path)),),
        output_schema="`line` VARCHAR, `filename` VARCHAR",
        sources={"line": ColumnSource.TABLE, "filename": ColumnSource.FILENAME},
    )
    got = [r for b in run_scan(spec) for r in b.to_pylist()]
    assert got == [{"line": "one", "filename": "a.txt"}, {"line": "two", "filename": "a.txt"}]


def test_duplicate_registration_is_an_error(fresh_registry: None) -> None:
    register_format("lines", LinesFormat)
    with pytest.raises(DuplicateFormatError, match=r"\[lines\] is already registered"):
        register_format("lines", LinesFormat)
    with pytest.raises(ValueError, match=r"\[json\] is already registered"):
        register_format("json", LinesFormat)
    unregister_format("lines")
    register_format("lines", LinesFormat())


def test_a_name_registered_in_code_after_its_entry_point_is_shipped(
    fresh_registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers find an entry point themselves, so it is not shipped; a plugin registered in
    code under the name once the entry point's is unregistered is the driver's own, and is."""
    monkeypatch.setattr(
        registry, "entry_points", lambda group: [FakeEntryPoint("lines", LinesFormat)]
    )
    assert "lines" in known_formats()
    assert registry.shipped_plugin("lines") == ""
    unregister_format("lines")
    register_format("lines", LinesFormat)
    assert registry.shipped_plugin("lines") != ""


def test_entry_point_shadowing_a_builtin_is_an_error(
    fresh_registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        registry, "entry_points", lambda group: [FakeEntryPoint("text", LinesFormat)]
    )
    with pytest.raises(DuplicateFormatError):
        known_formats()


def test_not_a_plugin_is_refused(fresh_registry: None) -> None:
    with pytest.raises(TypeError):
        register_format("bad", object)  # type: ignore[arg-type]


def test_unknown_format_is_a_validation_error(
    fresh_registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry, "entry_points", lambda group: [])
    with pytest.raises(UserError, match=r"Unknown format type \[nope\]") as info:
        get_format("nope")
    assert info.value.kind is ErrorKind.VALIDATION


@pytest.mark.parametrize(
    ("suffix", "pack"),
    [
        (".gz", gzip.compress),
        (".bz2", bz2.compress),
        (".zst", lambda b: zstandard.ZstdCompressor().compress(b)),
        ("", lambda b: b),
    ],
)
def test_open_input_decompresses_by_suffix(tmp_path: Path, suffix: str, pack: Any) -> None:
    path = tmp_path / f"data.csv{suffix}"
    path.write_bytes(pack(b"hello\nworld\n"))
    with open_input(str(path)) as fh:
        assert fh.read() == b"hello\nworld\n"
