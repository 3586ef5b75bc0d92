"""``run_scan``: planned specs over every built-in format through the scan operator, checked
against the values the test files were written with (table, implicit, partition, ``key=value``
and missing columns; batch sizes; LIMIT; files that disagree on their columns)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from auger.config import DEFAULT_FORMATS, FormatConfig
from auger.errors import ErrorKind, UserError
from auger.formats import get_format
from auger.scan import run_scan
from auger.scan.spec import ColumnSource, FileSplit, ScanSpec
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

Writer = Callable[[Path, list[dict[str, Any]]], None]


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(",".join(str(v) for v in r.values()) + "\n" for r in rows))


def write_csvh(path: Path, rows: list[dict[str, Any]]) -> None:
    head = ",".join(rows[0]) + "\n" if rows else "id,name\n"
    path.write_text(head + "".join(",".join(str(v) for v in r.values()) + "\n" for r in rows))


def write_json(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    pq.write_table(pa.Table.from_pylist(rows), path)


FORMATS: dict[str, tuple[str, Writer]] = {
    "csv": ("csv", write_csv),
    "csvh": ("csvh", write_csvh),
    "json": ("json", write_json),
    "parquet": ("parquet", write_parquet),
}
IMPLICIT = {
    "filename": ColumnSource.FILENAME,
    "fqn": ColumnSource.FQN,
    "filepath": ColumnSource.FILEPATH,
    "suffix": ColumnSource.SUFFIX,
}


def plan(
    fmt: str,
    root: Path,
    files: list[Path],
    select: list[str] | None,
    limit: int | None = None,
) -> ScanSpec:
    """A spec as the planner builds one (``select=None``: ``SELECT *``)."""
    raw = dict(DEFAULT_FORMATS[fmt])
    ftype = raw.pop("type")
    raw.pop("extensions")
    cfg = FormatConfig(fmt, ftype, (), raw)
    table = get_format(ftype).discover_schema([str(f) for f in files], cfg, {})
    depth = max(len(f.relative_to(root).parts) - 1 for f in files)
    out = TupleSchema()
    sources: dict[str, str] = {}
    names = (
        [c.name for c in table] + [f"dir{i}" for i in range(depth)] if select is None else select
    )
    for name in names:
        col = table.column(name)
        if col is not None:
            out.add(col)
            sources[col.name] = ColumnSource.TABLE
        elif name.lower() in IMPLICIT or name.startswith("dir") or name.startswith("key:"):
            label = name[4:] if name.startswith("key:") else name
            out.add(ColumnMetadata(label, MinorType.VARCHAR))
            sources[label] = IMPLICIT.get(name.lower(), name)
        else:
            out.add(ColumnMetadata(name, MinorType.INT, DataMode.OPTIONAL))
            sources[name] = ColumnSource.MISSING
    return ScanSpec(
        format_name=fmt,
        format_type=ftype,
        format_options=raw,
        selection_root=str(root),
        files=tuple(FileSplit(str(f), f.stat().st_size, f.stat().st_mtime) for f in files),
        output_schema=out.to_text(),
        sources=sources,
        projection=("*",) if select is None else tuple(select),
        limit=limit,
        table="t",
    )


def table_of(batches: list[pa.RecordBatch], spec: ScanSpec) -> pa.Table:
    if not batches:
        return pa.Table.from_batches([], schema=pa.schema([]))
    for b in batches:
        assert b.schema == batches[0].schema
    return pa.Table.from_batches(batches)


def scan(spec: ScanSpec, batch_rows: int = 4096) -> tuple[pa.Table, list[int]]:
    batches = list(run_scan(spec, batch_rows=batch_rows))
    assert all(0 < b.num_rows <= batch_rows for b in batches)
    return table_of(batches, spec), [b.num_rows for b in batches]


ROWS = [{"id": i, "name": f"n{i}"} for i in range(1, 8)]


@pytest.fixture(params=list(FORMATS))
def fmt(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def layout(fmt: str, root: Path) -> list[Path]:
    """Three files: one in the root, one a level down, one in a ``year=2024`` directory."""
    suffix, write = FORMATS[fmt]
    (root / "x").mkdir()
    (root / "year=2024").mkdir()
    files = [root / f"a.{suffix}", root / "x" / f"b.{suffix}", root / "year=2024" / f"c.{suffix}"]
    for f, part in zip(files, (ROWS[:3], ROWS[3:5], ROWS[5:]), strict=True):
        write(f, part)
    return files


def col(fmt: str) -> str:
    return "columns" if fmt == "csv" else "name"


SELECTS: list[Callable[[str], list[str] | None]] = [
    lambda f: None,
    lambda f: [col(f)],
    lambda f: [col(f), "filename", "nope", "dir0", "suffix"],
    lambda f: ["fqn", "filepath", col(f)],
    lambda f: ["filename"],
    lambda f: ["dir0", "key:year", col(f)],
]


def written(fmt: str, root: Path, path: Path, row: dict[str, Any], name: str) -> Any:
    """What column ``name`` holds for ``row`` of the file at ``path``, as the format reads what
    :func:`layout` wrote: text formats give strings, JSON and Parquet the written types."""
    dirs = path.relative_to(root).parts[:-1]
    if name == "columns":
        return [str(v) for v in row.values()]
    if name in row:
        return str(row[name]) if fmt in ("csv", "csvh") else row[name]
    if name.startswith("dir"):
        level = int(name[3:])
        return dirs[level] if level < len(dirs) else None
    values = {
        "filename": path.name,
        "fqn": str(path),
        "filepath": str(path.parent),
        "suffix": path.suffix[1:],
        "year": next((d.split("=", 1)[1] for d in dirs if d.startswith("year=")), None),
        "nope": None,
    }
    return values[name]


def expected(fmt: str, root: Path, files: list[Path], names: list[str]) -> list[dict[str, Any]]:
    parts = (ROWS[:3], ROWS[3:5], ROWS[5:])
    return [
        {n: written(fmt, root, f, r, n) for n in names}
        for f, rows in zip(files, parts, strict=True)
        for r in rows
    ]


@pytest.mark.parametrize(
    "select", SELECTS, ids=["star", "one", "mixed", "paths", "implicit", "hive"]
)
@pytest.mark.parametrize(("limit", "batch_rows"), [(None, 4096), (None, 2), (4, 3), (1, 4096)])
def test_values_are_the_written_ones(
    fmt: str,
    tmp_path: Path,
    select: Callable[[str], list[str] | None],
    limit: int | None,
    batch_rows: int,
) -> None:
    files = layout(fmt, tmp_path)
    spec = plan(fmt, tmp_path, files, select(fmt), limit)
    out, sizes = scan(spec, batch_rows)
    names = spec.schema().names()
    assert out.schema.names == names
    if select(fmt) is None:
        table = ["columns"] if fmt == "csv" else ["id", "name"]
        assert names == [*table, "dir0"]
    want = expected(fmt, tmp_path, files, names)
    assert out.to_pylist() == want[: len(want) if limit is None else limit]
    if limit is None:
        # Each file's batches are cut at batch_rows: 3, 2 and 2 rows.
        assert sizes == [
            n
            for k in (3, 2, 2)
            for n in [batch_rows] * (k // batch_rows) + ([k % batch_rows] if k % batch_rows else [])
        ]


def test_schema_is_exactly_the_specs_all_nullable(fmt: str, tmp_path: Path) -> None:
    files = layout(fmt, tmp_path)
    spec = plan(fmt, tmp_path, files, None)
    batches = list(run_scan(spec))
    assert batches[0].schema.names == spec.schema().names()
    assert all(f.nullable for f in batches[0].schema)


def test_empty_projection_keeps_the_row_count(fmt: str, tmp_path: Path) -> None:
    """COUNT(*): rows come out with no columns."""
    files = layout(fmt, tmp_path)
    spec = plan(fmt, tmp_path, files, [])
    batches = list(run_scan(spec))
    assert sum(b.num_rows for b in batches) == len(ROWS)
    assert all(b.num_columns == 0 for b in batches)


def test_spec_travels_with_its_projection(fmt: str, tmp_path: Path) -> None:
    """Executors get the spec as JSON: an empty projection (COUNT(*), implicit columns only)
    must stay empty there, not become the wildcard that parses every field."""
    files = layout(fmt, tmp_path)
    for select in ([], ["filename"], ["id"], None):
        spec = plan(fmt, tmp_path, files, select)
        assert ScanSpec.from_json(spec.to_json()) == spec
    legacy = json.loads(plan(fmt, tmp_path, files, None).to_json())
    del legacy["projection"]
    assert ScanSpec.from_json(json.dumps(legacy)).projection == ("*",)


def test_files_with_different_columns(tmp_path: Path) -> None:
    """JSON files that disagree on columns: missing values and map members null, extra
    columns dropped; as in Drill's vectors, a record without an array has an empty one and a
    record without a map a map of nulls."""
    write_json(tmp_path / "a.json", [{"id": 1, "name": "x", "m": {"k": 1}}])
    write_json(tmp_path / "b.json", [{"id": 2, "extra": True, "m": {"k": 2, "j": "z"}}])
    write_json(tmp_path / "c.json", [{"l": [1, 2], "id": 3}])
    files = [tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"]
    full = {
        "id": [1, 2, 3],
        "name": ["x", None, None],
        "m": [{"k": 1, "j": None}, {"k": 2, "j": "z"}, {"k": None, "j": None}],
        "extra": [None, True, None],
        "l": [[], [], [1, 2]],
        "filename": ["a.json", "b.json", "c.json"],
    }
    for select in (None, ["id", "name", "m"], ["m", "l", "filename"]):
        out, _ = scan(plan("json", tmp_path, files, select))
        names = ["id", "name", "m", "extra", "l"] if select is None else select
        assert sorted(out.schema.names) == sorted(names)
        assert out.to_pydict() == {n: full[n] for n in out.schema.names}


def test_parquet_type_widening_is_conformed(tmp_path: Path) -> None:
    pq.write_table(pa.table({"v": pa.array([1], pa.int32())}), tmp_path / "a.parquet")
    pq.write_table(pa.table({"v": pa.array([2**40], pa.int64())}), tmp_path / "b.parquet")
    files = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    out, _ = scan(plan("parquet", tmp_path, files, None))
    assert out.schema.field("v").type == pa.int64()
    assert out.column("v").to_pylist() == [1, 2**40]


def test_empty_files_give_no_batches(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / f"e.{FORMATS[fmt][0]}"
    if fmt == "parquet":
        pq.write_table(pa.table({"id": pa.array([], pa.int64())}), path)
    else:
        path.write_text("")
    spec = plan(fmt, tmp_path, [path], None)
    assert list(run_scan(spec)) == []


def test_bad_file_is_a_located_data_read_error(tmp_path: Path) -> None:
    good = tmp_path / "a.json"
    write_json(good, ROWS[:2])
    bad = tmp_path / "b.json"
    spec = plan("json", tmp_path, [good], None)
    bad.write_text('{"id": 1, "name": "a"}\n{"id"')
    spec = spec.with_files((*spec.files, FileSplit(str(bad))))
    with pytest.raises(UserError) as info:
        list(run_scan(spec))
    assert info.value.kind is ErrorKind.DATA_READ
    assert f"File: {bad}" in info.value.context


def test_files_argument_overrides_the_specs(tmp_path: Path) -> None:
    files = layout("json", tmp_path)
    spec = plan("json", tmp_path, files, ["id", "dir0"])
    part = [spec.files[1]]
    assert table_of(list(run_scan(spec, part)), spec).to_pylist() == [
        {"id": 4, "dir0": "x"},
        {"id": 5, "dir0": "x"},
    ]


def test_wildcard_over_a_planned_schema_warns_about_new_columns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_parquet(tmp_path / "a.parquet", [{"id": 1}])
    spec = plan("parquet", tmp_path, [tmp_path / "a.parquet"], None)
    write_parquet(tmp_path / "b.parquet", [{"id": 2, "late": "x"}])
    spec = spec.with_files((*spec.files, FileSplit(str(tmp_path / "b.parquet"))))
    with caplog.at_level("WARNING", logger="auger.scan.lifecycle"):
        out = table_of(list(run_scan(spec)), spec)
    assert out.to_pylist() == [{"id": 1}, {"id": 2}]
    assert any("`late`" in r.getMessage() and "b.parquet" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("batch_rows", [4096, 2])
def test_a_row_count_column_stands_for_the_rows(fmt: str, tmp_path: Path, batch_rows: int) -> None:
    """A counting scan (``SELECT COUNT(*)``) sends one row per batch holding the batch's row
    count, beside the file's implicit columns."""
    files = layout(fmt, tmp_path)
    spec = plan(fmt, tmp_path, files, ["filename"])
    schema = spec.schema()
    schema.add(ColumnMetadata("__rows", MinorType.BIGINT, DataMode.OPTIONAL))
    spec = ScanSpec(
        **{
            **spec.__dict__,
            "output_schema": schema.to_text(),
            "sources": {**spec.sources, "__rows": ColumnSource.ROWS},
        }
    )
    out, sizes = scan(spec, batch_rows)
    assert all(n == 1 for n in sizes)
    per_file: dict[str, int] = {}
    for row in out.to_pylist():
        per_file[row["filename"]] = per_file.get(row["filename"], 0) + row["__rows"]
    assert per_file == {f.name: n for f, n in zip(files, (3, 2, 2), strict=True)}


def _buffer_sizes(arr: pa.Array) -> list[int]:
    """Bytes each buffer of ``arr`` (and of its children) holds for the array's own rows."""
    sizes: list[int] = []
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_binary(t):
        data = pc.sum(pc.binary_length(arr)).as_py() or 0
        sizes += [4 * (len(arr) + 1), data]
    elif pa.types.is_list(t):
        offsets = arr.offsets
        first, last = offsets[0].as_py(), offsets[-1].as_py()
        sizes += [4 * (len(arr) + 1), *_buffer_sizes(arr.values.slice(first, last - first))]
    elif pa.types.is_struct(t):
        for i in range(t.num_fields):
            sizes += _buffer_sizes(arr.field(i))
    else:
        sizes.append(arr.nbytes)
    return sizes


@pytest.mark.parametrize("fmt", ["json", "csvh", "parquet"])
def test_arrow_reader_batches_are_cut_to_the_byte_limit(fmt: str, tmp_path: Path) -> None:
    """Wide rows: the reader hands over whole blocks; every batch the scan gives keeps each
    vector within ``auger.scan.batch_bytes``, and no row is lost, repeated or cut."""
    rows = [{"id": i, "text": f"{i:05d}" + "w" * 2000, "n": i * 0.5} for i in range(600)]
    suffix, write = FORMATS[fmt]
    path = tmp_path / f"wide.{suffix}"
    write(path, rows)
    limit = 64 * 1024
    spec = plan(fmt, tmp_path, [path], ["id", "text", "filename"])
    spec = replace(spec, options={**spec.options, "auger.scan.batch_bytes": limit})
    batches = list(run_scan(spec, batch_rows=4096))
    assert len(batches) >= 600 * 2000 // limit
    for b in batches:
        assert 0 < b.num_rows <= 4096
        assert all(size <= limit for c in b.columns for size in _buffer_sizes(c))
    got = pa.Table.from_batches(batches).to_pylist()
    want = [{"id": r["id"], "text": r["text"], "filename": path.name} for r in rows]
    if fmt == "csvh":
        want = [{**w, "id": str(w["id"])} for w in want]
    assert got == want


def test_arrow_reader_batches_stop_at_the_limit_when_cut(tmp_path: Path) -> None:
    rows = [{"id": i, "text": "w" * 1000} for i in range(300)]
    path = tmp_path / "wide.json"
    write_json(path, rows)
    spec = plan("json", tmp_path, [path], ["id"], limit=130)
    spec = replace(spec, options={**spec.options, "auger.scan.batch_bytes": 256})
    batches = list(run_scan(spec, batch_rows=4096))
    assert [b.num_rows for b in batches] == [256 // 8] * 4 + [130 - 4 * (256 // 8)]
    assert [v for b in batches for v in b.column("id").to_pylist()] == list(range(130))


def test_conversion_plan_is_worked_out_once_per_reader_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many batches of one file: the plan (where each output column comes from, and its
    conversion) is made for the first batch only; later batches reuse it."""
    from auger.scan import file_scan

    made: list[pa.Schema] = []
    real = file_scan.FrozenScan._make_plan

    def spy(self: Any, schema: pa.Schema) -> Any:
        made.append(schema)
        return real(self, schema)

    monkeypatch.setattr(file_scan.FrozenScan, "_make_plan", spy)
    path = tmp_path / "f.parquet"
    rows = [{"id": i, "name": f"n{i}"} for i in range(5000)]
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=500)
    spec = plan("parquet", tmp_path, [path], ["name", "filename", "id", "absent"])
    batches = list(run_scan(spec, batch_rows=300))
    assert len(batches) > 10 and len(made) == 1
    got = pa.Table.from_batches(batches).to_pylist()
    assert got == [
        {"name": r["name"], "filename": "f.parquet", "id": r["id"], "absent": None} for r in rows
    ]
