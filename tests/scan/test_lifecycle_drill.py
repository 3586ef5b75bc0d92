"""Drill's scan lifecycle cases, paraphrased over small in-memory
readers: TestScanLifecycleBasics, TestScanLifecycleTwoReaders, TestScanLifecycleSchema,
TestScanLifecycleLimit and TestReaderErrors."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest

from auger.errors import UserError
from auger.resultset import ResultSetLoader
from auger.scan import (
    ErrorContext,
    FileDescrip,
    FormatReader,
    ProjectionType,
    ScanLifecycle,
    ScanOperator,
    ScanSchemaTracker,
    SchemaNegotiator,
    resolve_implicit_columns,
)
from auger.scan.spec import FileSplit
from auger.types import TupleSchema
from auger.types.schema_text import parse_schema

SCHEMA = "a INT NOT NULL, b VARCHAR"
FILE = FileDescrip("/w/x/y/foo.csv", "/w")
Row = tuple[Any, ...]


def S(text: str) -> TupleSchema:
    return parse_schema(text)


def rows_of(batches: Sequence[pa.RecordBatch]) -> list[Row]:
    out: list[Row] = []
    for b in batches:
        cols = [c.to_pylist() for c in b.columns]
        out.extend(zip(*cols, strict=True) if cols else [()] * b.num_rows)
    return out


def standard(k: int) -> list[Row]:
    """Drill's mock rows of batch k (1-based)."""
    return [((k - 1) * 20 + 10, "fred"), ((k - 1) * 20 + 20, "wilma")]


class Mock(FormatReader):
    """An early (schema in ``open``) or late (columns on first ``next``) reader."""

    def __init__(
        self,
        schema: str = SCHEMA,
        batches: int | list[list[Row]] = 1,
        early: bool = True,
        has_data: bool = True,
    ) -> None:
        self.schema = S(schema)
        if isinstance(batches, int):
            batches = [[r[: len(self.schema)] for r in standard(k)] for k in range(1, batches + 1)]
        self.data = batches
        self.early = early
        self.has_data = has_data
        self.loader: ResultSetLoader | None = None
        self.count = 0
        self.closed = False

    def open(self, negotiator: SchemaNegotiator) -> bool:
        if not self.has_data:
            return False
        if self.early:
            negotiator.set_table_schema(self.schema, complete=True)
        self.loader = negotiator.build()
        return True

    def next(self) -> bool:
        assert self.loader is not None
        if self.count >= len(self.data):
            return False
        w = self.loader.writer()
        if not self.early and self.count == 0:
            for col in self.schema:
                w.add_column(col)
        for row in self.data[self.count]:
            if w.is_full():
                break
            w.add_row(*row)
        self.count += 1
        return True

    def close(self) -> None:
        self.closed = True


def lifecycle(
    projection: list[str] | None, *, null_type: str | None = None, **kw: Any
) -> ScanLifecycle:
    t = ScanSchemaTracker.build(projection, error_context=ErrorContext("Scan context"), **kw)
    return ScanLifecycle(t, resolve_implicit_columns(t), null_type=null_type)


def operator(
    readers: Sequence[FormatReader | Callable[[], FormatReader]],
    projection: list[str] | None = None,
    **kw: Any,
) -> ScanOperator:
    """A scan over one file per reader (``/w/r0.csv``, ``/w/r1.csv``...)."""
    files = [FileSplit(f"/w/r{i}.csv") for i in range(len(readers))]

    def source(split: FileSplit) -> FormatReader:
        r = readers[int(split.path[4:-4])]
        return r if isinstance(r, FormatReader) else r()

    kw.setdefault("error_context", ErrorContext("Scan context"))
    return ScanOperator(source, files, ["*"] if projection is None else projection, **kw)


# ------------------------------------------------------------------ TestScanLifecycleBasics
def test_no_readers() -> None:
    op = operator([])
    assert list(op) == []
    assert op.output_schema() is None


def test_early_eof_reader_has_no_schema() -> None:
    lc = lifecycle(["*"])
    rl = lc.reader(FILE, Mock(has_data=False))
    assert rl.open() is False
    assert rl.next() is None
    assert lc.output_schema() is None


def test_null_late_reader_gives_no_schema() -> None:
    lc = lifecycle(["*"])
    rl = lc.reader(FILE, Mock(batches=0, early=False))
    assert rl.open()
    assert rl.next() is None
    assert lc.output_schema() is None


def test_null_early_reader_gives_schema_and_one_empty_batch() -> None:
    lc = lifecycle(["*"])
    rl = lc.reader(FILE, Mock(batches=0))
    assert rl.open()
    assert lc.output_schema() == S(SCHEMA)
    first = rl.next()
    assert first is not None and first.num_rows == 0 and first.schema.names == ["a", "b"]
    assert rl.next() is None


BASICS = [
    # (name, projection, reader kwargs, null type, schema, rows)
    ("early one batch", ["*"], {"batches": 1}, None, SCHEMA, standard(1)),
    ("early two batches", ["*"], {"batches": 2}, None, SCHEMA, standard(1) + standard(2)),
    ("late one batch", ["*"], {"early": False}, None, SCHEMA, standard(1)),
    (
        "late two batches",
        ["*"],
        {"early": False, "batches": 2},
        None,
        SCHEMA,
        standard(1) + standard(2),
    ),
    ("early project", ["a", "c"], {}, None, "a INT NOT NULL, c INT", [(10, None), (20, None)]),
    (
        "late project",
        ["a", "c"],
        {"early": False},
        None,
        "a INT NOT NULL, c INT",
        [(10, None), (20, None)],
    ),
    (
        "early reorder",
        ["b", "a"],
        {},
        None,
        "b VARCHAR, a INT NOT NULL",
        [("fred", 10), ("wilma", 20)],
    ),
    (
        "late custom null type",
        ["a", "c"],
        {"early": False},
        "VARCHAR",
        "a INT NOT NULL, c VARCHAR",
        [(10, None), (20, None)],
    ),
    ("early subset", ["a"], {}, None, "a INT NOT NULL", [(10,), (20,)]),
    ("empty schema", ["*"], {"schema": "", "batches": [[(), ()]]}, None, "", [(), ()]),
    (
        "empty schema projected",
        ["a"],
        {"schema": "", "batches": [[(), ()]]},
        None,
        "a INT",
        [(None,), (None,)],
    ),
]


@pytest.mark.parametrize(
    ("projection", "kw", "null_type", "schema", "expected"),
    [b[1:] for b in BASICS],
    ids=[b[0] for b in BASICS],
)
def test_basics(
    projection: list[str],
    kw: dict[str, Any],
    null_type: str | None,
    schema: str,
    expected: list[Row],
) -> None:
    lc = lifecycle(projection, null_type=null_type)
    reader = Mock(**kw)
    rl = lc.reader(FILE, reader)
    assert rl.open()
    # An early schema is known as soon as the reader is open; a late one after a batch.
    if not kw.get("early", True):
        assert lc.output_schema() is None
    elif projection == ["*"]:
        assert lc.output_schema() == S(schema)
    out = []
    while (b := rl.next()) is not None:
        out.append(b)
    rl.close()
    assert lc.output_schema() == S(schema)
    assert rows_of(out) == expected
    assert all(b.schema.names == S(schema).names() for b in out)
    assert reader.closed


def test_project_none_counts_rows() -> None:
    lc = lifecycle([])
    assert lc.tracker.projection_type is ProjectionType.NONE
    out = list(lc.read_file(FILE, Mock()))
    assert [(b.num_rows, b.num_columns) for b in out] == [(2, 0)]
    assert lc.output_schema() == S("")


# --------------------------------------------------------------- TestScanLifecycleTwoReaders
def single_col() -> Mock:
    return Mock("a INT NOT NULL", [[(101,), (102,)]])


def three_col() -> Mock:
    return Mock(
        "a INT NOT NULL, b VARCHAR, c BIGINT NOT NULL",
        [[(101, "wilma", 1001), (102, "betty", 1002)]],
    )


def reordered() -> Mock:
    return Mock("b VARCHAR, a INT NOT NULL", [[("barney", 30), ("betty", 40)]])


def test_two_null_readers() -> None:
    op = operator([Mock(batches=0, early=False), Mock(batches=0, early=False)])
    assert list(op) == []
    assert op.output_schema() is None


@pytest.mark.parametrize("null_first", [True, False])
def test_null_and_valid_reader(null_first: bool) -> None:
    readers = [Mock(batches=0, early=False), Mock()]
    op = operator(readers if null_first else readers[::-1])
    assert rows_of(list(op)) == standard(1)
    assert op.output_schema() == S(SCHEMA)


def test_two_valid_readers() -> None:
    assert rows_of(list(operator([Mock(), Mock()]))) == standard(1) * 2


@pytest.mark.parametrize("mode", ["merge", "strict"])
def test_shrinking_schema(mode: str) -> None:
    out = list(operator([Mock(), single_col()], mode=mode))
    assert rows_of(out[1:]) == [(101, None), (102, None)]
    assert out[1].schema.field("b").type == pa.string()


def test_shrinking_schema_with_conflict() -> None:
    op = operator([Mock("a INT NOT NULL"), Mock()], ["a", "b"])
    with pytest.raises(UserError, match="conflict") as info:
        list(op)
    assert "File: /w/r1.csv" in str(info.value)


def test_expanding_schema_in_merge_mode() -> None:
    op = operator([Mock(), three_col()])
    out = list(op)
    assert out[0].schema.names == ["a", "b"]
    assert out[1].schema.names == ["a", "b", "c"]
    assert rows_of(out[1:]) == [(101, "wilma", 1001), (102, "betty", 1002)]
    assert op.schema_version > 1
    assert op.warnings == []


def test_expanding_schema_in_strict_mode() -> None:
    op = operator([Mock(), three_col()], mode="strict")
    out = list(op)
    assert [b.schema.names for b in out] == [["a", "b"], ["a", "b"]]
    assert rows_of(out[1:]) == [(101, "wilma"), (102, "betty")]
    assert len(op.warnings) == 1 and "`c`" in op.warnings[0] and "/w/r1.csv" in op.warnings[0]
    assert op.schema_version == 1


@pytest.mark.parametrize(
    ("second", "step"),
    [
        (Mock("a INT NOT NULL, b BIGINT"), "open"),  # early type conflict
        (Mock("a INT NOT NULL, b BIGINT", [[(10, 1)]], early=False), "next"),  # late type conflict
        (Mock("a INT NOT NULL, b VARCHAR NOT NULL"), "open"),  # mode conflict
    ],
    ids=["early-type", "late-type", "mode"],
)
def test_type_conflicts_between_readers(second: Mock, step: str) -> None:
    lc = lifecycle(["*"])
    list(lc.read_file(FILE, Mock()))
    rl = lc.reader(FILE, second)
    if step == "next":
        assert rl.open()
    with pytest.raises(UserError, match="Scan and Reader column type conflict") as info:
        rl.open() if step == "open" else rl.next()
    assert "File: /w/x/y/foo.csv" in info.value.context


ORDERS = [
    # (projection, first reader, second reader, names, rows of the second)
    (["*"], Mock, reordered, ["a", "b"], [(30, "barney"), (40, "betty")]),
    (["*"], reordered, Mock, ["b", "a"], [("fred", 10), ("wilma", 20)]),
    (["a", "b"], reordered, Mock, ["a", "b"], [(10, "fred"), (20, "wilma")]),
    (["a", "b"], Mock, reordered, ["a", "b"], [(30, "barney"), (40, "betty")]),
]


@pytest.mark.parametrize(("projection", "first", "second", "names", "expected"), ORDERS)
def test_column_order_is_the_first_readers_or_the_projections(
    projection: list[str],
    first: Callable[[], Mock],
    second: Callable[[], Mock],
    names: list[str],
    expected: list[Row],
) -> None:
    out = list(operator([first(), second()], projection))
    assert [b.schema.names for b in out] == [names, names]
    assert rows_of(out[1:]) == expected


# ------------------------------------------------------------------ TestScanLifecycleSchema
def strict(text: str) -> SimpleNamespace:
    return SimpleNamespace(schema=S(text), properties={"drill.strict": "true"})


SCHEMAS = [
    # (name, build kwargs, projection, reader, type, rows)
    ("defined", {"defined_schema": S(SCHEMA)}, ["a", "b"], Mock, "SOME", standard(1)),
    (
        "defined wider reader",
        {"defined_schema": S(SCHEMA)},
        ["a", "b"],
        three_col,
        "SOME",
        [(101, "wilma"), (102, "betty")],
    ),
    (
        "defined narrower reader",
        {"defined_schema": S(SCHEMA)},
        ["a", "b"],
        single_col,
        "SOME",
        [(101, None), (102, None)],
    ),
    ("provided", {"provided_schema": S(SCHEMA)}, ["*"], Mock, "ALL", standard(1)),
    (
        "provided wider reader",
        {"provided_schema": S(SCHEMA)},
        ["*"],
        three_col,
        "ALL",
        [(101, "wilma", 1001), (102, "betty", 1002)],
    ),
    (
        "strict provided",
        {"provided_schema": strict(SCHEMA)},
        ["*"],
        three_col,
        "SOME",
        [(101, "wilma"), (102, "betty")],
    ),
]


@pytest.mark.parametrize(
    ("build", "projection", "reader", "ptype", "expected"),
    [s[1:] for s in SCHEMAS],
    ids=[s[0] for s in SCHEMAS],
)
def test_defined_and_provided_schemas(
    build: dict[str, Any],
    projection: list[str],
    reader: Callable[[], Mock],
    ptype: str,
    expected: list[Row],
) -> None:
    op = operator([reader()], projection, **build)
    assert op.tracker.projection_type.value == ptype
    assert rows_of(list(op)) == expected


def test_defined_schema_type_conflict() -> None:
    op = operator([Mock("a INT NOT NULL, b BIGINT")], ["a", "b"], defined_schema=S(SCHEMA))
    with pytest.raises(UserError, match="conflict"):
        list(op)


# -------------------------------------------------------------------- TestScanLifecycleLimit
class Fifty(FormatReader):
    """Two batches of 50 rows (values base+i), stopping early when the batch is full."""

    def __init__(self) -> None:
        self.count = 0

    def open(self, negotiator: SchemaNegotiator) -> bool:
        negotiator.set_table_schema("a INT NOT NULL", complete=True)
        self.rows = negotiator.build().writer()
        return True

    def next(self) -> bool:
        if self.count >= 2:
            return False
        base = self.count * 50 + 1
        self.count += 1
        for i in range(50):
            if self.rows.is_full():
                break
            self.rows.add_row(base + i)
        return True


def arrow_fifty(split: FileSplit) -> list[pa.RecordBatch]:
    return [pa.record_batch({"a": list(range(b * 50 + 1, b * 50 + 51))}) for b in range(2)]


LIMITS = [(0, [], 1), (1, [1], 1), (50, [50], 1), (75, [50, 25], 1), (100, [50, 50], 1)]
LIMITS += [(125, [50, 50, 25], 2)]


@pytest.mark.parametrize("kind", ["reader", "arrow"])
@pytest.mark.parametrize(("limit", "sizes", "created"), LIMITS)
def test_limit_push_down(kind: str, limit: int, sizes: list[int], created: int) -> None:
    made: list[int] = []

    def source(split: FileSplit) -> Any:
        made.append(1)
        return Fifty() if kind == "reader" else arrow_fifty(split)

    files = [FileSplit("/w/r0.csv"), FileSplit("/w/r1.csv")]
    op = ScanOperator(source, files, ["a"], limit=limit)
    out = list(op)
    assert [b.num_rows for b in out] == sizes
    assert len(made) == created
    values = [v for b in out for v in b.column(0).to_pylist()]
    assert values == [*range(1, 101), *range(1, 51)][:limit]


def test_limit_zero_still_gives_the_schema() -> None:
    lc = lifecycle(["a"])
    lc.limit = 0
    rl = lc.reader(FILE, Fifty())
    assert rl.open()
    first = rl.next()
    assert first is not None and (first.num_rows, first.num_columns) == (0, 1)
    assert rl.next() is None
    assert lc.at_limit()


# ------------------------------------------------------------------------- TestReaderErrors
def failing(step: str, user: bool) -> Callable[[], FormatReader]:
    class Failing(Mock):
        def fail(self) -> None:
            if user:
                raise UserError.data_read(f"Oops {step}", ["My custom context"])
            raise RuntimeError(f"Oops {step}")

        def open(self, negotiator: SchemaNegotiator) -> bool:
            negotiator.add_context("My custom context")
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

    def make() -> FormatReader:
        if step == "ctor":
            Failing().fail()
        return Failing()

    return make


@pytest.mark.parametrize("step", ["ctor", "open", "next", "close"])
@pytest.mark.parametrize("user", [False, True], ids=["plain", "user"])
def test_reader_errors_carry_reader_file_and_scan_context(step: str, user: bool) -> None:
    op = operator([failing(step, user)])
    with pytest.raises(UserError) as info:
        list(op)
    text = str(info.value)
    assert f"Oops {step}" in text
    assert "Scan context" in text and "File: /w/r0.csv" in text
    if user or step != "ctor":
        assert "My custom context" in text
    if user:
        assert info.value.__cause__ is None
    else:
        assert isinstance(info.value.__cause__, RuntimeError)


def test_close_failure_after_an_error_keeps_the_first_error() -> None:
    class Both(Mock):
        def next(self) -> bool:
            raise RuntimeError("Oops next")

        def close(self) -> None:
            raise RuntimeError("Oops close")

    with pytest.raises(UserError, match="Oops next"):
        list(operator([Both()]))


def test_strict_mode_warns_about_a_column_added_by_a_later_batch() -> None:
    class Growing(Mock):
        def next(self) -> bool:
            assert self.loader is not None
            if self.count == 1:
                self.loader.writer().add_column(parse_schema("z INT")["z"])
            return super().next()

    reader = Growing("a INT NOT NULL", [[(1,)], [(2, 7)]], early=False)
    op = operator([reader], mode="strict")
    out = list(op)
    assert [b.schema.names for b in out] == [["a"], ["a"]]
    assert rows_of(out) == [(1,), (2,)]
    assert len(op.warnings) == 1 and "`z`" in op.warnings[0]
