"""The scan operator (Drill's cases, paraphrased): TestScanBasics, the schema-only
first batch, TestMissingColumnLoader, TestOutputBatchBuilder, TestScanOuputSchema and
TestScanOverflow, over small in-memory readers."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.conflicts import check_read
from auger.scan import (
    FileDescrip,
    FormatReader,
    ImplicitOptions,
    ReaderFormatPlugin,
    ScanOperator,
    SchemaNegotiator,
    assemble,
    missing_batch,
    resolve_missing_types,
)
from auger.scan.spec import FileSplit
from auger.types import ColumnMetadata, TupleSchema
from auger.types.schema_text import parse_schema

Row = tuple[Any, ...]


def S(text: str) -> TupleSchema:
    return parse_schema(text)


def rows_of(batches: Sequence[pa.RecordBatch] | pa.RecordBatch) -> list[Row]:
    if isinstance(batches, pa.RecordBatch):
        batches = [batches]
    out: list[Row] = []
    for b in batches:
        cols = [c.to_pylist() for c in b.columns]
        out.extend(zip(*cols, strict=True) if cols else [()] * b.num_rows)
    return out


class Rows(FormatReader):
    """An early-schema reader writing the given rows in one batch (``[]``: no rows)."""

    def __init__(self, schema: str, rows: list[Row], early: bool = True) -> None:
        self.schema = S(schema)
        self.rows = list(rows)
        self.early = early
        self.done = False
        self.closed = False

    def open(self, negotiator: SchemaNegotiator) -> bool:
        if self.early:
            negotiator.set_table_schema(self.schema, complete=True)
        self.writer = negotiator.build().writer()
        return True

    def next(self) -> bool:
        if self.done:
            return False
        if not self.early and self.writer.size() == 0:
            for col in self.schema:
                self.writer.add_column(col)
        while self.rows and not self.writer.is_full():
            self.writer.add_row(*self.rows.pop(0))
        self.done = not self.rows
        return bool(self.rows)

    def close(self) -> None:
        self.closed = True


def scan_of(readers: list[FormatReader], projection: list[str], **kw: Any) -> ScanOperator:
    files = [FileSplit(f"/w/x/y/r{i}.csv") for i in range(len(readers))]
    return ScanOperator(lambda s: readers[int(s.path[-5])], files, projection, **kw)


# --------------------------------------------------------------------------- TestScanBasics
def test_crash_in_reader_creation_names_the_message() -> None:
    def boom(split: FileSplit) -> FormatReader:
        raise ValueError("My Bad!")

    with pytest.raises(UserError, match="My Bad!") as info:
        list(ScanOperator(boom, ["/w/a.csv"], ["*"]))
    assert "File: /w/a.csv" in info.value.context


def test_readers_all_empty_give_one_empty_batch_with_the_schema() -> None:
    readers = [Rows("a INT NOT NULL, b VARCHAR", []), Rows("a INT NOT NULL, b VARCHAR", [])]
    out = list(scan_of(readers, ["*"], schema_batch=True))  # type: ignore[arg-type]
    assert [(b.num_rows, b.schema.names) for b in out] == [(0, ["a", "b"])]
    assert all(r.closed for r in readers)


def test_late_readers_without_schema_give_nothing() -> None:
    readers = [Rows("", [], early=False)]
    assert list(scan_of(readers, ["*"], schema_batch=True)) == []  # type: ignore[arg-type]


@pytest.mark.parametrize("early", [True, False])
def test_first_data_batch_is_preceded_by_a_schema_batch(early: bool) -> None:
    readers = [Rows("a INT NOT NULL", [(1,), (2,)], early)]
    out = list(scan_of(readers, ["*"], schema_batch=True))  # type: ignore[arg-type]
    assert [b.num_rows for b in out] == [0, 2]
    assert out[0].schema == out[1].schema


def test_without_schema_batch_only_rows_come_out() -> None:
    readers = [Rows("a INT", []), Rows("a INT", [(1,)])]
    out = list(scan_of(readers, ["*"]))  # type: ignore[arg-type]
    assert [b.num_rows for b in out] == [1]


# ------------------------------------------------------------------- wildcard output order
def test_wildcard_order_table_then_implicit_then_partitions() -> None:
    readers = [Rows("a INT NOT NULL, b VARCHAR", [(10, "fred")])]
    op = scan_of(
        readers,  # type: ignore[arg-type]
        ["*", "filename", "suffix"],
        selection_root="/w",
    )
    (out,) = list(op)
    # Drill's order: the wildcard's partitions follow the table columns, where the * was.
    assert out.schema.names == ["a", "b", "dir0", "dir1", "filename", "suffix"]
    assert rows_of(out) == [(10, "fred", "x", "y", "r0.csv", "csv")]


def test_full_projection_aligns_rows_across_sources() -> None:
    readers = [Rows("a INT NOT NULL, b VARCHAR", [(10, "fred"), (20, "wilma")])]
    op = scan_of(readers, ["dir0", "b", "filename", "c", "suffix"], selection_root="/w")  # type: ignore[arg-type]
    (out,) = list(op)
    assert op.output_schema() == S(
        "dir0 VARCHAR, b VARCHAR, filename VARCHAR NOT NULL, c INT, suffix VARCHAR NOT NULL"
    )
    assert rows_of(out) == [
        ("x", "fred", "r0.csv", None, "csv"),
        ("x", "wilma", "r0.csv", None, "csv"),
    ]


def test_empty_projection_keeps_rows() -> None:
    readers = [Rows("a INT", [(1,), (2,), (3,)])]
    out = list(scan_of(readers, []))  # type: ignore[arg-type]
    assert [(b.num_rows, b.num_columns) for b in out] == [(3, 0)]


def test_map_member_projection() -> None:
    readers = [
        Rows(
            "m1 STRUCT<a INT NOT NULL, b INT NOT NULL>",
            [({"a": 10, "b": 11},), ({"a": 20, "b": 21},)],
        )
    ]
    op = scan_of(readers, ["m1.a"])  # type: ignore[arg-type]
    out = list(op)
    assert out[0].schema.names == ["m1"]
    assert rows_of(out) == [({"a": 10},), ({"a": 20},)]


def test_partition_label_from_options() -> None:
    readers = [Rows("a INT", [(1,)])]
    op = scan_of(
        readers,  # type: ignore[arg-type]
        ["a", "lvl1", "fname"],
        selection_root="/w",
        options={
            "drill.exec.storage.file.partition.column.label": "lvl",
            "drill.exec.storage.implicit.filename.column.label": "fname",
        },
    )
    assert rows_of(list(op)) == [(1, "y", "r0.csv")]


def test_implicit_options_override() -> None:
    readers = [Rows("a INT", [(1,)])]
    op = scan_of(
        readers,  # type: ignore[arg-type]
        ["*"],
        selection_root="/w",
        implicit_options=ImplicitOptions(max_partition_depth=3),
    )
    (out,) = list(op)
    assert out.schema.names == ["a", "dir0", "dir1", "dir2"]
    assert rows_of(out) == [(1, "x", "y", None)]


def test_arrow_native_source_is_conformed() -> None:
    """An Arrow reader's later file with a narrower type is cast to the type the scan settled."""
    batches = {
        "/w/a.csv": [pa.record_batch({"a": pa.array([1, 2], pa.int64()), "b": ["x", "y"]})],
        "/w/b.csv": [pa.record_batch({"a": pa.array([3], pa.int32())})],
    }
    op = ScanOperator(lambda s: batches[s.path], list(batches), ["*", "filename"])
    out = list(op)
    assert [b.schema.names for b in out] == [["a", "b", "filename"]] * 2
    assert out[1].schema.field("a").type == pa.int64()
    assert rows_of(out) == [(1, "x", "a.csv"), (2, "y", "a.csv"), (3, None, "b.csv")]


def test_arrow_strict_mode_warns_about_dropped_columns() -> None:
    batches = {
        "/w/a.csv": [pa.record_batch({"a": [1]})],
        "/w/b.csv": [pa.record_batch({"a": [2], "z": [9]})],
    }
    op = ScanOperator(lambda s: batches[s.path], list(batches), ["*"], mode="strict")
    assert rows_of(list(op)) == [(1,), (2,)]
    assert len(op.warnings) == 1 and "`z`" in op.warnings[0]


def test_arrow_batches_are_cut_to_batch_rows() -> None:
    big = [pa.record_batch({"a": list(range(10))})]
    out = list(ScanOperator(lambda s: big, ["/w/a.csv"], ["a"], batch_rows=4))
    assert [b.num_rows for b in out] == [4, 4, 2]


def test_mode_must_be_known() -> None:
    with pytest.raises(ValueError, match="mode"):
        ScanOperator(lambda s: [], [], ["*"], mode="loose")  # type: ignore[arg-type]


# ------------------------------------------------------------------ TestMissingColumnLoader
MISSING = [
    # (name, missing schema, null type, resolved schema, row)
    (
        "basics",
        "unspecified LATE, specifiedOpt VARCHAR, specifiedReq VARCHAR NOT NULL, "
        "specifiedArray VARCHAR ARRAY",
        None,
        "unspecified INT, specifiedOpt VARCHAR, specifiedReq VARCHAR NOT NULL, "
        "specifiedArray VARCHAR ARRAY",
        (None, None, "", []),
    ),
    ("custom null type", "unspecified LATE", "VARCHAR", "unspecified VARCHAR", (None,)),
    (
        "defaults",
        "i INT NOT NULL DEFAULT '10', s VARCHAR NOT NULL DEFAULT 'foo', "
        "d DOUBLE NOT NULL DEFAULT '20.0'",
        None,
        "i INT NOT NULL DEFAULT '10', s VARCHAR NOT NULL DEFAULT 'foo', "
        "d DOUBLE NOT NULL DEFAULT '20.0'",
        (10, "foo", 20.0),
    ),
    (
        "all modes",
        "intReq INT NOT NULL DEFAULT '10', strReq VARCHAR NOT NULL DEFAULT 'foo', "
        "dubReq DOUBLE NOT NULL, intOpt INT DEFAULT '20', strOpt VARCHAR DEFAULT 'bar', "
        "dubOpt DOUBLE",
        None,
        None,
        (10, "foo", 0.0, None, None, None),
    ),
]


@pytest.mark.parametrize(
    ("missing", "null_type", "resolved", "row"),
    [m[1:] for m in MISSING],
    ids=[m[0] for m in MISSING],
)
def test_missing_column_loader(
    missing: str, null_type: str | None, resolved: str | None, row: Row
) -> None:
    schema = resolve_missing_types(S(missing), null_type=null_type)
    if resolved is not None:
        assert schema == S(resolved)
    batch = missing_batch(schema, 2)
    assert rows_of(batch) == [row, row]


def test_missing_columns_through_the_scan_use_a_provided_type_and_default() -> None:
    readers = [Rows("a INT NOT NULL", [(1,), (2,)])]
    provided = S("a INT NOT NULL, d BIGINT NOT NULL DEFAULT '20', e VARCHAR")
    op = scan_of(readers, ["a", "d", "e", "f"], provided_schema=provided)  # type: ignore[arg-type]
    out = list(op)
    assert rows_of(out) == [(1, 20, None, None), (2, 20, None, None)]
    assert [f.type for f in out[0].schema] == [pa.int32(), pa.int64(), pa.string(), pa.int32()]


# ------------------------------------------------------------------- TestOutputBatchBuilder
def rb(**cols: Any) -> pa.RecordBatch:
    return pa.record_batch(cols)


BUILDER = [
    # (name, output schema, sources, rows)
    (
        "passthrough",
        "a INT, d VARCHAR",
        [rb(a=[10, 20], d=["barney", "wilma"])],
        [(10, "barney"), (20, "wilma")],
    ),
    (
        "reorder",
        "a INT, d VARCHAR",
        [rb(d=["barney", "wilma"], a=[10, 20])],
        [(10, "barney"), (20, "wilma")],
    ),
    (
        "two inputs",
        "a INT, b INT, c VARCHAR, d VARCHAR",
        [rb(d=["barney", "wilma"], a=[10, 20]), rb(b=[1, 2], c=["foo.csv", "foo.csv"])],
        [(10, 1, "foo.csv", "barney"), (20, 2, "foo.csv", "wilma")],
    ),
    (
        "maps merged",
        "a VARCHAR, m STRUCT<x INT, y VARCHAR>",
        [rb(a=["barney", "fred"], m=[{"y": "betty"}, {"y": "wilma"}]), rb(m=[{"x": 1}, {"x": 2}])],
        [("barney", {"x": 1, "y": "betty"}), ("fred", {"x": 2, "y": "wilma"})],
    ),
    (
        "nested maps merged",
        "a VARCHAR, m1 STRUCT<p VARCHAR, q INT, m2 STRUCT<x VARCHAR, y INT>>",
        [
            rb(a=["barney"], m1=[{"p": "betty", "m2": {"x": "pebbles"}}]),
            rb(m1=[{"q": 1, "m2": {"y": 10}}]),
        ],
        [("barney", {"p": "betty", "q": 1, "m2": {"x": "pebbles", "y": 10}})],
    ),
    (
        "map arrays and lists pass through",
        "a INT, ma STRUCT<x INT> ARRAY, l INT ARRAY",
        [rb(a=[1], ma=[[{"x": 1}, {"x": 2}]], l=[[1, 2]])],
        [(1, [{"x": 1}, {"x": 2}], [1, 2])],
    ),
]


@pytest.mark.parametrize(
    ("schema", "sources", "expected"), [b[1:] for b in BUILDER], ids=[b[0] for b in BUILDER]
)
def test_output_batch_builder(
    schema: str, sources: list[pa.RecordBatch], expected: list[Row]
) -> None:
    out = assemble(S(schema), sources)
    assert out.schema.names == S(schema).names()
    assert rows_of(out) == expected


# --------------------------------------------------------------------- TestScanOuputSchema
class Strings(FormatReader):
    """Writes a="10", b="foo", c="bar" (all VARCHAR) in one row."""

    def open(self, negotiator: SchemaNegotiator) -> bool:
        negotiator.set_table_schema("a VARCHAR, b VARCHAR, c VARCHAR", complete=True)
        self.writer = negotiator.build().writer()
        self.done = False
        return True

    def next(self) -> bool:
        if self.done:
            return False
        self.done = True
        self.writer.add_row("10", "foo", "bar")
        return True


PROVIDED = "a INT, d BIGINT NOT NULL DEFAULT '20', e BIGINT NOT NULL DEFAULT '30'"
OUTPUT_SCHEMA = [
    # (name, projection, strict, special a, schema, row)
    (
        "explicit",
        ["a", "b", "d", "f"],
        False,
        False,
        "a INT, b VARCHAR, d BIGINT NOT NULL DEFAULT '20', f VARCHAR",
        (10, "foo", 20, None),
    ),
    ("wildcard", ["*"], False, False, None, (10, 20, 30, "foo", "bar")),
    ("wildcard strict", ["*"], True, False, None, (10, 20, 30)),
    ("wildcard strict special", ["*"], True, True, None, (20, 30)),
]


@pytest.mark.parametrize(
    ("projection", "strict", "special", "schema", "row"),
    [o[1:] for o in OUTPUT_SCHEMA],
    ids=[o[0] for o in OUTPUT_SCHEMA],
)
def test_scan_output_schema_converts_to_the_provided_types(
    projection: list[str], strict: bool, special: bool, schema: str | None, row: Row
) -> None:
    provided = S(PROVIDED)
    if special:
        provided.replace(provided["a"].with_properties(**{"drill.special": "true"}))
    given: Any = provided
    if strict:
        given = SimpleNamespace(schema=provided, properties={"drill.strict": "true"})
    op = scan_of(
        [Strings()], projection, provided_schema=given, null_type="VARCHAR", schema_batch=True
    )
    out = list(op)
    assert [b.num_rows for b in out] == [0, 1]
    if schema is not None:
        assert op.output_schema() == S(schema)
    assert rows_of(out) == [row]
    assert out[1].schema.field(0).type in (pa.int32(), pa.int64())


def test_unconvertible_provided_value_is_a_located_error() -> None:
    class Bad(Strings):
        def next(self) -> bool:
            if self.done:
                return False
            self.done = True
            self.writer.add_row("ten", "foo", "bar")
            return True

    with pytest.raises(UserError, match="type conflict") as info:
        list(scan_of([Bad()], ["a"], provided_schema=S(PROVIDED)))
    assert "Column: a" in info.value.context
    assert "File: /w/x/y/r0.csv" in info.value.context


# ------------------------------------------------------------------------ TestScanOverflow
class Overflowing(FormatReader):
    """Writes 512-character strings until the batch is full, ``batch_limit`` times."""

    def __init__(self, eof_with_overflow: bool) -> None:
        self.eof_with_overflow = eof_with_overflow
        self.calls = 0
        self.written: list[int] = []

    def open(self, negotiator: SchemaNegotiator) -> bool:
        negotiator.set_table_schema("a VARCHAR NOT NULL", complete=True)
        self.writer = negotiator.build().writer()
        return True

    def next(self) -> bool:
        if self.calls >= 2:
            return False
        self.calls += 1
        n = 0
        while not self.writer.is_full():
            self.writer.add_row("x" * 512)
            n += 1
        self.written.append(n)
        return not (self.eof_with_overflow and self.calls == 2)


@pytest.mark.parametrize("eof_with_overflow", [True, False])
def test_overflow_row_carries_over_and_ends_each_reader(eof_with_overflow: bool) -> None:
    readers = [Overflowing(eof_with_overflow), Overflowing(eof_with_overflow)]
    op = scan_of(
        readers,  # type: ignore[arg-type]
        ["*"],
        batch_rows=65536,
        vector_size_limit=64 * 1024,
    )
    sizes: list[int] = []
    for batch in op:
        sizes.append(batch.num_rows)
        assert op.schema_version == 1
    for i, reader in enumerate(readers):
        w1, w2 = reader.written
        assert w1 > 1
        # Each overflow row waits for the next batch; the last one comes alone.
        assert sizes[3 * i : 3 * i + 3] == [w1 - 1, (w1 + w2) - (w1 - 1) - 1, 1]
    assert len(sizes) == 6
    assert sum(sizes) == sum(sum(r.written) for r in readers)


def test_file_descrip_of_a_split_has_the_modification_time() -> None:
    seen: list[FileDescrip] = []

    class Peek(Rows):
        def open(self, negotiator: SchemaNegotiator) -> bool:
            seen.append(negotiator.file)
            assert negotiator.split is not None and negotiator.split.size == 7
            return super().open(negotiator)

    files = [FileSplit("/w/x/a.csv", size=7, mtime=12.5)]
    op = ScanOperator(
        lambda s: Peek("a INT", [(1,)]), files, ["a", "lmt", "dir0"], selection_root="/w"
    )
    assert rows_of(list(op)) == [(1, "12500", "x")]
    assert seen[0].filename == "a.csv"


def test_column_metadata_helper_is_used_by_readers() -> None:
    """A late reader may add columns one at a time (``ColumnMetadata``) in any order."""

    class Late(FormatReader):
        def open(self, negotiator: SchemaNegotiator) -> bool:
            self.writer = negotiator.build().writer()
            self.done = False
            return True

        def next(self) -> bool:
            if self.done:
                return False
            self.done = True
            self.writer.add_column(ColumnMetadata.required("x", "INT"))
            self.writer.add_row(1)
            self.writer.add_column(ColumnMetadata.optional("y", "VARCHAR"))
            self.writer.add_row(2, "two")
            return True

    out = list(ScanOperator(lambda s: Late(), ["/w/a.csv"], ["y", "x"]))
    assert rows_of(out) == [(None, 1), ("two", 2)]


# ------------------------------------------------------------- TestFileScan, end to end
FRED_WILMA = [(10, "fred"), (20, "wilma")]
FILE_SCAN = [
    # (name, projection, names, first row)
    (
        "late schema file wildcards",
        ["*", "fqn", "filepath", "filename", "suffix", "dir0", "dir1", "dir2"],
        ["a", "b", "fqn", "filepath", "filename", "suffix", "dir0", "dir1", "dir2"],
        (10, "fred", "/w/x/y/foo.csv", "/w/x/y", "foo.csv", "csv", "x", "y", None),
    ),
    (
        "implicit columns",
        ["a", "b", "filename", "suffix"],
        ["a", "b", "filename", "suffix"],
        (10, "fred", "foo.csv", "csv"),
    ),
    (
        "full project",
        ["dir0", "b", "filename", "c", "suffix"],
        ["dir0", "b", "filename", "c", "suffix"],
        ("x", "fred", "foo.csv", None, "csv"),
    ),
    (
        "filename then wildcard",
        ["filename", "*"],
        ["filename", "a", "b", "dir0", "dir1", "dir2"],
        ("foo.csv", 10, "fred", "x", "y", None),
    ),
]


@pytest.mark.parametrize(
    ("projection", "names", "first"), [f[1:] for f in FILE_SCAN], ids=[f[0] for f in FILE_SCAN]
)
def test_file_scan(projection: list[str], names: list[str], first: Row) -> None:
    op = ScanOperator(
        lambda s: Rows("a INT NOT NULL, b VARCHAR", FRED_WILMA, early=False),
        ["file:/w/x/y/foo.csv"],
        projection,
        selection_root="file:/w",
        implicit_options=ImplicitOptions(max_partition_depth=3),
        schema_batch=True,
    )
    schema_only, data = list(op)
    assert schema_only.num_rows == 0 and schema_only.schema == data.schema
    assert data.schema.names == names
    assert rows_of(data)[0] == first
    assert len(rows_of(data)) == 2


# ------------------------------------------------------------------------ ReaderFormatPlugin
class TwoFiles(ReaderFormatPlugin):
    """Files named ``int*`` hold ``(a INT, b VARCHAR)``, others ``(a VARCHAR, c BIGINT)``."""

    type_name = "twofiles"

    def reader(self, file: FileSplit, config: FormatConfig) -> FormatReader:
        if "int" in file.path:
            return Rows("a INT NOT NULL, b VARCHAR", [(1, "x"), (2, "y")])
        return Rows("a VARCHAR, c BIGINT", [("z", 3)], early=False)


def test_reader_plugin_discovers_the_union_of_file_schemas() -> None:
    cfg = FormatConfig("t", "twofiles", ())
    # Columns become nullable: another file may lack them.
    assert TwoFiles().discover_schema(["/w/int1.t", "/w/int2.t"], cfg, {}) == S("a INT, b VARCHAR")
    schema = TwoFiles().discover_schema(["/w/int1.t", "/w/str.t"], cfg, {})
    with pytest.raises(UserError, match=r"Column \[a\] has type") as info:
        check_read(schema.column("a"))
    assert "File: /w/str.t" in info.value.context


def test_file_outside_the_root_has_no_partitions() -> None:
    op = ScanOperator(
        lambda s: Rows("a INT", [(1,)]), ["/elsewhere/a.csv"], ["a", "dir0"], selection_root="/w"
    )
    assert rows_of(list(op)) == [(1, None)]
