"""Implicit and partition columns (Drill's TestImplicitColumnResolver, TestFileDescrip,
TestImplicitColumnLoader, TestSchemaTrackerEarlyReaderSchema.shadowImplicit), plus auger's
``key=value`` partition columns."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest

from auger.errors import UserError
from auger.scan import ProjectionType, ScanSchemaTracker
from auger.scan.implicit import (
    FileDescrip,
    ImplicitKind,
    ImplicitOptions,
    implicit_values,
    max_partition_depth,
    partition_keys,
    resolve_implicit_columns,
)
from auger.types import ColumnMetadata, TupleSchema
from auger.types.schema_text import parse_schema


def S(text: str) -> TupleSchema:
    return parse_schema(text)


def resolve(
    projection: list[str],
    depth: int = 0,
    legacy: bool = True,
    provided: str | None = None,
    **kw: object,
) -> tuple[ScanSchemaTracker, TupleSchema]:
    t = ScanSchemaTracker.build(projection, provided_schema=S(provided) if provided else None)
    opts = ImplicitOptions.from_options(
        kw.get("options"),  # type: ignore[arg-type]
        max_partition_depth=depth,
        legacy_wildcard_expansion=legacy,
        partition_keys=kw.get("keys", ()),  # type: ignore[arg-type]
    )
    return t, resolve_implicit_columns(t, opts).schema


FILE_COLS = "VARCHAR NOT NULL"
DIR = "VARCHAR"


def test_no_implicit_columns() -> None:
    t, schema = resolve(["a", "b", "c"])
    assert schema.is_empty()
    assert t.reader_input_schema().names() == ["a", "b", "c"]


def test_file_columns_keep_projected_spelling() -> None:
    t, schema = resolve(["a", "fqn", "filEPath", "filename", "suffix"])
    assert schema == S(
        f"fqn {FILE_COLS}, filEPath {FILE_COLS}, filename {FILE_COLS}, suffix {FILE_COLS}"
    )
    assert t.reader_input_schema().names() == ["a"]
    assert t.output_schema().names() == ["a", "fqn", "filEPath", "filename", "suffix"]


def test_partition_column_selection() -> None:
    t, schema = resolve(["dir2", "DIR1", "dir0", "a"])
    assert schema == S(f"dir2 {DIR}, DIR1 {DIR}, dir0 {DIR}")
    assert t.reader_input_schema().names() == ["a"]


def test_two_digit_partition() -> None:
    _, schema = resolve(["a", "dir11"])
    assert schema.names() == ["dir11"]


@pytest.mark.parametrize(
    ("projection", "depth", "legacy", "expected"),
    [
        (["*"], 3, True, ["dir0", "dir1", "dir2"]),
        (["*"], 3, False, []),
        (["*", "filename", "suffix"], 2, True, ["dir0", "dir1", "filename", "suffix"]),
        (
            ["filename", "*", "suffix", "dir0"],
            3,
            True,
            ["filename", "dir1", "dir2", "suffix", "dir0"],
        ),
        (["*", "dir1"], 2, True, ["dir0", "dir1"]),
    ],
)
def test_wildcard_expansion(
    projection: list[str], depth: int, legacy: bool, expected: list[str]
) -> None:
    t, schema = resolve(projection, depth, legacy)
    assert schema.names() == expected
    assert all(c.is_nullable for c in schema if c.name.lower().startswith("dir"))
    if not legacy:
        assert t.internal_schema().is_empty()


def test_shadowed_names_are_table_columns() -> None:
    t, schema = resolve(["filename.a", "filepath[0]", "dir0.b", "dir1[0]", "suffix"])
    assert schema.names() == ["suffix"]
    assert t.reader_input_schema().names() == ["filename", "filepath", "dir0", "dir1"]


def test_labels_from_options() -> None:
    options = {
        "drill.exec.storage.implicit.suffix.column.label": "appendix",
        "drill.exec.storage.implicit.filename.column.label": "",
        "drill.exec.storage.file.partition.column.label": "level",
    }
    t, schema = resolve(["suffix", "appendix", "filename", "level0", "dir0"], options=options)
    assert schema.names() == ["appendix", "level0"]
    assert t.reader_input_schema().names() == ["suffix", "filename", "dir0"]


PROVIDED_IMPLICIT = (
    "a INT NOT NULL, "
    "myFqn VARCHAR NOT NULL PROPERTIES {'drill.implicit' = 'fqn'}, "
    "myFilePath VARCHAR PROPERTIES {'drill.implicit' = 'FILEPATH'}, "
    "myFileName VARCHAR NOT NULL PROPERTIES {'drill.implicit' = 'filename'}, "
    "mySuffix VARCHAR NOT NULL PROPERTIES {'drill.implicit' = 'suffix'}, "
    "myDir VARCHAR PROPERTIES {'drill.implicit' = 'dir0'}"
)


def test_provided_implicit_columns() -> None:
    t, schema = resolve(["*"], depth=1, provided=PROVIDED_IMPLICIT)
    assert schema.names() == ["myFqn", "myFilePath", "myFileName", "mySuffix", "myDir"]
    assert schema["myFilePath"].is_nullable and not schema["myFqn"].is_nullable
    assert t.reader_input_schema().names() == ["a"]


def test_provided_implicit_matches_project() -> None:
    provided = (
        "a INT, fqn VARCHAR NOT NULL PROPERTIES {'drill.implicit' = 'fqn'}, "
        "filePath VARCHAR NOT NULL PROPERTIES {'drill.implicit' = 'FILEPATH'}, "
        "dir0 VARCHAR PROPERTIES {'drill.implicit' = 'dir0'}"
    )
    _, schema = resolve(["*"], depth=1, provided=provided)
    assert schema.names() == ["fqn", "filePath", "dir0"]


@pytest.mark.parametrize(
    ("column", "message"),
    [
        ("myFqn INT PROPERTIES {'drill.implicit' = 'fqn'}", "wrong type"),
        ("myFqn VARCHAR ARRAY PROPERTIES {'drill.implicit' = 'fqn'}", "wrong type"),
        ("myDir INT PROPERTIES {'drill.implicit' = 'dir0'}", "wrong type"),
        ("myDir VARCHAR NOT NULL PROPERTIES {'drill.implicit' = 'dir0'}", "wrong type"),
        ("myCol VARCHAR PROPERTIES {'drill.implicit' = 'bogus'}", "undefined implicit column"),
        ("myLmt VARCHAR PROPERTIES {'drill.implicit' = 'lmt'}", "undefined implicit column type"),
    ],
)
def test_provided_implicit_errors(column: str, message: str) -> None:
    with pytest.raises(UserError) as info:
        resolve(["*"], provided=column)
    assert message in str(info.value)
    assert str(info.value).startswith("VALIDATION ERROR")


def test_implicit_only_projects_no_table_columns() -> None:
    t, schema = resolve(["fqn", "filename"])
    assert len(schema) == 2
    assert t.is_resolved()
    assert t.projection_type is ProjectionType.NONE
    assert t.projection_filter().is_empty()


def test_implicit_only_with_wildcard() -> None:
    t, schema = resolve(["fqn", "*", "filename"])
    assert len(schema) == 2
    assert t.is_resolved()
    assert t.projection_type is ProjectionType.ALL


def test_partitions_after_table_columns() -> None:
    t, schema = resolve(["*"], depth=2)
    assert schema.names() == ["dir0", "dir1"]
    t.apply_reader_schema(S("a INT, f BIGINT"))
    assert t.output_schema() == S("a INT, f BIGINT, dir0 VARCHAR, dir1 VARCHAR")
    t.apply_reader_schema(S("g VARCHAR"))
    assert t.output_schema().names() == ["a", "f", "g", "dir0", "dir1"]


def test_implicit_with_defined_schema() -> None:
    defined = S(
        "a INT, b BIGINT, c VARCHAR, "
        "filename VARCHAR NOT NULL PROPERTIES {'drill.implicit' = 'filename'}, "
        "filepath VARCHAR NOT NULL PROPERTIES {'drill.implicit' = 'filepath'}, "
        "dir0 VARCHAR PROPERTIES {'drill.implicit' = 'dir0'}, "
        "dir2 VARCHAR PROPERTIES {'drill.implicit' = 'dir2'}"
    )
    projection = ["a", "b", "c", "filename", "filepath", "dir0", "dir2"]
    t = ScanSchemaTracker.build(projection, defined_schema=defined)
    result = resolve_implicit_columns(t, ImplicitOptions())
    assert len(result.columns) == 4
    assert t.reader_input_schema().names() == ["a", "b", "c"]
    assert t.output_schema() == defined


def test_internal_columns() -> None:
    t = ScanSchemaTracker.build(["a", "lmt", "$project_metadata$", "rgi", "rgs", "rgl"])
    result = resolve_implicit_columns(t)
    assert any(c.marker.kind is ImplicitKind.PROJECT_METADATA for c in result.columns)
    assert result.schema == S(
        "lmt VARCHAR NOT NULL, `$project_metadata$` VARCHAR, rgi VARCHAR NOT NULL, "
        "rgs VARCHAR NOT NULL, rgl VARCHAR NOT NULL"
    )
    file = FileDescrip("/w/x/y/foo.csv", "/w", 123456789, (10, 10000, 5000))
    assert result.values(file) == ["123456789", None, "10", "10000", "5000"]
    empty = FileDescrip("/w/x/y/foo.csv", "/w", 123456789, empty=True)
    assert result.values(empty)[:2] == ["123456789", "false"]


def test_reader_column_shadowing_implicit_is_ignored() -> None:
    t = ScanSchemaTracker.build(["a", "fqn"])
    resolve_implicit_columns(t)
    t.apply_early_reader_schema(S("a INT NOT NULL, fqn BIGINT"))
    assert t.internal_schema() == S("a INT NOT NULL, fqn VARCHAR NOT NULL")
    assert not t.projection_filter().projection(S("fqn BIGINT")[0]).is_projected


# ---------------------------------------------------------------------------- values


def test_file_descrip_values() -> None:
    f = FileDescrip("file:/w/x/y/foo.csv", "file:/w")
    assert (f.fqn, f.filepath, f.filename, f.suffix) == (
        "/w/x/y/foo.csv",
        "/w/x/y",
        "foo.csv",
        "csv",
    )
    assert [f.partition(i) for i in range(3)] == ["x", "y", None]


@pytest.mark.parametrize(
    ("path", "root", "dirs"),
    [
        ("/a/b/foo.csv", None, []),
        ("/a/b/foo.csv", "/a/b", []),
        ("/a/b/c/foo.csv", "/a/b", ["c"]),
        ("/a/b/c/foo.csv", "/a/b/", ["c"]),
        ("hdfs://nn:8020/a/b/c/d/foo.csv", "hdfs://nn:8020/a", ["b", "c", "d"]),
    ],
)
def test_file_descrip_dirs(path: str, root: str | None, dirs: list[str]) -> None:
    assert list(FileDescrip(path, root).dirs) == dirs


@pytest.mark.parametrize("path", ["/a/foo.csv", "/d/foo.csv", "/a/bc/foo.csv"])
def test_file_outside_root(path: str) -> None:
    with pytest.raises(ValueError):
        FileDescrip(path, "/a/b")


@pytest.mark.parametrize(
    ("name", "suffix"), [("foo.csv", "csv"), ("foo", ""), ("a.tar.gz", "gz"), (".hidden", "hidden")]
)
def test_suffix(name: str, suffix: str) -> None:
    assert FileDescrip(f"/w/{name}").suffix == suffix


def test_implicit_values_helper() -> None:
    v = implicit_values("/w/x/y/foo.csv", "/w", modification_time=42)
    assert v == {
        "fqn": "/w/x/y/foo.csv",
        "filepath": "/w/x/y",
        "filename": "foo.csv",
        "suffix": "csv",
        "lmt": "42",
        "dir0": "x",
        "dir1": "y",
    }
    deeper = implicit_values("/w/x/foo.csv", "/w", options=ImplicitOptions(max_partition_depth=3))
    assert (deeper["dir0"], deeper["dir1"], deeper["dir2"]) == ("x", None, None)


def test_loader_arrays_full_row() -> None:
    projection = ["*", "fqn", "filepath", "filename", "suffix", "dir0", "dir1", "dir2"]
    t = ScanSchemaTracker.build(projection)
    result = resolve_implicit_columns(t, ImplicitOptions(max_partition_depth=3))
    arrays = result.arrays(FileDescrip("file:/w/x/y/foo.csv", "file:/w"), 2)
    rows = list(zip(*(a.to_pylist() for a in arrays)))
    assert rows == [("/w/x/y/foo.csv", "/w/x/y", "foo.csv", "csv", "x", "y", None)] * 2
    assert all(a.type == pa.string() for a in arrays)


def test_loader_single_column() -> None:
    t = ScanSchemaTracker.build(["a", "filename", "b"])
    result = resolve_implicit_columns(t)
    assert [a.to_pylist() for a in result.arrays(FileDescrip("/w/x/y/foo.csv", "/w"), 2)] == [
        ["foo.csv", "foo.csv"]
    ]


def test_no_implicit_for_empty_projection() -> None:
    t = ScanSchemaTracker.build([])
    assert resolve_implicit_columns(t).is_empty()


def test_selection_depth_and_keys() -> None:
    files = ["/t/year=2020/m=1/a.parquet", "/t/year=2021/b.parquet", "/t/c.parquet"]
    assert max_partition_depth(files, "/t") == 2
    assert partition_keys(files, "/t") == ["year", "m"]


# --------------------------------------------------------------- key=value partitions


def test_hive_partition_keys_with_wildcard() -> None:
    _, schema = resolve(["*"], depth=2, keys=("year", "m"))
    assert schema.names() == ["dir0", "dir1", "year", "m"]
    result = resolve_implicit_columns(
        ScanSchemaTracker.build(["*"]),
        ImplicitOptions(max_partition_depth=2, partition_keys=("year", "m")),
    )
    f1 = FileDescrip("/t/year=2020/m=1/a.parquet", "/t")
    f2 = FileDescrip("/t/year=2021/b.parquet", "/t")
    assert result.values(f1) == ["year=2020", "m=1", "2020", "1"]
    assert result.values(f2) == ["year=2021", None, "2021", None]


def test_hive_partition_key_projected_explicitly() -> None:
    t, schema = resolve(["a", "YEAR"], keys=("year",))
    assert schema == S("YEAR VARCHAR")
    assert t.reader_input_schema().names() == ["a"]


def test_hive_key_values_are_unescaped_and_null() -> None:
    f = FileDescrip("/t/city=New%20York/day=__HIVE_DEFAULT_PARTITION__/a.csv", "/t")
    assert f.partition_key("CITY") == "New York"
    assert f.partition_key("day") is None
    assert f.partition_key("other") is None
    assert implicit_values(f.path, "/t")["city"] == "New York"


def test_results_pickle() -> None:
    t = ScanSchemaTracker.build(["a", "filename", "dir0"])
    result = resolve_implicit_columns(t)
    back = pickle.loads(pickle.dumps(result))
    assert back == result
    assert back.columns[1].marker.kind is ImplicitKind.PARTITION
    assert isinstance(back.columns[0].column, ColumnMetadata)
