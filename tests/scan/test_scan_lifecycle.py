"""Reader lifecycle through the result set loader (Drill's TestScanLifecycleBasics,
TestScanLifecycleTwoReaders, TestScanLifecycleLimit and TestReaderErrors, paraphrased)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from auger.errors import UserError
from auger.resultset import ResultSetLoader
from auger.scan import ErrorContext, FileDescrip, ScanSchemaTracker, resolve_implicit_columns
from auger.scan.lifecycle import FormatReader, ScanLifecycle, SchemaNegotiator, loader_projection
from auger.types import ColumnMetadata, TupleSchema
from auger.types.schema_text import parse_schema

SCHEMA = "a INT NOT NULL, b VARCHAR"
FILE = FileDescrip("/w/x/y/foo.csv", "/w")


def S(text: str) -> TupleSchema:
    return parse_schema(text)


def rows(batches: list[pa.RecordBatch]) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = []
    for b in batches:
        cols = [c.to_pylist() for c in b.columns]
        out.extend(zip(*cols, strict=True) if cols else [()] * b.num_rows)
    return out


class MockReader(FormatReader):
    """Batch k writes rows ((k-1)*20+10, "fred"), ((k-1)*20+20, "wilma")."""

    def __init__(self, batches: int = 1, early: bool = True, schema: str = SCHEMA) -> None:
        self.batches = batches
        self.early = early
        self.schema = S(schema)
        self.loader: ResultSetLoader | None = None
        self.count = 0
        self.closed = False

    def open(self, negotiator: SchemaNegotiator) -> bool:
        if self.early:
            negotiator.set_table_schema(self.schema, complete=True)
        self.loader = negotiator.build()
        return True

    def next(self) -> bool:
        assert self.loader is not None
        if self.count >= self.batches:
            return False
        self.count += 1
        w = self.loader.writer()
        if not self.early and self.count == 1:
            for col in self.schema:
                w.add_column(col)
        base = (self.count - 1) * 20
        for value, name in ((base + 10, "fred"), (base + 20, "wilma")):
            if w.is_full():  # a LIMIT (or a full batch) stops the reader early
                break
            w.add_row(*(value, name)[: len(self.schema)])
        return True

    def close(self) -> None:
        self.closed = True


def scan(projection: list[str], **kw: object) -> ScanLifecycle:
    t = ScanSchemaTracker.build(projection, error_context=ErrorContext("Scan context"))
    implicit = resolve_implicit_columns(t)
    return ScanLifecycle(t, implicit, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("early", [True, False])
def test_one_reader_two_batches(early: bool) -> None:
    lc = scan(["*"])
    reader = MockReader(batches=2, early=early)
    out = list(lc.read_file(FILE, reader))
    assert rows(out) == [(10, "fred"), (20, "wilma"), (30, "fred"), (40, "wilma")]
    assert lc.tracker.output_schema() == S(SCHEMA)
    assert reader.closed


@pytest.mark.parametrize("early", [True, False])
def test_project_with_missing_column(early: bool) -> None:
    lc = scan(["a", "c"])
    out = list(lc.read_file(FILE, MockReader(early=early)))
    assert lc.tracker.output_schema() == S("a INT NOT NULL, c INT")
    assert rows(out) == [(10, None), (20, None)]


def test_reorder_and_implicit() -> None:
    lc = scan(["b", "filename", "a"])
    out = list(lc.read_file(FILE, MockReader()))
    assert rows(out) == [("fred", "foo.csv", 10), ("wilma", "foo.csv", 20)]


def test_project_none_keeps_rows() -> None:
    lc = scan([])
    out = list(lc.read_file(FILE, MockReader()))
    assert sum(b.num_rows for b in out) == 2
    assert all(b.num_columns == 0 for b in out)


def test_early_eof_reader() -> None:
    class NoData(MockReader):
        def open(self, negotiator: SchemaNegotiator) -> bool:
            return False

    lc = scan(["*"])
    reader = NoData()
    assert list(lc.read_file(FILE, reader)) == []
    assert reader.closed
    assert not lc.tracker.is_resolved()


def test_null_reader_with_early_schema_resolves_schema() -> None:
    lc = scan(["*"])
    assert list(lc.read_file(FILE, MockReader(batches=0))) == []
    assert lc.tracker.is_resolved()
    assert lc.tracker.output_schema() == S(SCHEMA)


def test_two_readers_shrinking_schema() -> None:
    lc = scan(["*"])
    list(lc.read_file(FILE, MockReader()))

    class SingleCol(MockReader):
        def next(self) -> bool:
            assert self.loader is not None
            if self.count:
                return False
            self.count = 1
            self.loader.writer().add_row(101)
            self.loader.writer().add_row(102)
            return True

    out = list(lc.read_file(FILE, SingleCol(schema="a INT NOT NULL")))
    assert rows(out) == [(101, None), (102, None)]


def test_type_conflict_between_readers() -> None:
    lc = scan(["a", "b"])
    list(lc.read_file(FILE, MockReader(schema="a INT NOT NULL")))
    with pytest.raises(UserError, match="conflict"):
        list(lc.read_file(FILE, MockReader(schema="a INT NOT NULL, b BIGINT")))


@pytest.mark.parametrize(("limit", "expected"), [(1, 1), (3, 3), (4, 4), (10, 4)])
def test_limit(limit: int, expected: int) -> None:
    lc = scan(["a"], limit=limit)
    out = list(lc.read_file(FILE, MockReader(batches=2)))
    assert sum(b.num_rows for b in out) == expected
    second = MockReader()
    more = list(lc.read_file(FILE, second))
    if limit <= 4:
        assert more == [] and second.loader is None  # never opened
    else:
        assert sum(b.num_rows for b in more) == 2


@pytest.mark.parametrize("step", ["open", "next", "close"])
@pytest.mark.parametrize("kind", ["plain", "user"])
def test_reader_errors_carry_context(step: str, kind: str) -> None:
    class Failing(MockReader):
        def fail(self) -> None:
            if kind == "user":
                raise UserError.data_read(f"Oops {step}", ["My custom context"])
            raise RuntimeError(f"Oops {step}")

        def open(self, negotiator: SchemaNegotiator) -> bool:
            negotiator.add_context("Reader: failing")
            if step == "open":
                self.fail()
            return super().open(negotiator)

        def next(self) -> bool:
            if step == "next":
                self.fail()
            return super().next()

        def close(self) -> None:
            if step == "close":
                self.fail()

    lc = scan(["*"])
    with pytest.raises(UserError) as info:
        list(lc.read_file(FILE, Failing()))
    text = str(info.value)
    assert f"Oops {step}" in text
    assert "File: /w/x/y/foo.csv" in text and "Scan context" in text
    assert "Reader: failing" in text
    if kind == "plain":
        assert isinstance(info.value.__cause__, RuntimeError)


def test_loader_projection_paths() -> None:
    assert loader_projection(ScanSchemaTracker.build(["*"])) is None
    assert loader_projection(ScanSchemaTracker.build([])) == []
    t = ScanSchemaTracker.build(["a", "m.x", "m.y", "`d.e`", "filename"])
    resolve_implicit_columns(t)
    assert loader_projection(t) == ["a", "m.x", "m.y", "`d.e`"]
    t.apply_reader_schema([ColumnMetadata.map("m", [ColumnMetadata.required("x", "INT")])])
    assert loader_projection(t) == ["a", "m.x", "m.y", "`d.e`"]


def test_negotiator_reports_projection_and_input_schema() -> None:
    seen: dict[str, object] = {}

    class Peek(MockReader):
        def open(self, negotiator: SchemaNegotiator) -> bool:
            seen["a"] = negotiator.is_projected("a")
            seen["b"] = negotiator.is_projected("b")
            seen["input"] = negotiator.input_schema
            seen["file"] = negotiator.file.filename
            return super().open(negotiator)

    lc = scan(["a", "zz"])
    list(lc.read_file(FILE, Peek()))
    assert seen == {"a": True, "b": False, "input": S("a LATE, zz LATE"), "file": "foo.csv"}
