"""The one scan-planning function, without Spark: files of one format, implicit and partition
columns under their session labels, missing columns, and conflicts checked only where read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from auger.config import FormatConfig, PluginConfig
from auger.errors import ErrorKind, UserError
from auger.formats.conflicts import defer_conflict
from auger.scan.plan import Requested, ScanTable, discover_table, plan_scan
from auger.scan.spec import ColumnSource
from auger.storage.selection import FileSelection, FileStatus
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.schema_text import parse_schema

CSV = FormatConfig("csv", "text", ("csv",), {"extract_header": True})
JSON = FormatConfig("json", "json", ("json",))
FORMATS = PluginConfig("dfs", "file", {}, {"csv": CSV, "json": JSON})


def selection(*names: str) -> FileSelection:
    return FileSelection("/t", tuple(FileStatus(f"/t/{n}", 1, 0.0) for n in names), True)


def discovered(schema: TupleSchema) -> Any:
    def discover(sel: FileSelection, fmt: FormatConfig, options: Mapping[str, Any]) -> TupleSchema:
        return schema

    return discover


def table(fmt: FormatConfig, schema: TupleSchema, *names: str) -> ScanTable:
    options = {"store.table.use_schema_file": False}
    sel = selection(*names)
    return discover_table(sel, fmt, options, discovered(schema), FORMATS.format_for, "t", "/t")


def requested(*paths: str, star: bool = False) -> Requested:
    req = Requested(star=star)
    for p in paths:
        req.add(p.split(".", 1)[0].split("[", 1)[0], p)
    return req


def test_two_known_formats_are_an_error_naming_both() -> None:
    with pytest.raises(UserError) as info:
        table(JSON, TupleSchema(), "a.json", "b.csv", "README")
    assert info.value.kind is ErrorKind.VALIDATION
    assert "json (a.json)" in info.value.message and "csv (b.csv)" in info.value.message


def test_files_of_no_known_format_are_passed_over_or_all_read() -> None:
    found = table(JSON, TupleSchema(), "a.json", "README")
    assert [f.path for f in found.selection.files] == ["/t/a.json"]
    # a format named for files of another extension reads them all
    found = table(JSON, TupleSchema(), "x.dat", "y.dat")
    assert len(found.selection.files) == 2


def test_implicit_partition_and_missing_columns() -> None:
    schema = TupleSchema([ColumnMetadata("a", MinorType.BIGINT, DataMode.OPTIONAL)])
    found = table(JSON, schema, "a.json", "2024/b.json")
    options = {"drill.exec.storage.implicit.filename.column.label": "fname"}
    planned = plan_scan(found, requested("a", "fname", "filename", "dir0", "nope"), options)
    sources = planned.spec.sources
    assert sources["fname"] == ColumnSource.FILENAME
    assert sources["filename"] == ColumnSource.MISSING  # relabelled: now an ordinary name
    assert sources["dir0"] == "dir0"
    assert planned.missing == ("filename", "nope")
    nope = planned.schema.column("nope")
    assert nope is not None and (nope.type, nope.mode) == (MinorType.INT, DataMode.OPTIONAL)


def test_a_text_column_the_files_lack_is_blank_text() -> None:
    schema = TupleSchema([ColumnMetadata("region", MinorType.VARCHAR)])
    planned = plan_scan(table(CSV, schema, "a.csv"), requested("regoin"), {})
    col = planned.schema.column("regoin")
    assert col is not None and (col.type, col.mode) == (MinorType.VARCHAR, DataMode.REQUIRED)


def test_a_conflict_fails_only_a_scan_that_reads_the_column() -> None:
    bad = defer_conflict(
        ColumnMetadata("c", MinorType.BIGINT, DataMode.OPTIONAL),
        UserError.data_read("Column [c] has type VARCHAR in one file and BIGINT in another"),
    )
    schema = TupleSchema([ColumnMetadata("id", MinorType.BIGINT, DataMode.OPTIONAL), bad])
    found = table(JSON, schema, "a.json", "b.json")
    assert plan_scan(found, requested("id"), {}).schema.names() == ["id"]
    for req in (requested("c"), requested(star=True)):
        with pytest.raises(UserError) as info:
            plan_scan(found, req, {})
        assert info.value.kind is ErrorKind.DATA_READ and "[c]" in info.value.message


def S(text: str) -> TupleSchema:
    return parse_schema(text)


def test_map_members_resolve_as_the_tracker_projects_them() -> None:
    found = table(JSON, S("id BIGINT, m STRUCT<a BIGINT, b VARCHAR>"), "a.json")
    # the members the query reads, and one no file has as Drill's nullable INT
    planned = plan_scan(found, requested("id", "m.a", "m.zz"), {})
    assert planned.schema == S("id BIGINT, m STRUCT<a BIGINT, zz INT> NOT NULL")
    assert planned.missing == ()
    # read whole, the map is the files' own
    planned = plan_scan(found, requested("m", "m.a"), {})
    assert planned.schema == S("m STRUCT<a BIGINT, b VARCHAR> NOT NULL")
    # under a wildcard too, though the query names a member beside it
    planned = plan_scan(found, requested("m.zz", star=True), {})
    assert planned.schema == S("id BIGINT, m STRUCT<a BIGINT, b VARCHAR> NOT NULL")


def test_missing_columns_take_their_shape_from_the_projection() -> None:
    found = table(JSON, S("id BIGINT"), "a.json")
    planned = plan_scan(found, requested("id", "n.x", "c[1]"), {})
    assert planned.schema == S("id BIGINT, n STRUCT<x INT> NOT NULL, c INT ARRAY")
    assert planned.missing == ("n", "c")
    assert planned.spec.sources["n"] == planned.spec.sources["c"] == ColumnSource.MISSING
    # a table that cannot have them (a join's other table) leaves them out
    planned = plan_scan(found, requested("id", "n.x"), {}, allow_missing=False)
    assert planned.schema.names() == ["id"]


def test_a_column_used_against_its_type_is_refused_only_when_the_request_is_exact() -> None:
    found = table(JSON, S("id BIGINT, s VARCHAR"), "a.json")
    with pytest.raises(UserError) as info:
        plan_scan(found, requested("s[0]"), {}, check_types=True)
    assert "not compatible with projection" in info.value.message
    assert "File: /t" in info.value.context
    # the coarse request of a join may name another table's column: read it whole
    planned = plan_scan(found, requested("s[0]"), {})
    assert planned.schema == S("s VARCHAR")


def test_implicit_columns_override_table_columns_and_partitions_follow_the_data() -> None:
    found = table(JSON, S("filename VARCHAR, id BIGINT"), "a.json", "2024/b.json")
    planned = plan_scan(found, requested(star=True), {})
    assert planned.schema.names() == ["id", "dir0"]
    planned = plan_scan(found, requested("filename", "id"), {})
    assert planned.spec.sources["filename"] == ColumnSource.FILENAME


def test_names_holding_dots_brackets_or_spaces_are_one_column() -> None:
    schema = S("`a.b` BIGINT, `c[0]` VARCHAR, ` d` BIGINT, m STRUCT<x BIGINT>")
    found = table(JSON, schema, "a.json")
    req = Requested()
    for name in ("a.b", "c[0]", " d"):
        req.add(name, name)
    req.add("m", "m.x")
    planned = plan_scan(found, req, {}, check_types=True)
    assert planned.schema.names() == ["a.b", "c[0]", " d", "m"]
    assert planned.missing == ()
