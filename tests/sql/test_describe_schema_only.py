"""``DESCRIBE`` lists a table's schema without reading its values: columns whose files disagree
are listed (a query reading them still fails), and each map with its own mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fastavro

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


def test_describe_gives_each_map_its_own_mode(conn: Any, data_dir: Path) -> None:
    record = {"type": "record", "name": "a", "fields": [{"name": "x", "type": "long"}]}
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "maybe", "type": ["null", record]},
            {"name": "always", "type": {**record, "name": "b"}},
        ],
    }
    rows_in = [
        {"id": 1, "maybe": None, "always": {"x": 1}},
        {"id": 2, "maybe": {"x": 2}, "always": {"x": 3}},
    ]
    with (data_dir / "desc_modes.avro").open("wb") as out:
        fastavro.writer(out, schema, rows_in)
    want = [("id", "BIGINT", "NO"), ("maybe", "MAP", "YES"), ("always", "MAP", "NO")]
    assert rows(conn, "DESCRIBE dfs.data.`desc_modes.avro`") == want
    # the same once the table's schema comes from the planner's cache
    assert rows(conn, "SELECT id FROM dfs.data.`desc_modes.avro` ORDER BY id") == [(1,), (2,)]
    assert rows(conn, "DESCRIBE dfs.data.`desc_modes.avro`") == want


def test_maps_keep_their_mode_when_spark_discovers_the_schema(conn: Any, data_dir: Path) -> None:
    """Past ``auger.scan.parallel_discovery_files`` a Spark job discovers the schema: its
    answer still says which maps may be null."""
    record = {"type": "record", "name": "a", "fields": [{"name": "x", "type": "long"}]}
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "maybe", "type": ["null", record]},
            {"name": "always", "type": {**record, "name": "b"}},
        ],
    }
    folder = data_dir / "desc_modes_many"
    folder.mkdir()
    for i in range(3):
        with (folder / f"p{i}.avro").open("wb") as out:
            fastavro.writer(out, schema, [{"maybe": None, "always": {"x": i}}])
    rows(conn, "ALTER SESSION SET `auger.scan.parallel_discovery_files` = 1")
    try:
        got = rows(conn, "DESCRIBE dfs.data.`desc_modes_many`")
    finally:
        rows(conn, "ALTER SESSION RESET `auger.scan.parallel_discovery_files`")
    assert got == [("maybe", "MAP", "YES"), ("always", "MAP", "NO")]
