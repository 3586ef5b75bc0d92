"""Publishing raw-file cache parts: whole or not at all, whatever happens while writing."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.scan.cache import DISK_RESERVE, complete_parts, disk_room, entry_dir
from auger.scan.cache_build import PartWriter
from auger.scan.cache_typed import KEY_KIND, copy_name
from auger.scan.spec import FileSplit

SCHEMA = pa.schema([pa.field("a", pa.int64())])


def _batch(n: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(range(n), pa.int64())], schema=SCHEMA)


def _files(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("*") if p.is_file())


def test_two_builders_of_one_entry_leave_one_whole_part(tmp_path: Path) -> None:
    split = FileSplit("/data/f.csv", 100, 1.5)
    first, second = (
        PartWriter(str(tmp_path), split, SCHEMA),
        PartWriter(str(tmp_path), split, SCHEMA),
    )
    first.write(_batch(3))
    second.write(_batch(3))
    # while both write, no reader sees an entry
    assert complete_parts(entry_dir(str(tmp_path), split), 100) is None
    first.publish()
    second.publish()
    parts = complete_parts(entry_dir(str(tmp_path), split), 100)
    assert parts is not None and len(parts) == 1
    assert pq.read_table(parts[0].path).num_rows == 3
    assert _files(tmp_path) == ["r0-100.parquet"]  # no temporary file left


def test_abandoned_part_leaves_nothing(tmp_path: Path) -> None:
    split = FileSplit("/data/f.csv", 100, 1.5)
    part = PartWriter(str(tmp_path), split, SCHEMA)
    part.write(_batch(5))
    part.abandon()  # a LIMIT stopped the read, or the read failed
    assert _files(tmp_path) == []
    assert complete_parts(entry_dir(str(tmp_path), split), 100) is None


def test_unwritable_location_drops_the_part_not_the_read(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache's directory would be")
    split = FileSplit("/data/f.csv", 100, 1.5)
    part = PartWriter(str(blocked), split, SCHEMA)
    part.write(_batch(2))  # no error: the query goes on
    part.publish()
    assert part.failed
    assert complete_parts(entry_dir(str(blocked), split), 100) is None


def test_a_range_is_its_own_part(tmp_path: Path) -> None:
    whole = FileSplit("/data/big.csv", 300, 2.0)
    for start, size, length in ((0, 200, 200), (200, 100, -1)):
        piece = FileSplit(whole.path, size, whole.mtime, start, length)
        part = PartWriter(str(tmp_path), piece, SCHEMA, whole)
        part.write(_batch(1))
        part.publish()
    parts = complete_parts(entry_dir(str(tmp_path), whole), 300)
    assert parts is not None
    assert [os.path.basename(p.path) for p in parts] == ["r0-200.parquet", "r200-300.parquet"]


def test_a_headerless_batch_is_kept_by_position_then_the_rest() -> None:
    """Each kept position holds the row's field there (NULL past the row's end, or for a NULL
    row), the rest column the fields past them; also for a slice of a longer batch."""
    from auger.formats.text.positions import compact_name
    from auger.scan.cache import KEPT_POSITIONS, REST_COLUMN
    from auger.scan.cache_build import entry_batch

    kinds = pa.list_(pa.string())
    rows: list[list[str] | None] = [
        ["a", "b"],
        None,
        [],
        [str(n) for n in range(KEPT_POSITIONS + 3)],
        ["x"],
    ]
    schema = pa.schema(
        [
            *(pa.field(compact_name(n), pa.string()) for n in range(KEPT_POSITIONS)),
            pa.field(REST_COLUMN, kinds),
        ]
    )
    whole = pa.RecordBatch.from_arrays([pa.array([["z"], *rows], kinds)], ["columns"])
    for batch in (whole.slice(1), pa.RecordBatch.from_arrays([pa.array(rows, kinds)], ["columns"])):
        got = entry_batch(batch, schema).to_pylist()
        for row, kept in zip(rows, got, strict=True):
            fields = row or []
            for n in range(KEPT_POSITIONS):
                assert kept[compact_name(n)] == (fields[n] if n < len(fields) else None)
            assert kept[REST_COLUMN] == (None if row is None else fields[KEPT_POSITIONS:])
    # every row shorter than a position: that position is NULL throughout
    short = pa.RecordBatch.from_arrays([pa.array([["a"], ["b", "c"]], kinds)], ["columns"])
    kept = entry_batch(short, schema)
    assert kept.column(compact_name(1)).to_pylist() == [None, "c"]
    assert kept.column(compact_name(2)).null_count == 2


def test_a_part_lists_the_values_of_its_columns_of_few_values(tmp_path: Path) -> None:
    """Across row groups: a column of few short values is listed (NULL aside); one past
    FEW_VALUES values, or with a long value, is not; unreadable metadata lists nothing."""
    from auger.scan.cache_values import FEW_VALUES, VALUES_KEY, FewValues, few_values

    schema = pa.schema(
        [("few", pa.string()), ("many", pa.string()), ("long", pa.string()), ("n", pa.int64())]
    )
    values = FewValues(schema)
    for group in range(3):
        rows = FEW_VALUES // 2 + 1
        values.add(
            pa.table(
                {
                    "few": [None if i % 5 == 0 else f"c{i % 4}" for i in range(rows)],
                    "many": [f"m{group}-{i}" for i in range(rows)],  # 3 groups: past the limit
                    "long": ["x" * (10 if group < 2 else 100)] * rows,
                    "n": list(range(rows)),
                },
                schema=schema,
            )
        )
    assert few_values(values.metadata()) == {"few": frozenset({"c0", "c1", "c2", "c3"})}
    assert few_values({VALUES_KEY: "not json"}) == {}
    assert few_values({}) == {}
    # written into the part's footer with its rows
    split = FileSplit("/data/f.csv", 100, 1.5)
    part_schema = pa.schema([("few", pa.string())])
    writer = PartWriter(str(tmp_path), split, part_schema)
    writer.write(pa.RecordBatch.from_pydict({"few": ["a", "b", None, "a"]}, schema=part_schema))
    writer.publish()
    (path,) = [p for p in tmp_path.rglob("*.parquet")]
    footer = pq.read_metadata(path).metadata
    listed = {k.decode(): v.decode() for k, v in footer.items()}
    assert few_values(listed) == {"few": frozenset({"a", "b"})}


def test_a_part_gives_the_range_of_its_integers_and_map_members_of_few_values() -> None:
    """Across row groups: an integer column or a map's integer member (in a map in the map)
    whose values span at most FEW_VALUES integers has its range listed, NULLs and NULL maps
    aside; a wider one, a member of NULLs alone and a string are not; unreadable metadata lists
    nothing."""
    from auger.scan.cache_values import FEW_VALUES, RANGES_KEY, FewValues, few_ranges

    inner = pa.struct([("k", pa.int32())])
    member = pa.struct([("qty", pa.int64()), ("none", pa.int64()), ("n", inner)])
    schema = pa.schema([("q", pa.int64()), ("wide", pa.int64()), ("m", member), ("s", pa.string())])
    ranges = FewValues(schema)
    for group in range(3):
        ranges.add(
            pa.table(
                {
                    "q": [group * 10, None, 5],
                    "wide": [0, group * FEW_VALUES // 2, None],  # spans FEW_VALUES + 1
                    "m": [
                        {"qty": -group, "none": None, "n": {"k": 7}},
                        None,
                        {"qty": 3, "none": None, "n": None},
                    ],
                    "s": ["a", "b", "c"],
                },
                schema=schema,
            )
        )
    assert few_ranges(ranges.metadata()) == {
        ("q",): (0, 20),
        ("m", "qty"): (-2, 3),
        ("m", "n", "k"): (7, 7),
    }
    # the values under a NULL map do not count
    hidden = FewValues(pa.schema([("m", member)]))
    nulls = pa.array(
        [{"qty": 1000, "none": None, "n": None}, {"qty": 1, "none": 1, "n": None}], member
    )
    masked = pa.StructArray.from_arrays(
        nulls.flatten(), fields=list(member), mask=pa.array([True, False])
    )
    hidden.add(pa.table({"m": masked}))
    assert few_ranges(hidden.metadata())[("m", "qty")] == (1, 1)
    assert few_ranges({RANGES_KEY: "not json"}) == {}
    assert few_ranges({RANGES_KEY: '[["q", 1]]'}) == {}
    assert few_ranges({}) == {}


def test_a_part_keeps_dictionaries_for_columns_whose_values_repeat(tmp_path: Path) -> None:
    """The first row group chooses: a column of repeated values, one of NULLs alone and every
    member of a map or a list are written with a dictionary; a column of distinct values is
    written plain, in every row group, and reads back the same."""
    from auger.scan.cache_build import dictionary_columns

    rows = 1000
    schema = pa.schema(
        [
            ("few", pa.string()),
            ("ids", pa.string()),
            ("half", pa.int64()),
            ("none", pa.string()),
            ("m", pa.struct([("a", pa.int64()), ("b", pa.string())])),
            ("r", pa.list_(pa.string())),
        ]
    )

    def group(start: int) -> pa.Table:
        return pa.table(
            {
                "few": [f"c{i % 3}" for i in range(rows)],
                "ids": [f"id{start + i}" for i in range(rows)],
                "half": [i // 2 for i in range(rows)],  # each value twice: half are distinct
                "none": pa.nulls(rows, pa.string()),
                "m": [{"a": i, "b": f"b{i}"} for i in range(rows)],
                "r": [[f"x{i}"] for i in range(rows)],
            },
            schema=schema,
        )

    assert dictionary_columns(group(0)) == ["few", "half", "none", "m.a", "m.b", "r.list.element"]
    # no values to judge by: the dictionary, as before
    assert dictionary_columns(group(0).slice(0, 0)) == [
        "few",
        "ids",
        "half",
        "none",
        "m.a",
        "m.b",
        "r.list.element",
    ]
    split = FileSplit("/data/f.json", 100, 1.5)
    writer = PartWriter(str(tmp_path), split, schema)
    for start in (0, rows, 2 * rows):
        for batch in group(start).to_batches():
            writer.write(batch)
        writer._flush()  # a row group each
    writer.publish()
    (path,) = list(tmp_path.rglob("*.parquet"))
    meta = pq.read_metadata(path)
    assert meta.num_row_groups == 3
    for g in range(meta.num_row_groups):
        encodings = {
            meta.schema.column(i).path: meta.row_group(g).column(i).encodings
            for i in range(meta.num_columns)
        }
        dictionary = {p for p, e in encodings.items() if "RLE_DICTIONARY" in e}
        # with the key copy of the column of few values (auger.scan.cache_typed)
        key = copy_name("few", KEY_KIND)
        want = {"few", key, "half", "none", "m.a", "m.b", "r.list.element"}
        assert dictionary == want, encodings
    back = pq.read_table(path)
    assert back.column("ids").to_pylist() == [f"id{i}" for i in range(3 * rows)]
    assert back.column("few").to_pylist() == [f"c{i % 3}" for i in range(rows)] * 3


def test_a_column_of_a_few_big_values_among_small_ones_is_written_plain(tmp_path: Path) -> None:
    """Two values repeat over the rows, but one of them is 2 MB: more than a dictionary page
    holds, so the column is written plain, as a column of distinct values is; a column of
    the same repeats in small values keeps its dictionary. The part is compressed with LZ4
    (Parquet's LZ4_RAW) and reads back the same."""
    from auger.scan.cache_build import DICTIONARY_BYTES, dictionary_columns

    big = "x" * (2 * 1024 * 1024)
    assert len(big) > DICTIONARY_BYTES
    rows = 400
    table = pa.table(
        {
            "s": [big if i % 100 == 0 else "short" for i in range(rows)],
            "k": [f"k{i % 2}" for i in range(rows)],
            "b": pa.array([b"y" * len(big) if i % 100 == 0 else b"z" for i in range(rows)]),
        }
    )
    assert dictionary_columns(table) == ["k"]
    writer = PartWriter(str(tmp_path), FileSplit("/data/big.json", 100, 1.5), table.schema)
    for batch in table.to_batches():
        writer.write(batch)
    writer.publish()
    (path,) = list(tmp_path.rglob("*.parquet"))
    meta = pq.read_metadata(path)
    columns = {meta.schema.column(i).path: meta.row_group(0).column(i) for i in range(3)}
    assert "RLE_DICTIONARY" not in columns["s"].encodings
    assert "RLE_DICTIONARY" not in columns["b"].encodings
    assert "RLE_DICTIONARY" in columns["k"].encodings
    assert {c.compression for c in columns.values()} == {"LZ4"}
    assert pq.read_table(path).select(["s", "k", "b"]).equals(table)


def test_a_part_lists_its_columns_of_ascii_text(tmp_path: Path) -> None:
    """Across row groups: a column of ASCII text (NULLs aside), and one of NULLs alone, is
    listed; one with another character in any group is not, nor a number; unreadable metadata
    lists nothing. Written into the part's footer."""
    from auger.scan.cache_ascii import ASCII_KEY, AsciiColumns, ascii_columns

    schema = pa.schema(
        [("a", pa.string()), ("later", pa.string()), ("none", pa.string()), ("n", pa.int64())]
    )
    columns = AsciiColumns(schema)
    for group in range(3):
        columns.add(
            pa.table(
                {
                    "a": ["x", None, "~ \t"],
                    "later": ["y", "z", "ü" if group == 2 else "u"],
                    "none": pa.nulls(3, pa.string()),
                    "n": [1, 2, 3],
                },
                schema=schema,
            )
        )
    assert ascii_columns(columns.metadata()) == {"a", "none"}
    assert ascii_columns({ASCII_KEY: "not json"}) == frozenset()
    assert ascii_columns({ASCII_KEY: '{"a": 1}'}) == frozenset()
    assert ascii_columns({}) == frozenset()
    split = FileSplit("/data/f.json", 100, 1.5)
    part_schema = pa.schema([("a", pa.string()), ("b", pa.string())])
    writer = PartWriter(str(tmp_path), split, part_schema)
    writer.write(pa.RecordBatch.from_pydict({"a": ["p", "q"], "b": ["r", "ß"]}, schema=part_schema))
    writer.publish()
    (path,) = [p for p in tmp_path.rglob("*.parquet")]
    footer = {k.decode(): v.decode() for k, v in pq.read_metadata(path).metadata.items()}
    assert ascii_columns(footer) == {"a"}


def test_row_groups_are_sized_by_the_columns_holding_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A headerless file's positions past its fields (columns of NULLs alone) do not count
    towards a row group's bytes: they take no room in Parquet, and counting them cut the
    groups short."""
    import auger.scan.cache_build as cache_build

    monkeypatch.setattr(cache_build, "ROW_GROUP_BYTES", 64 * 1024)
    schema = pa.schema([(f"p{n}", pa.string()) for n in range(30)])
    values = pa.array([f"value{i:05d}" for i in range(1000)], pa.string())  # 14 KB
    kinds = pa.list_(pa.string())
    rows = pa.array([[v] for v in values.to_pylist()], kinds)
    split = FileSplit("/data/f.csv", 100, 1.5)
    part = PartWriter(str(tmp_path), split, schema)
    for _ in range(10):
        # the positions past the rows' one field, as the build makes them
        arrays = [values, *cache_build._positions(rows, list(range(1, 30)))]
        part.write(pa.RecordBatch.from_arrays(arrays, schema=schema))
    part.publish()
    (path,) = [p for p in tmp_path.rglob("*.parquet")]
    meta = pq.read_metadata(path)
    assert meta.num_rows == 10_000
    assert meta.num_row_groups == 2  # 5 batches of 14 KB of values each


@pytest.mark.parametrize(
    ("free", "room"),
    [
        (100 * 1024**3, 90 * 1024**3),  # a tenth of the free space stays free
        (DISK_RESERVE + 1000, 1000),  # and never less than the reserve
        (DISK_RESERVE // 2, 0),
    ],
)
def test_entries_leave_free_space_on_their_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, free: int, room: int
) -> None:
    """The cache is on without being asked for, so its entries never fill the disk they share
    with everything else; a location not made yet is measured on the disk it will be on."""
    import shutil

    asked: list[str] = []

    def usage(path: str) -> object:
        asked.append(path)
        return shutil._ntuple_diskusage(10 * free, 9 * free, free)  # type: ignore[attr-defined]

    monkeypatch.setattr(shutil, "disk_usage", usage)
    assert disk_room(str(tmp_path / "not" / "made")) == room
    assert asked == [str(tmp_path)]
    assert disk_room("s3a://bucket/cache") is None
