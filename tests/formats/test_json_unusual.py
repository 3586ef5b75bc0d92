"""JSON inputs off the beaten path, read through SQL as Drill reads them.

Each test writes one small file and asserts Drill's answer: the rows, or the error kind and
the context that locates the fault (file and line), never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

PROJECTION_ERROR = (
    "VALIDATION ERROR: Reader column type not compatible with projection specification"
)


def rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in conn.cursor().execute(sql).fetchall()]


def error(conn: Any, sql: str) -> str:
    with pytest.raises(Exception) as info:
        conn.cursor().execute(sql).fetchall()
    return str(info.value)


def table(tmp_path: Path, name: str, data: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return f"dfs.`{path}`"


# ------------------------------------------------------------ columns of no known type yet


@pytest.mark.parametrize(
    "expr", ["t.a.b", "t.a[0]", "t.a.b.c", "t.a[0].b", "t.a.b[1]", "t.a[0][1]", "t.m.k.z"]
)
def test_column_null_in_every_row_used_as_map_or_array_is_null(
    conn: Any, tmp_path: Path, expr: str
) -> None:
    # Before: 'Reader column type not compatible' (a is INT because it was only ever null);
    # Drill's type for the column is not known yet, so the projection's use gives NULL.
    t = table(tmp_path, "n.json", '{"a": null, "x": 1, "m": {"k": null}}\n{"a": null, "x": 2}\n')
    assert rows(conn, f"SELECT {expr}, t.x FROM {t} t ORDER BY t.x") == [(None, 1), (None, 2)]


def test_null_column_used_as_map_in_where(conn: Any, tmp_path: Path) -> None:
    t = table(tmp_path, "n.json", '{"a": null, "x": 1}\n')
    assert rows(conn, f"SELECT t.x FROM {t} t WHERE t.a.b IS NULL") == [(1,)]


@pytest.mark.parametrize(
    ("expr", "projected", "column"),
    [
        ("t.b.c[0]", "c[]", "`c` BIGINT"),
        ("t.b.d[0]", "d[]", "`d` VARCHAR"),
        ("t.b.c.x", "c {x}", "`c` BIGINT"),
        ("t.l[0].x", "l[0] {x}", "`l` ARRAY<BIGINT>"),
    ],
)
def test_nested_member_used_against_its_type_is_drills_projection_error(
    conn: Any, tmp_path: Path, expr: str, projected: str, column: str
) -> None:
    # Before: t.b.c[0] leaked Spark's DATATYPE_MISMATCH about get(b.c, 0)
    t = table(tmp_path, "s.json", '{"b": {"c": 5, "d": "s"}, "l": [1, 2]}\n')
    msg = error(conn, f"SELECT {expr} FROM {t} t")
    assert PROJECTION_ERROR in msg
    assert f"Projected column: {projected}" in msg
    assert f"column: {column}" in msg
    assert "s.json" in msg


def test_nested_members_used_as_they_are_still_read(conn: Any, tmp_path: Path) -> None:
    t = table(tmp_path, "s.json", '{"b": {"c": 5, "l": [1, 2], "r": [{"q": 7}]}}\n')
    assert rows(conn, f"SELECT t.b.l[1], t.b.c, t.b.r[0].q FROM {t} t") == [(2, 5, 7)]
