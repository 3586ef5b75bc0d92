"""JSON scans with a pushed-down LIMIT read little, and give the same rows as a full read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.conflicts import check_read
from auger.formats.json import plugin as json_plugin
from auger.formats.json.infer import SchemaBuilder
from auger.formats.json.stream import JsonStream
from auger.scan.run import run_scan
from auger.scan.spec import ColumnSource, FileSplit, ScanSpec

from .helpers import read_file, rows_of


def ndjson(path: Path, n: int, start: int = 0, pad: int = 40) -> Path:
    """``n`` records ``{"a": i, "s": "..."}`` of about ``pad + 20`` bytes each."""
    path.write_text("".join(f'{{"a": {i}, "s": "{"x" * pad}"}}\n' for i in range(start, n)))
    return path


def spec(files: list[Path], limit: int | None, options: dict[str, Any]) -> ScanSpec:
    return ScanSpec(
        format_name="json",
        format_type="json",
        format_options={},
        selection_root=str(files[0].parent),
        files=tuple(FileSplit(str(p), p.stat().st_size) for p in files),
        output_schema="`a` BIGINT, `s` VARCHAR",
        sources={"a": ColumnSource.TABLE, "s": ColumnSource.TABLE},
        options=options,
        limit=limit,
    )


def test_block_size_follows_the_limit() -> None:
    head = b'{"a": 1}\n' * 100  # 9 bytes a record
    assert json_plugin._block_for(None, head) == json_plugin._BLOCK
    assert json_plugin._block_for(10, head) == json_plugin._MIN_BLOCK
    assert json_plugin._block_for(0, head) == json_plugin._MIN_BLOCK
    # 10 000 records of 9 bytes: twice that, rounded up to a power of two
    assert json_plugin._block_for(10_000, head) == 256 << 10
    assert json_plugin._block_for(10**9, head) == json_plugin._BLOCK
    # one long first line (no newline in the head): the head's length stands for a record
    assert json_plugin._block_for(10, b"{" + b" " * 70_000) >= 1 << 20


def test_limit_makes_the_first_batch_small(tmp_path: Path) -> None:
    path = ndjson(tmp_path / "f.json", 100_000)  # ~6 MB: more than one full-scan block
    opts = {"__table_schema__": "a BIGINT, s VARCHAR", "__limit__": 10}
    first = next(iter(json_plugin.JsonFormat()._arrow_batches(str(path), _schema(), 64 << 10)))
    assert 0 < first.num_rows < 2000
    got = read_file(path, "json", {}, opts)
    assert got[0].num_rows < 2000  # from a 64 KiB block, not a 4 MiB one
    assert [r["a"] for r in rows_of(got)] == list(range(100_000))  # and still reads on


def _schema() -> pa.Schema:
    return pa.schema([pa.field("a", pa.int64()), pa.field("s", pa.string())])


@pytest.mark.parametrize("force_python", [False, True])
def test_limited_scan_equals_the_head_of_a_full_scan(tmp_path: Path, force_python: bool) -> None:
    a = ndjson(tmp_path / "a.json", 30)
    b = ndjson(tmp_path / "b.json", 3000, start=30)
    opts = {"auger.scan.json_force_python": force_python}
    full = [r for batch in run_scan(spec([a, b], None, opts)) for r in batch.to_pylist()]
    for limit in (1, 10, 30, 31, 1000):
        got = [r for batch in run_scan(spec([a, b], limit, opts)) for r in batch.to_pylist()]
        assert got == full[:limit], limit


def test_python_path_flushes_at_the_limit(tmp_path: Path) -> None:
    path = ndjson(tmp_path / "f.json", 3000)
    opts = {
        "__table_schema__": "a BIGINT, s VARCHAR",
        "__limit__": 7,
        "auger.scan.json_force_python": True,
    }
    batches = json_plugin.JsonFormat().read_arrow(
        FileSplit(str(path)), FormatConfig("json", "json", (), {}), opts, None, 4096
    )
    assert next(iter(batches)).num_rows == 7


def test_record_longer_than_the_small_block_falls_back(tmp_path: Path) -> None:
    rows = [{"a": 1, "s": "x"}, {"a": 2, "s": "y" * 200_000}, {"a": 3, "s": "z"}]
    path = tmp_path / "f.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = [r for batch in run_scan(spec([path], 3, {})) for r in batch.to_pylist()]
    assert got == rows


def test_lowercase_column_with_a_capitalised_key_later(tmp_path: Path) -> None:
    """Keys in another case than the table's are the same column, even far into the file
    (where the Arrow reader's cheap check for capitals must notice them)."""
    body = "".join(f'{{"name": "n{i}"}}\n' for i in range(20_000)) + '{"NAME": "last"}\n'
    path = tmp_path / "f.json"
    path.write_text(body)
    batches = read_file(path, "json", {}, {"__table_schema__": "name VARCHAR"})
    got = [r["name"] for r in rows_of(batches)]
    assert len(got) == 20_001
    assert got[-1] == "last"


# ------------------------------------------------------------------ schema discovery sample
CFG = FormatConfig("json", "json", ("json",), {})


def discover(path: Path, options: dict[str, Any] | None = None) -> str:
    return json_plugin.JsonFormat().discover_schema([str(path)], CFG, options or {}).to_text()


@pytest.mark.parametrize(
    "text",
    [
        '\ufeff{"a": 1}\n\n  {"b": "x"}\r\n{"a": 2.5}',  # BOM, blank lines, CRLF, no last newline
        '[{"a": 1},\n{"b": "x"}]\n',  # an array
        '{"a": 1}{"b": "x"}\n',  # two objects on a line
        '{"a": 1},{"b": "x"}\n',
        '{"a": 1}\n{"b":\n "x"}\n',  # an object over two lines
        '{"a": [{"c": 1}\n{"d": 2}]}\n',  # not JSON (no comma), though joining lines would be
    ],
)
def test_quick_sample_agrees_with_the_record_stream(tmp_path: Path, text: str) -> None:
    path = tmp_path / "f.json"
    path.write_text(text, encoding="utf-8")
    try:
        quick: str | UserError = discover(path)
    except UserError as exc:
        quick = exc
    with path.open("rb") as fh:
        stream = JsonStream(fh, str(path))
        try:
            records = list(stream)
            builder = SchemaBuilder(False, False)
            for line, rec in records:
                builder.add(rec, str(path), line)
            slow: str | UserError = builder.schema().to_text()
        except UserError as exc:
            slow = exc
    if isinstance(slow, UserError):
        assert isinstance(quick, UserError)
        assert quick.context == slow.context
    else:
        assert quick == slow


def test_quick_sample_is_only_for_one_object_a_line(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text('{"a": 1}\n\n{"a": 2}\n')
    got = json_plugin._sample_lines(str(path), 10, json.JSONDecoder())
    assert got == ([{"a": 1}, {"a": 2}], [1, 3], b'{"a": 1}\n{"a": 2}')
    assert json_plugin._sample_lines(str(path), 1, json.JSONDecoder()) == (
        [{"a": 1}],
        [1],
        b'{"a": 1}',
    )
    path.write_text('{"a": [{"c": 1}\n{"d": 2}]}\n')
    assert json_plugin._sample_lines(str(path), 10, json.JSONDecoder()) is None


def test_conflict_in_the_sample_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text('{"a": 1}\n\n\n{"a": {"m": 1}}\n')
    schema = json_plugin.JsonFormat().discover_schema([str(path)], CFG, {})
    with pytest.raises(UserError) as info:
        check_read(schema.column("a"))
    assert "Line: 4" in info.value.context


def test_all_text_sample_keeps_number_text(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text('{"a": 1.50, "b": true}\n')
    schema = discover(path, {"store.json.all_text_mode": True})
    assert schema == "`a` VARCHAR, `b` VARCHAR"


def test_sample_rows_option_limits_the_sample(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text('{"a": 1}\n{"b": 2}\n{"c": 3}\n')
    assert discover(path, {"auger.scan.json_sample_rows": 2}) == "`a` BIGINT, `b` BIGINT"


@pytest.mark.parametrize("first", [0, 2500])
def test_a_record_longer_than_a_block_is_read_in_larger_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: int
) -> None:
    """A value of megabytes among small records keeps the file on pyarrow's path: the parse
    is tried again in larger blocks, and rows already sent are not sent twice."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("fell back to the Python reader")

    monkeypatch.setattr(json_plugin, "_BLOCK", 64 << 10)
    monkeypatch.setattr(json_plugin, "_MAX_BLOCK", 1 << 20)
    monkeypatch.setattr(json_plugin.JsonFormat, "_python_batches", refuse)
    rows = [{"a": i, "s": "y" * 300_000 if i == first else f"s{i}"} for i in range(5000)]
    path = tmp_path / "f.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = [r for batch in run_scan(spec([path], None, {})) for r in batch.to_pylist()]
    assert got == rows


def test_a_record_longer_than_the_largest_block_goes_to_the_python_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(json_plugin, "_BLOCK", 64 << 10)
    monkeypatch.setattr(json_plugin, "_MAX_BLOCK", 256 << 10)
    python_reads: list[int] = []
    real = json_plugin.JsonFormat._python_batches

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        python_reads.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(json_plugin.JsonFormat, "_python_batches", spy)
    rows = [{"a": i, "s": "y" * 600_000 if i == 3000 else f"s{i}"} for i in range(5000)]
    path = tmp_path / "f.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = [r for batch in run_scan(spec([path], None, {})) for r in batch.to_pylist()]
    assert got == rows
    assert python_reads == [1]
