"""Property: whatever the schema and limits, the harvested batches are exactly the saved rows."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auger.resultset import LoaderOptions, ResultSetLoader
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.arrow import schema_to_arrow

_SCALARS = {
    MinorType.INT: st.integers(-(2**31), 2**31 - 1),
    MinorType.BIGINT: st.integers(-(2**63), 2**63 - 1),
    MinorType.FLOAT8: st.floats(allow_nan=False, width=64),
    MinorType.BIT: st.booleans(),
    MinorType.VARCHAR: st.text(max_size=12),
}
_names = st.text(alphabet="abcdefghij", min_size=1, max_size=4)


@st.composite
def columns(draw: Any, depth: int = 0) -> ColumnMetadata:
    name = draw(_names)
    kinds = ["scalar", "scalar", "scalar"] + (["map", "map_array", "list"] if depth < 2 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "scalar":
        mode = draw(st.sampled_from(list(DataMode)))
        return ColumnMetadata(name, draw(st.sampled_from(list(_SCALARS))), mode)
    if kind == "list":
        element = ColumnMetadata(name, draw(st.sampled_from(list(_SCALARS))), DataMode.REPEATED)
        return ColumnMetadata(name, MinorType.LIST, DataMode.REPEATED, [element])
    members = draw(st.lists(columns(depth + 1), min_size=1, max_size=3, unique_by=_key))
    mode = DataMode.REQUIRED if kind == "map" else DataMode.REPEATED
    return ColumnMetadata(name, MinorType.MAP, mode, members)


def _key(col: ColumnMetadata) -> str:
    return col.name.lower()


def value_of(col: ColumnMetadata) -> st.SearchStrategy[Any]:
    """Values as they come back from ``to_pylist()``."""
    if col.type is MinorType.LIST:
        return st.lists(value_of(col.children[0]), max_size=3)  # type: ignore[index]
    if col.type is MinorType.MAP:
        one = st.fixed_dictionaries({c.name: value_of(c) for c in col.children or ()})
        return st.lists(one, max_size=3) if col.mode is DataMode.REPEATED else one
    scalar = _SCALARS[col.type]
    if col.mode is DataMode.REPEATED:
        return st.lists(scalar, max_size=4)
    if col.mode is DataMode.OPTIONAL:
        return st.none() | scalar
    return scalar


@st.composite
def cases(draw: Any) -> tuple[list[ColumnMetadata], list[list[Any]], list[bool], int, int]:
    schema = draw(st.lists(columns(), min_size=1, max_size=4, unique_by=_key))
    row = st.tuples(*(value_of(c) for c in schema)).map(list)
    rows = draw(st.lists(row, max_size=40))
    saved = draw(st.lists(st.booleans(), min_size=len(rows), max_size=len(rows)))
    row_limit = draw(st.integers(1, 16))
    vector_limit = draw(st.integers(2048, 8192))
    return schema, rows, saved, row_limit, vector_limit


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_harvested_batches_equal_saved_rows(
    case: tuple[list[ColumnMetadata], list[list[Any]], list[bool], int, int],
) -> None:
    schema, rows, saved, row_limit, vector_limit = case
    loader = ResultSetLoader(
        LoaderOptions(
            schema=TupleSchema(schema),
            row_limit=row_limit,
            vector_size_limit=vector_limit,
        )
    )
    writer = loader.writer()
    loader.start_batch()
    batches: list[pa.RecordBatch] = []
    expected: list[dict[str, Any]] = []
    for values, keep in zip(rows, saved):
        if writer.is_full():
            batches.append(loader.harvest())
            loader.start_batch()
        assert writer.start()
        for i, value in enumerate(values):
            writer.column(i).set(value)
        if keep:
            writer.save()
            expected.append({c.name: v for c, v in zip(schema, values)})
    batches.append(loader.harvest())
    while loader.has_look_ahead():
        loader.start_batch()
        batches.append(loader.harvest())
    got = [row for b in batches for row in b.to_pylist()]
    assert got == expected
    assert all(b.num_rows <= row_limit for b in batches)
    assert all(b.schema == schema_to_arrow(TupleSchema(schema)) for b in batches)


@settings(max_examples=60, deadline=None)
@given(
    # Every value fits an empty batch (64 bytes at the tightest limit): one that does not is the
    # loader's oversize error, tested on its own.
    st.lists(st.text(max_size=30).filter(lambda v: len(v.encode()) <= 64), max_size=200),
    st.integers(64, 600),
    st.integers(1, 50),
)
def test_strings_under_tight_vector_limits(values: list[str], limit: int, row_limit: int) -> None:
    loader = ResultSetLoader(
        LoaderOptions(schema="s VARCHAR NOT NULL", row_limit=row_limit, vector_size_limit=limit)
    )
    rows = loader.writer()
    loader.start_batch()
    batches = []
    for value in values:
        if rows.is_full():
            batches.append(loader.harvest())
            loader.start_batch()
        rows.add_row(value)
    batches.append(loader.harvest())
    while loader.has_look_ahead():
        loader.start_batch()
        batches.append(loader.harvest())
    assert [v for b in batches for v in b.column(0).to_pylist()] == values
    for b in batches:
        assert sum(len(v.encode()) for v in b.column(0).to_pylist()) <= limit
