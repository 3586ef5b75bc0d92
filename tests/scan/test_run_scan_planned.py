"""``run_scan`` on the specs the real planner builds (discovery, provided schemas, implicit,
partition and hive columns), checked against the values the files were written with. The scans
run on the driver; the planner needs a session."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.scan import run_scan
from auger.sql.planning.columns import Requested
from auger.sql.planning.tables import plan_file_scan

NAMES = ["ann", "bob", "cy", "dee", "eve", "fay"]


def write(root: Path, fmt: str) -> None:
    """Two files a level apart, one in a ``region=eu`` directory."""
    (root / "2024").mkdir(parents=True)
    (root / "region=eu").mkdir()
    parts = [(root / "2024", [0, 1, 2]), (root / "region=eu", [3, 4, 5])]
    for i, (folder, ids) in enumerate(parts):
        rows = [{"id": k, "name": NAMES[k], "score": k * 1.5} for k in ids]
        path = folder / f"f{i}.{fmt}"
        if fmt == "json":
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        elif fmt == "csvh":
            path.write_text(
                "id,name,score\n" + "".join(f"{r['id']},{r['name']},{r['score']}\n" for r in rows)
            )
        else:
            pq.write_table(pa.Table.from_pylist(rows), path)


def requested(names: list[str] | None) -> Requested:
    req = Requested()
    if names is None:
        req.star = True
    else:
        for name in names:
            req.add(name)
    return req


def scan(session: Any, table: str, names: list[str] | None, limit: int | None = None) -> pa.Table:
    ref = session.catalog().resolve_table(["dfs", "data", table])
    options = session.options.snapshot()
    spec = plan_file_scan(ref, requested(names), options, True, limit).spec
    batches = list(run_scan(spec, batch_rows=2))
    assert all(0 < b.num_rows <= 2 for b in batches)
    assert all(f.nullable for b in batches for f in b.schema)
    return pa.Table.from_batches(batches, schema=batches[0].schema if batches else None)


def written(fmt: str, root: Path, k: int, name: str) -> Any:
    """What column ``name`` holds for the row of id ``k`` that :func:`write` wrote under
    ``root``: text gives strings (blank for a column no file has), JSON and Parquet the
    written types (NULL for a column no file has)."""
    folder, i = ("2024", 0) if k < 3 else ("region=eu", 1)
    path = root / folder / f"f{i}.{fmt}"
    row = {"id": k, "name": NAMES[k], "score": k * 1.5}
    if name in row:
        return str(row[name]) if fmt == "csvh" else row[name]
    return {
        "filename": path.name,
        "fqn": str(path),
        "suffix": fmt,
        "dir0": folder,
        "region": "eu" if k >= 3 else None,
        "nope": "" if fmt == "csvh" else None,
    }[name]


SELECTS: list[list[str] | None] = [
    None,
    ["name"],
    ["name", "filename", "dir0", "region", "nope"],
    ["fqn", "suffix", "score", "id"],
]


@pytest.mark.parametrize("fmt", ["json", "csvh", "parquet"])
@pytest.mark.parametrize("names", SELECTS, ids=["star", "one", "mixed", "implicit"])
@pytest.mark.parametrize("limit", [None, 3])
def test_planned_specs(
    session: Any, data_dir: Path, fmt: str, names: list[str] | None, limit: int | None
) -> None:
    table = f"planned_{fmt}_{uuid.uuid4().hex[:8]}"
    write(data_dir / table, fmt)
    out = scan(session, table, names, limit)
    if names is None:
        assert sorted(out.schema.names) == ["dir0", "id", "name", "region", "score"]
    else:
        assert out.schema.names == names
    want = [{n: written(fmt, data_dir / table, k, n) for n in out.schema.names} for k in range(6)]
    assert out.to_pylist() == want[: limit or 6]


def test_planned_spec_with_a_provided_schema(session: Any, data_dir: Path) -> None:
    table = f"planned_schema_{uuid.uuid4().hex[:8]}"
    write(data_dir / table, "csvh")
    session.execute(
        f"CREATE OR REPLACE SCHEMA (id INT, score DOUBLE, tag VARCHAR NOT NULL DEFAULT 'x') "
        f"FOR TABLE dfs.data.`{table}`"
    )
    for names in (None, ["tag", "id", "score"], ["name", "tag"]):
        out = scan(session, table, names)
        assert out.column("tag").to_pylist() == ["x"] * 6
        if names is not None and "name" in names:
            assert out.column("name").to_pylist() == NAMES
    out = scan(session, table, ["id", "score"])
    # the scan itself converts the text to the provided types (one implementation, which SQL
    # and a plain Spark read share)
    assert out.schema.field("id").type == pa.int32()
    assert out.column("id").to_pylist() == [0, 1, 2, 3, 4, 5]
    assert out.column("score").to_pylist() == [k * 1.5 for k in range(6)]
    result = session.execute(f"SELECT id, score FROM dfs.data.`{table}` ORDER BY id")
    assert [c.type.value for c in result.schema] == ["INT", "FLOAT8"]
    assert result.to_arrow().column("score").to_pylist() == [k * 1.5 for k in range(6)]
