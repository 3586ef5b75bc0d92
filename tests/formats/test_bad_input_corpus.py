"""Every malformed or odd file of the corpus (``bad_input``) through the DB-API.

Each table is queried with ``SELECT *`` and ``SELECT COUNT(*)`` on one shared connection: the
answer is the rows the generator wrote, or a ``UserError`` of the expected (never SYSTEM) kind
whose message or context names the file; and the connection still answers afterwards. A
SYSTEM error here is a bug in the reader that let it through.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from auger.dbapi import Connection, Error
from auger.errors import ErrorKind

from .bad_input import Case, cases, counted_together, write_corpus

pytestmark = pytest.mark.spark

CASES = cases()


@pytest.fixture(scope="module")
def shared(engine: Any, data_dir: Path) -> Iterator[Connection]:
    """One connection for the whole corpus, over the corpus written under ``dfs.data``."""
    write_corpus(data_dir / "corpus", CASES)
    conn = Connection(engine.open_session("corpus"))
    yield conn
    conn.close()


def _key(row: Any) -> str:
    return repr(tuple(row))


def _table(case: Case) -> str:
    return f"dfs.data.`corpus/{case.table}`"


def _failure(conn: Connection, sql: str) -> Error:
    with pytest.raises(Error) as info:
        conn.cursor().execute(sql).fetchall()
    return info.value


@pytest.fixture(scope="module")
def counts(shared: Connection) -> dict[str, int]:
    """``COUNT(*)`` of the tables in each ``ok`` directory, per file, one statement per
    directory: a Spark job per table costs a second or more on a small machine."""
    out: dict[str, int] = {}
    for directory, members in counted_together(CASES).items():
        sql = f"SELECT filename, COUNT(*) FROM dfs.data.`corpus/{directory}` GROUP BY filename"
        per_file = dict(shared.cursor().execute(sql).fetchall())
        for case in members:
            out[case.name] = per_file.pop(os.path.basename(case.table), 0)
        assert not per_file, per_file  # no file the corpus did not make
    return out


def test_corpus_is_big_enough() -> None:
    files = {f for c in CASES for f in (*c.files, *c.links)}
    assert len(files) >= 100
    formats = {f.split(".")[-1] for f in files}
    assert {"csv", "tsv", "psv", "csvh", "json", "parquet"} <= formats
    assert {"gz", "bz2", "zst", "deflate", "snappy", "lz4", "zip"} <= formats


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input(shared: Connection, counts: dict[str, int], case: Case) -> None:
    # ``SELECT * ... LIMIT`` is answered from the driver's read, the same scan the executors
    # run (no Spark job); the corpus's tables are far below the limit
    star = f"SELECT * FROM {_table(case)} LIMIT 10000"
    count = f"SELECT COUNT(*) FROM {_table(case)}"
    if case.rows is not None:
        got = shared.cursor().execute(star).fetchall()
        assert sorted(map(_key, got)) == sorted(map(_key, case.rows))
        if case.name in counts:
            assert counts[case.name] == len(case.rows)
        else:
            assert shared.cursor().execute(count).fetchall() == [(len(case.rows),)]
    else:
        for sql in (star, count):
            err = _failure(shared, sql)
            assert err.kind not in (ErrorKind.SYSTEM, ErrorKind.INTERNAL), str(err)
            assert err.kind is case.error, str(err)
            assert case.must_name in str(err), str(err)
    # the connection still answers
    assert shared.cursor().execute("SELECT 1 + 1").fetchall() == [(2,)]
