"""``run_scan_v2`` on the specs the real planner builds (discovery, provided schemas, implicit,
partition and hive columns), against ``simple.run_scan``. The scans run on the driver; the
planner needs a session, so these tests are Spark-marked."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.scan import run_scan_v2
from auger.scan.simple import run_scan
from auger.sql.columns import Requested
from auger.sql.planner import plan_file_scan

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


def compare(
    session: Any, table: str, names: list[str] | None, limit: int | None = None
) -> pa.Table | None:
    ref = session.resolve_table(["dfs", "data", table])
    options = session.options.snapshot()
    spec = plan_file_scan(ref, requested(names), options, True, limit).spec
    old = list(run_scan(spec, batch_rows=2))
    new = list(run_scan_v2(spec, batch_rows=2))
    assert all(b.num_rows <= 2 for b in new)
    old_t = pa.Table.from_batches(old) if old else None
    new_t = pa.Table.from_batches(new) if new else None
    assert (old_t is None) == (new_t is None)
    if old_t is not None and new_t is not None:
        assert new_t.schema == old_t.schema
        assert new_t.equals(old_t), f"{new_t.to_pylist()} != {old_t.to_pylist()}"
    return new_t


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
    table = f"v2_{fmt}_{uuid.uuid4().hex[:8]}"
    write(data_dir / table, fmt)
    compare(session, table, names, limit)


def test_planned_spec_with_a_provided_schema(session: Any, data_dir: Path) -> None:
    table = f"v2_schema_{uuid.uuid4().hex[:8]}"
    write(data_dir / table, "csvh")
    session.execute(
        f"CREATE OR REPLACE SCHEMA (id INT, score DOUBLE, tag VARCHAR NOT NULL DEFAULT 'x') "
        f"FOR TABLE dfs.data.`{table}`"
    )
    for names in (None, ["tag", "id", "score"], ["name", "tag"]):
        out = compare(session, table, names)
        assert out is not None and out.column("tag").to_pylist() == ["x"] * 6
    out = compare(session, table, ["id", "score"])
    assert out is not None and out.column("id").to_pylist() == ["0", "1", "2", "3", "4", "5"]
    # Over text the scan keeps the file's text; the planner applies Drill's conversions to the
    # provided types in the query itself, so the user sees INT and DOUBLE.
    result = session.execute(f"SELECT id, score FROM dfs.data.`{table}` ORDER BY id")
    assert [c.type.value for c in result.schema] == ["INT", "FLOAT8"]
    assert result.to_arrow().column("score").to_pylist() == [k * 1.5 for k in range(6)]
