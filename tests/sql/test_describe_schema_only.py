"""``DESCRIBE`` lists a table's schema without reading its values: columns whose files disagree
are listed (a query reading them still fails)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .helpers import error, rows


def test_describe_lists_a_table_whose_map_members_conflict(conn: Any, data_dir: Path) -> None:
    table = data_dir / "desc_conflict"
    table.mkdir()
    (table / "a.json").write_text('{"id": 1, "m": {"x": 1, "y": "a"}}\n')
    (table / "b.json").write_text('{"id": 2, "m": {"x": "text"}}\n')
    name = "dfs.data.`desc_conflict`"
    assert rows(conn, f"DESCRIBE {name}") == [("id", "BIGINT", "YES"), ("m", "MAP", "NO")]
    assert rows(conn, f"DESCRIBE {name} m") == [("m", "MAP", "NO")]
    # reading the values still meets the conflict
    assert error(conn, f"SELECT * FROM {name}").startswith(
        "DATA_READ ERROR: JSON column [m.x] changes type"
    )
    assert rows(conn, f"SELECT id FROM {name} ORDER BY id") == [(1,), (2,)]
