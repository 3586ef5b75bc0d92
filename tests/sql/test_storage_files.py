"""Drill's file layouts: ``.view.drill`` and ``.drill.schema`` (no Spark needed)."""

from __future__ import annotations

import json
from pathlib import Path

from auger.config import PluginConfig, WorkspaceConfig
from auger.storage.schema_file import SchemaFile, read_schema_file, write_schema_file
from auger.storage.selection import select_files
from auger.storage.views import View, ViewField, find_view_file, read_view, write_view
from auger.storage.workspace import Workspace
from auger.types import TupleSchema
from auger.types.schema_text import parse_schema


def _workspace(location: Path) -> Workspace:
    return Workspace(PluginConfig("dfs", "file", {}, {}), WorkspaceConfig("w", str(location), True))


def test_view_file_round_trip_in_drills_layout(tmp_path: Path) -> None:
    view = View(
        "emp_6212",
        "SELECT CAST(`department_id` AS INTEGER) AS `f`\nFROM `cp`.`employee.json`",
        (ViewField("f", "INTEGER", True),),
        ("dfs", "tmp"),
    )
    path = write_view(_workspace(tmp_path), view)
    text = Path(path).read_text()
    assert text.startswith('{\n  "name" : "emp_6212",\n  "sql" : ')
    assert (
        '"fields" : [ {\n    "name" : "f",\n    "type" : "INTEGER",\n    "isNullable" : true\n  } ]'
        in text
    )
    assert '"workspaceSchemaPath" : [ "dfs", "tmp" ]' in text
    assert read_view(path) == view
    assert find_view_file(_workspace(tmp_path), "EMP_6212") == path


def test_legacy_view_without_nullability(tmp_path: Path) -> None:
    (tmp_path / "old.view.drill").write_text(
        json.dumps(
            {
                "name": "old",
                "sql": "SELECT *\nFROM `cp`.`store.json`",
                "fields": [{"name": "*", "type": "ANY"}],
                "workspaceSchemaPath": [],
            }
        )
    )
    view = read_view(str(tmp_path / "old.view.drill"))
    assert view.fields[0].nullable is True
    assert view.column_names == []


def test_schema_file_layout_and_round_trip(tmp_path: Path) -> None:
    cols = parse_schema(
        "id INT NOT NULL DEFAULT '-1', "
        "start_date DATE NOT NULL FORMAT 'yyyy-MM-dd' DEFAULT '2017-01-01', a ARRAY<INT>"
    )
    provided = SchemaFile(cols, {"drill.strict": "true"}, "dfs.tmp.`text_table`")
    path = tmp_path / ".drill.schema"
    write_schema_file(str(path), provided)
    raw = json.loads(path.read_text())
    assert list(raw) == ["table", "schema", "version"]
    assert raw["table"] == "dfs.tmp.`text_table`"
    assert raw["schema"]["columns"][0] == {
        "name": "id",
        "type": "INT",
        "mode": "REQUIRED",
        "properties": {"drill.default": "-1"},
    }
    assert raw["schema"]["columns"][2] == {"name": "a", "type": "ARRAY<INT>", "mode": "REPEATED"}
    assert raw["schema"]["properties"] == {"drill.strict": "true"}
    back = read_schema_file(str(path))
    assert back == provided and back.strict


def test_schema_statement_form() -> None:
    provided = SchemaFile(
        parse_schema("col_date DATE FORMAT 'yyyy-MM-dd', col_int INT NOT NULL"),
        {"drill.strict": "false"},
        "dfs.tmp.`t`",
    )
    assert provided.to_statement() == (
        "CREATE OR REPLACE SCHEMA \n(\n`col_date` DATE FORMAT 'yyyy-MM-dd', \n"
        "`col_int` INT NOT NULL\n) \nFOR TABLE dfs.tmp.`t` \nPROPERTIES (\n"
        "'drill.strict' = 'false'\n)\n"
    )
    empty = SchemaFile(TupleSchema(), {}, "dfs.tmp.`t`")
    assert empty.to_statement().startswith("CREATE OR REPLACE SCHEMA \n() \nFOR TABLE")


def test_selection_skips_drill_metadata_files(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("{}")
    (tmp_path / "v.view.drill").write_text("{}")
    (tmp_path / ".drill.schema").write_text("{}")
    got = [Path(f.path).name for f in select_files(str(tmp_path)).files]
    assert got == ["a.json"]
