"""One behaviour suite over every format reader, run through the scan (``run_scan``).

Each case writes the same small table (ids 1..5 and names a..e) in its format; the tests then
plan scans by hand (as ``plan_file_scan`` does) and check what the scan delivers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.config import DEFAULT_FORMATS, FormatConfig
from auger.errors import ErrorKind, UserError
from auger.formats import get_format
from auger.scan.run import run_scan
from auger.scan.spec import ColumnSource, FileSplit, ScanSpec
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

IDS = [1, 2, 3, 4, 5]
NAMES = ["a", "b", "c", "d", "e"]


@dataclass(frozen=True)
class Case:
    fmt: str  # workspace format name (csv, csvh, json, parquet)
    suffix: str
    write: Callable[[Path, list[int], list[str]], None]
    column: str  # a table column to project
    values: Callable[[list[int], list[str]], list[Any]]  # expected values of that column
    bad: bytes  # a file that must fail with DATA_READ


def _csv(path: Path, ids: list[int], names: list[str]) -> None:
    path.write_text("".join(f"{i},{n}\n" for i, n in zip(ids, names, strict=True)))


def _csvh(path: Path, ids: list[int], names: list[str]) -> None:
    path.write_text("id,name\n" + "".join(f"{i},{n}\n" for i, n in zip(ids, names, strict=True)))


def _json(path: Path, ids: list[int], names: list[str]) -> None:
    path.write_text(
        "".join(json.dumps({"id": i, "name": n}) + "\n" for i, n in zip(ids, names, strict=True))
    )


def _parquet(path: Path, ids: list[int], names: list[str]) -> None:
    table = pa.table({"id": pa.array(ids, pa.int64()), "name": pa.array(names, pa.string())})
    pq.write_table(table, path)


CASES = [
    Case(
        "csv",
        "csv",
        _csv,
        "columns",
        lambda ids, names: [[str(i), n] for i, n in zip(ids, names, strict=True)],
        b'1,"open quote\n2,b\n',
    ),
    Case("csvh", "csvh", _csvh, "name", lambda ids, names: names, b"id,name\n1,\xff\xfe\n"),
    Case("json", "json", _json, "name", lambda ids, names: names, b'{"id": 1, "name": "a"}\n{"id"'),
    Case("parquet", "parquet", _parquet, "name", lambda ids, names: names, b"PAR1 not really PAR1"),
]


@pytest.fixture(params=CASES, ids=[c.fmt for c in CASES])
def case(request: pytest.FixtureRequest) -> Case:
    return request.param  # type: ignore[no-any-return]


def fmt_config(case: Case) -> FormatConfig:
    raw = dict(DEFAULT_FORMATS[case.fmt])
    ftype = raw.pop("type")
    exts = tuple(raw.pop("extensions"))
    return FormatConfig(case.fmt, ftype, exts, raw)


def plan(
    case: Case,
    root: Path,
    files: list[Path],
    select: list[str] | None,
    options: dict[str, Any] | None = None,
    limit: int | None = None,
) -> ScanSpec:
    """A scan spec as the planner builds it: ``select=None`` means ``SELECT *``."""
    cfg = fmt_config(case)
    table = get_format(cfg.type).discover_schema([str(f) for f in files], cfg, options or {})
    out = TupleSchema()
    sources: dict[str, str] = {}
    implicit = {
        "filename": ColumnSource.FILENAME,
        "fqn": ColumnSource.FQN,
        "suffix": ColumnSource.SUFFIX,
        "filepath": ColumnSource.FILEPATH,
    }
    names = [c.name for c in table] if select is None else select
    for name in names:
        col = table.column(name)
        if col is not None:
            out.add(col)
            sources[col.name] = ColumnSource.TABLE
        elif name.lower() in implicit:
            out.add(ColumnMetadata(name, MinorType.VARCHAR))
            sources[name] = implicit[name.lower()]
        elif name.startswith("dir"):
            out.add(ColumnMetadata(name, MinorType.VARCHAR))
            sources[name] = name
        else:
            out.add(ColumnMetadata(name, MinorType.INT, DataMode.OPTIONAL))
            sources[name] = ColumnSource.MISSING
    return ScanSpec(
        format_name=cfg.name,
        format_type=cfg.type,
        format_options=dict(cfg.options),
        selection_root=str(root),
        files=tuple(FileSplit(str(f)) for f in files),
        output_schema=out.to_text(),
        sources=sources,
        projection=("*",) if select is None else tuple(select),
        options=options or {},
        limit=limit,
    )


def scan(spec: ScanSpec, batch_rows: int = 4096) -> list[pa.RecordBatch]:
    return list(run_scan(spec, batch_rows=batch_rows))


def column(batches: list[pa.RecordBatch], name: str) -> list[Any]:
    return [v for b in batches for v in b.column(name).to_pylist()]


def one_file(case: Case, tmp_path: Path, ids: list[int] = IDS, names: list[str] = NAMES) -> Path:
    path = tmp_path / f"data.{case.suffix}"
    case.write(path, ids, names)
    return path


# --------------------------------------------------------------------------- the suite
def test_wildcard_reads_every_column(case: Case, tmp_path: Path) -> None:
    path = one_file(case, tmp_path)
    batches = scan(plan(case, tmp_path, [path], None))
    assert case.column in batches[0].schema.names
    assert column(batches, case.column) == case.values(IDS, NAMES)


def test_projection_of_one_column(case: Case, tmp_path: Path) -> None:
    path = one_file(case, tmp_path)
    batches = scan(plan(case, tmp_path, [path], [case.column]))
    assert batches[0].schema.names == [case.column]
    assert column(batches, case.column) == case.values(IDS, NAMES)


def test_implicit_columns(case: Case, tmp_path: Path) -> None:
    path = one_file(case, tmp_path)
    batches = scan(plan(case, tmp_path, [path], [case.column, "filename", "suffix", "fqn"]))
    assert batches[0].schema.names == [case.column, "filename", "suffix", "fqn"]
    assert set(column(batches, "filename")) == {path.name}
    assert set(column(batches, "suffix")) == {case.suffix}
    assert set(column(batches, "fqn")) == {str(path)}
    assert len(column(batches, case.column)) == len(IDS)


def test_only_implicit_columns_still_count_rows(case: Case, tmp_path: Path) -> None:
    path = one_file(case, tmp_path)
    batches = scan(plan(case, tmp_path, [path], ["filename"]))
    assert column(batches, "filename") == [path.name] * len(IDS)


def test_missing_column_is_null(case: Case, tmp_path: Path) -> None:
    path = one_file(case, tmp_path)
    batches = scan(plan(case, tmp_path, [path], [case.column, "nope"]))
    assert column(batches, "nope") == [None] * len(IDS)
    assert batches[0].schema.field("nope").type == pa.int32()


def test_batch_rows_bound_every_batch(case: Case, tmp_path: Path) -> None:
    ids = list(range(1, 23))
    names = [f"n{i}" for i in ids]
    path = one_file(case, tmp_path, ids, names)
    batches = scan(plan(case, tmp_path, [path], [case.column]), batch_rows=5)
    assert max(b.num_rows for b in batches) <= 5
    assert column(batches, case.column) == case.values(ids, names)


def test_limit_stops_early(case: Case, tmp_path: Path) -> None:
    path = one_file(case, tmp_path)
    batches = scan(plan(case, tmp_path, [path], [case.column], limit=3), batch_rows=2)
    assert column(batches, case.column) == case.values(IDS, NAMES)[:3]


def test_several_files_and_partitions(case: Case, tmp_path: Path) -> None:
    first = one_file(case, tmp_path, IDS[:2], NAMES[:2])
    (tmp_path / "nested").mkdir()
    second = tmp_path / "nested" / f"more.{case.suffix}"
    case.write(second, IDS[2:], NAMES[2:])
    batches = scan(plan(case, tmp_path, [first, second], [case.column, "dir0"]))
    assert column(batches, case.column) == case.values(IDS, NAMES)
    assert column(batches, "dir0") == [None, None, "nested", "nested", "nested"]


def test_empty_input(case: Case, tmp_path: Path) -> None:
    path = tmp_path / f"empty.{case.suffix}"
    if case.fmt == "parquet":
        _parquet(path, [], [])
    else:
        path.write_bytes(b"")
    assert scan(plan(case, tmp_path, [path], None)) == []


def test_bad_input_is_a_located_data_read_error(case: Case, tmp_path: Path) -> None:
    path = tmp_path / f"bad.{case.suffix}"
    path.write_bytes(case.bad)
    with pytest.raises(UserError) as info:
        scan(plan(case, tmp_path, [path], None))
    err = info.value
    assert err.kind is ErrorKind.DATA_READ
    assert f"File: {path}" in err.context
    if case.fmt != "parquet":
        assert any(c.startswith("Line: ") for c in err.context)


@pytest.mark.parametrize("fmt", ["json", "parquet"])
def test_nested_member_projection_through_the_scan(fmt: str, tmp_path: Path) -> None:
    """Readers narrow maps to the named members; the scan restores the table's map type."""
    docs = [{"m": {"a": 1, "b": {"c": "x", "d": 2}}}, {"m": {"a": 3, "b": {"c": "y", "d": 4}}}]
    path = tmp_path / f"n.{fmt}"
    if fmt == "json":
        path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    else:
        pq.write_table(pa.Table.from_pylist(docs), path)
    case = next(c for c in CASES if c.fmt == fmt)
    spec = plan(case, tmp_path, [path], ["m"])
    spec = ScanSpec(**{**spec.__dict__, "projection": ("m.b.c",)})
    batches = scan(spec)
    assert str(batches[0].schema.field("m").type) == (
        "struct<a: int64, b: struct<c: string, d: int64>>"
    )
    assert column(batches, "m") == [
        {"a": None, "b": {"c": "x", "d": None}},
        {"a": None, "b": {"c": "y", "d": None}},
    ]
