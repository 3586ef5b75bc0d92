"""A scan read in the server process is chosen by what its files hold once decompressed, and
bounded while it reads: a small gzip file that expands far past ``auger.scan.local_bytes`` is
read by Spark's tasks, also when its gzip trailer understates its size."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from auger.storage.read_budget import BudgetExceeded, budget
from auger.storage.uncompressed import uncompressed_estimate

#: Decompressed size of the bomb: tens of megabytes from a file of tens of kilobytes.
BIG = 12_000_000


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bombs")
    line = b'{"a":"' + b"a" * BIG + b'"}\n'
    (root / "bomb.json.gz").write_bytes(gzip.compress(line))
    # two gzip members: the trailer records only the last, tiny one
    (root / "liar.json.gz").write_bytes(gzip.compress(line) + gzip.compress(b'{"a":"b"}\n'))
    (root / "small.json.gz").write_bytes(gzip.compress(b'{"a":"xyz"}\n' * 100))
    return root


def test_estimate_reads_what_the_file_records(bombs: Path) -> None:
    bomb = bombs / "bomb.json.gz"
    size = bomb.stat().st_size
    assert size < 100_000
    assert uncompressed_estimate(str(bomb), size) >= BIG
    plain = bombs / "plain.json"
    plain.write_text('{"a":1}\n')
    assert uncompressed_estimate(str(plain), 8) == 8


def test_budget_stops_a_read_past_it(bombs: Path) -> None:
    from auger.formats.base import open_input

    with (
        budget(1_000_000),
        open_input(str(bombs / "liar.json.gz")) as fh,
        pytest.raises(BudgetExceeded),
    ):
        while fh.read(1 << 16):
            pass


def _is_local(df: Any) -> bool:
    return "LocalRelation" in df._jdf.queryExecution().optimizedPlan().toString()


@pytest.mark.parametrize(("name", "rows"), [("bomb", 1), ("liar", 2)])
def test_a_gzip_bomb_is_read_by_spark(conn: Any, bombs: Path, name: str, rows: int) -> None:
    sql = f"SELECT COUNT(*) AS n, MAX(LENGTH(a)) AS m FROM dfs.`{bombs}/{name}.json.gz`"
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET `auger.scan.local_bytes` = 4000000")
    try:
        assert not _is_local(conn.session.execute(sql).frame())
        cur.execute(sql)
        assert cur.fetchall() == [(rows, BIG)]
        # a small honest file is still read here
        small = conn.session.execute(f"SELECT COUNT(*) FROM dfs.`{bombs}/small.json.gz`")
        assert _is_local(small.frame())
    finally:
        cur.execute("ALTER SESSION RESET `auger.scan.local_bytes`")


def test_schema_discovery_past_its_bound_goes_to_spark(
    conn: Any, bombs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from auger.spark import discovery

    monkeypatch.setattr(discovery, "DISCOVERY_BYTES", 1_000_000)  # the bomb holds 12 MB
    in_spark: list[list[str]] = []
    real = discovery._discover_in_spark

    def spy(spark: Any, paths: list[str], fmt: Any, options: Any) -> Any:
        in_spark.append(paths)
        return real(spark, paths, fmt, options)

    monkeypatch.setattr(discovery, "_discover_in_spark", spy)
    (bombs / "again.json.gz").write_bytes((bombs / "bomb.json.gz").read_bytes())
    cur = conn.cursor()
    cur.execute(f"SELECT MAX(LENGTH(a)) FROM dfs.`{bombs}/again.json.gz`")
    assert cur.fetchall() == [(BIG,)]
    assert in_spark == [[str(bombs / "again.json.gz")]]
