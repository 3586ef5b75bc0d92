"""The bundled ``cp`` sample data is what ``scripts/make_sample_data.py`` writes.

The committed files must be reproducible from the script (so nobody hand-edits them), and
they must keep the shape that Drill's documentation and tests rely on: column names and
order, row counts and the first rows of ``employee.json``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import auger.data

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "make_sample_data.py"
DATA = Path(auger.data.__file__).resolve().parent

JSON_FILES = ("employee.json", "region.json")
PARQUET_FILES = ("tpch/nation.parquet", "tpch/region.parquet")

EMPLOYEE_COLUMNS = [
    "employee_id",
    "full_name",
    "first_name",
    "last_name",
    "position_id",
    "position_title",
    "store_id",
    "department_id",
    "birth_date",
    "hire_date",
    "salary",
    "supervisor_id",
    "education_level",
    "marital_status",
    "gender",
    "management_role",
]
REGION_COLUMNS = [
    "region_id",
    "sales_city",
    "sales_state_province",
    "sales_district",
    "sales_region",
    "sales_country",
    "sales_district_id",
]


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_sample_data", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the class body runs
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("sample-data")
    write_all: Callable[[Path], list[Path]] = _load_script().write_all
    write_all(target)
    return target


def _json_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("name", JSON_FILES)
def test_json_files_are_byte_identical_to_a_fresh_run(regenerated: Path, name: str) -> None:
    assert (regenerated / name).read_bytes() == (DATA / name).read_bytes()


@pytest.mark.parametrize("name", PARQUET_FILES)
def test_parquet_generation_is_deterministic(regenerated: Path, tmp_path: Path, name: str) -> None:
    # The footer names the writing pyarrow version, so bytes are compared between two runs of
    # this pyarrow; the committed files are compared by content below.
    write_all: Callable[[Path], list[Path]] = _load_script().write_all
    write_all(tmp_path)
    assert (tmp_path / name).read_bytes() == (regenerated / name).read_bytes()


@pytest.mark.parametrize("name", PARQUET_FILES)
def test_parquet_files_hold_the_same_data_as_a_fresh_run(regenerated: Path, name: str) -> None:
    fresh = pq.read_table(regenerated / name)
    committed = pq.read_table(DATA / name)
    assert committed.schema.equals(fresh.schema, check_metadata=True)
    assert committed.equals(fresh)


def test_employee_shape() -> None:
    rows = _json_lines(DATA / "employee.json")
    assert len(rows) == 1155
    for row in rows:
        assert list(row) == EMPLOYEE_COLUMNS
    ids = [row["employee_id"] for row in rows]
    assert len(set(ids)) == len(ids)
    assert all(isinstance(i, int) and i >= 1 for i in ids)
    assert [row["full_name"] for row in rows[:3]] == [
        "Sheri Nowmer",
        "Derrick Whelply",
        "Michael Spence",
    ]


def test_employee_values_follow_drill_formats() -> None:
    rows = _json_lines(DATA / "employee.json")
    first = rows[0]
    assert first["employee_id"] == 1
    assert first["position_title"] == "President"
    assert first["hire_date"] == "1994-12-01 00:00:00.0"
    assert first["salary"] == 80000.0
    ids = {row["employee_id"] for row in rows}
    for row in rows:
        assert row["full_name"] == f"{row['first_name']} {row['last_name']}"
        assert isinstance(row["salary"], float)
        assert len(row["birth_date"]) == 10 and row["birth_date"][4] == "-"
        assert row["hire_date"].endswith(" 00:00:00.0")
        assert row["marital_status"] in {"S", "M"}
        assert row["gender"] in {"F", "M"}
        # every supervisor is an employee, except the president's 0
        assert row["supervisor_id"] in ids or row["employee_id"] == 1


def test_employee_salary_is_written_as_a_json_float() -> None:
    first_line = (DATA / "employee.json").read_text(encoding="utf-8").splitlines()[0]
    assert '"salary":80000.0,' in first_line


def test_region_shape() -> None:
    rows = _json_lines(DATA / "region.json")
    assert 100 <= len(rows) <= 120
    for row in rows:
        assert list(row) == REGION_COLUMNS
    assert rows[0]["region_id"] == 0
    assert rows[0]["sales_city"] == "None"
    ids = [row["region_id"] for row in rows]
    assert len(set(ids)) == len(ids)


def test_tpch_nation() -> None:
    table = pq.read_table(DATA / "tpch" / "nation.parquet")
    assert table.num_rows == 25
    assert table.schema.names == ["n_nationkey", "n_name", "n_regionkey", "n_comment"]
    assert [f.type for f in table.schema] == [pa.int32(), pa.string(), pa.int32(), pa.string()]
    nations = table.to_pylist()
    assert nations[0]["n_name"] == "ALGERIA" and nations[0]["n_regionkey"] == 0
    assert nations[1]["n_name"] == "ARGENTINA" and nations[1]["n_regionkey"] == 1
    assert nations[24]["n_name"] == "UNITED STATES" and nations[24]["n_regionkey"] == 1
    assert [n["n_nationkey"] for n in nations] == list(range(25))


def test_tpch_region() -> None:
    table = pq.read_table(DATA / "tpch" / "region.parquet")
    assert table.num_rows == 5
    assert table.schema.names == ["r_regionkey", "r_name", "r_comment"]
    assert [f.type for f in table.schema] == [pa.int32(), pa.string(), pa.string()]
    assert table.column("r_name").to_pylist() == [
        "AFRICA",
        "AMERICA",
        "ASIA",
        "EUROPE",
        "MIDDLE EAST",
    ]
    assert table.column("r_regionkey").to_pylist() == [0, 1, 2, 3, 4]
