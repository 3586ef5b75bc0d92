"""Drill's Parquet metadata cache without Spark: the files ``REFRESH TABLE METADATA`` writes,
and planning from them with no footer read while they are valid (an S3 prefix's in
tests/storage/test_s3_metadata_cache.py)."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.errors import UserError
from auger.formats.parquet import clear_footers, planning_footer
from auger.formats.parquet_metadata import (
    DIRECTORIES_FILE,
    FILES_FILE,
    SUMMARY_FILE,
    refresh_metadata,
    use_metadata_cache,
)
from auger.storage.selection import select_files


def _table(tmp_path: Path) -> Path:
    root = tmp_path / "orders"
    for year, n in (("1994", 3), ("1995", 2)):
        (root / year).mkdir(parents=True)
        for i in range(n):
            pq.write_table(
                pa.table(
                    {
                        "id": pa.array([i, i + 10, None], pa.int32()),
                        "name": ["a", "b", f"z{i}"],
                        "m": [{"x": 1.5}, {"x": None}, None],
                    }
                ),
                root / year / f"part{i}.parquet",
            )
    return root


def _json(path: Path) -> dict:  # type: ignore[type-arg]
    return json.loads(path.read_text())


def test_refresh_writes_drills_files_in_every_directory(tmp_path: Path) -> None:
    root = _table(tmp_path)
    (root / ".drill.parquet_metadata").write_text("{}")  # a version-3 file: replaced
    assert refresh_metadata(str(root), None) == 5
    assert not (root / ".drill.parquet_metadata").exists()
    summary = _json(root / SUMMARY_FILE)
    assert summary["metadata_version"] == "4.2"
    assert summary["totalRowCount"] == 15
    assert summary["allColumnsInteresting"] is True
    assert sorted(summary["directories"]) == ["1994", "1995"]
    assert _json(root / DIRECTORIES_FILE) == {"directories": sorted(summary["directories"])}
    types = summary["columnTypeInfo"]
    assert types["`id`"]["primitiveType"] == "INT32"
    assert types["`id`"]["totalNullCount"] == 5
    assert types["`name`"]["originalType"] == "UTF8"
    assert types["`m`.`x`"]["name"] == ["m", "x"]
    files = _json(root / FILES_FILE)["files"]
    assert sorted(f["path"] for f in files) == [
        "1994/part0.parquet",
        "1994/part1.parquet",
        "1994/part2.parquet",
        "1995/part0.parquet",
        "1995/part1.parquet",
    ]
    first = next(f for f in files if f["path"] == "1994/part1.parquet")
    assert first["length"] == (root / "1994" / "part1.parquet").stat().st_size
    (group,) = first["rowGroups"]
    assert group["rowCount"] == 3
    stats = {tuple(c["name"]): c for c in group["columns"]}
    assert stats[("id",)]["minValue"] == 1 and stats[("id",)]["maxValue"] == 11
    assert stats[("id",)]["nulls"] == 1
    # binary statistics are base64, as Drill's cache holds them
    assert base64.b64decode(stats[("name",)]["maxValue"]) == b"z1"
    # each sub-directory has its own cache, of its own files
    inner = _json(root / "1995" / FILES_FILE)["files"]
    assert sorted(f["path"] for f in inner) == ["part0.parquet", "part1.parquet"]
    assert _json(root / "1995" / SUMMARY_FILE)["totalRowCount"] == 6


def test_columns_list_keeps_only_those_statistics(tmp_path: Path) -> None:
    root = _table(tmp_path)
    refresh_metadata(str(root), ["ID", "m"])
    summary = _json(root / SUMMARY_FILE)
    assert summary["allColumnsInteresting"] is False
    interesting = {k: v["isInteresting"] for k, v in summary["columnTypeInfo"].items()}
    assert interesting == {"`id`": True, "`name`": False, "`m`.`x`": True}
    group = _json(root / FILES_FILE)["files"][0]["rowGroups"][0]
    assert [c["name"] for c in group["columns"]] == [["id"], ["m", "x"]]
    refresh_metadata(str(root), [])  # COLUMNS NONE
    group = _json(root / FILES_FILE)["files"][0]["rowGroups"][0]
    assert group["columns"] == []


def test_a_valid_cache_plans_without_reading_a_footer(
    tmp_path: Path, footer_reads: list[str]
) -> None:
    root = _table(tmp_path)
    refresh_metadata(str(root), None)
    expected = {
        f.path: planning_footer(f.path, f.size, f.mtime) for f in select_files(str(root)).files
    }
    clear_footers()
    footer_reads.clear()
    selection = select_files(str(root))
    assert use_metadata_cache(selection)
    for f in selection.files:
        assert planning_footer(f.path, f.size, f.mtime) == expected[f.path]
    assert footer_reads == []
    # footers planning keeps already: the cache files are not even read
    assert not use_metadata_cache(selection)


def test_a_changed_directory_is_planned_from_its_files(
    tmp_path: Path, footer_reads: list[str]
) -> None:
    root = _table(tmp_path)
    refresh_metadata(str(root), None)
    clear_footers()
    pq.write_table(pa.table({"id": pa.array([7], pa.int32())}), root / "1995" / "late.parquet")
    assert not use_metadata_cache(select_files(str(root)))
    # a file rewritten in place, of the same name
    refresh_metadata(str(root), None)
    clear_footers()
    target = root / "1994" / "part0.parquet"
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64())}), target)
    os.utime(target, (1, target.stat().st_mtime + 5))
    assert not use_metadata_cache(select_files(str(root)))
    # Drill's rule: a directory modified after the summary was written
    refresh_metadata(str(root), None)
    clear_footers()
    later = (root / SUMMARY_FILE).stat().st_mtime + 10
    os.utime(root / "1994", (later, later))
    assert not use_metadata_cache(select_files(str(root)))
    footer_reads.clear()
    selection = select_files(str(root))
    schemas = [planning_footer(f.path, f.size, f.mtime) for f in selection.files]
    assert len(schemas) == 6 and len(footer_reads) == 6


@pytest.mark.parametrize(
    "content",
    ["", "{not json", '{"metadata_version": "99.1"}', '{"metadata_version": "3.3"}'],
)
def test_an_unreadable_or_foreign_cache_is_passed_over(tmp_path: Path, content: str) -> None:
    root = _table(tmp_path)
    refresh_metadata(str(root), None)
    clear_footers()
    (root / SUMMARY_FILE).write_text(content)
    assert not use_metadata_cache(select_files(str(root)))


def test_a_cache_without_footers_is_passed_over(tmp_path: Path) -> None:
    root = _table(tmp_path)
    refresh_metadata(str(root), None)
    clear_footers()
    listed = _json(root / FILES_FILE)
    for f in listed["files"]:
        f.pop("augerFooter")  # as Drill writes it
    (root / FILES_FILE).write_text(json.dumps(listed))
    os.utime(root / SUMMARY_FILE)
    assert not use_metadata_cache(select_files(str(root)))


def test_refresh_names_a_file_that_is_not_parquet(tmp_path: Path) -> None:
    root = _table(tmp_path)
    (root / "1995" / "notes.parquet").write_text("not parquet")
    with pytest.raises(UserError) as err:
        refresh_metadata(str(root), None)
    assert "notes.parquet" in " ".join(err.value.context)
