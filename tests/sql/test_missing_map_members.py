"""A map member no file has reads as NULL, for Parquet as for JSON, beside the member it is
spelled like and a top-level column whose name holds a dot (Drill's
``TestParquetComplex.notxistsField``), and the statement says which member was not found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

NOTXISTS = (
    "select t.marketing_info.notexists as notexists1, t.marketing_info.camp_id as id, "
    "t.`marketing_info.camp_id` as notexists2 from {table} t"
)
RECORDS = [
    {"id": 1, "marketing_info": {"camp_id": 4, "keywords": ["go"]}},
    {"id": 2, "marketing_info": {"camp_id": 7, "keywords": []}},
]


@pytest.fixture(scope="module")
def tables(data_dir: Path) -> dict[str, str]:
    pq.write_table(pa.Table.from_pylist(RECORDS), data_dir / "mm_complex.parquet")
    (data_dir / "mm_complex.json").write_text("\n".join(json.dumps(r) for r in RECORDS) + "\n")
    return {
        "parquet": "dfs.data.`mm_complex.parquet`",
        "json": "dfs.data.`mm_complex.json`",
    }


@pytest.mark.parametrize("fmt", ["parquet", "json"])
def test_notxists_field(conn: Any, tables: dict[str, str], fmt: str) -> None:
    cur = conn.cursor()
    cur.execute(NOTXISTS.format(table=tables[fmt]))
    assert [d[0] for d in cur.description] == ["notexists1", "id", "notexists2"]
    assert sorted((tuple(r) for r in cur.fetchall()), key=lambda r: r[1]) == [
        (None, 4, None),
        (None, 7, None),
    ]


@pytest.mark.parametrize("fmt", ["parquet", "json"])
def test_a_missing_member_is_named_with_a_did_you_mean(
    conn: Any, tables: dict[str, str], fmt: str
) -> None:
    cur = conn.cursor()
    cur.execute(f"SELECT t.marketing_info.camp_idd AS c FROM {tables[fmt]} t")
    assert [tuple(r) for r in cur.fetchall()] == [(None,), (None,)]
    texts = [text for _, text in cur.messages]
    assert any(
        t.startswith("Column [marketing_info.camp_idd] was not found in the file of ")
        and t.endswith("did you mean [marketing_info.camp_id]?")
        for t in texts
    ), texts


def test_the_column_and_the_member_spelled_alike_are_two_paths() -> None:
    from auger.scan.plan import Requested

    req = Requested()
    req.add("marketing_info", "marketing_info.camp_id")
    req.add("marketing_info.camp_id")
    assert req.projection() == ("marketing_info.camp_id", "`marketing_info.camp_id`")
    req.add("marketing_info")  # the map whole wins over its member, not over the other column
    assert req.projection() == ("`marketing_info.camp_id`", "marketing_info")
