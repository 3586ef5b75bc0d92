"""Query directory functions (MAXDIR, IMAXDIR, MINDIR, IMINDIR) where and as Drill allows them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.sql.helpers import error, rows

#: each function and the directory it picks among smallfile, SMALLFILE_2, bigfile, BIGFILE_2
PICKS = {
    "MAXDIR": "smallfile",
    "IMAXDIR": "SMALLFILE_2",
    "MINDIR": "BIGFILE_2",
    "IMINDIR": "bigfile",
}

REFUSED = "Directory explorers [MAXDIR, IMAXDIR, MINDIR, IMINDIR] functions are not supported in"


@pytest.fixture
def folders(data_dir: Path) -> str:
    root = data_dir / "dirfn"
    for n, name in enumerate(PICKS.values()):
        (root / name).mkdir(parents=True, exist_ok=True)
        (root / name / "f.csv").write_text(f"{n},{name}\n")
    (root / ".hidden_zzz").mkdir(exist_ok=True)  # hidden: never a candidate
    return "dirfn"


@pytest.mark.parametrize("func", list(PICKS))
def test_each_function_picks_its_directory(conn: Any, folders: str, func: str) -> None:
    sql = (
        f"SELECT columns[1] AS c, dir0 FROM dfs.data.`{folders}/*/*.csv` "
        f"WHERE dir0 = {func}('dFs.DaTa', '{folders}')"
    )
    assert rows(conn, sql) == [(PICKS[func], PICKS[func])]


@pytest.mark.parametrize(
    ("template", "clause"),
    [
        ("SELECT {f} FROM {t}", "Select List"),
        ("SELECT concat(concat({f}, 'someName'), 'someName') FROM {t}", "Select List"),
        ("SELECT dir0 FROM {t} ORDER BY {f}", "Order By"),
        ("SELECT dir0 FROM {t} ORDER BY concat({f}, 'someName')", "Order By"),
        ("SELECT max(dir0) FROM {t} GROUP BY {f}", "Group By"),
        ("SELECT max(dir0) FROM {t} GROUP BY concat({f}, 'someName')", "Group By"),
    ],
)
def test_outside_a_filter_is_refused(conn: Any, folders: str, template: str, clause: str) -> None:
    for func in PICKS:
        sql = template.format(
            f=f"{func}('dfs.data', '{folders}')", t=f"dfs.data.`{folders}/*/*.csv`"
        )
        message = error(conn, sql)
        assert message.startswith("UNSUPPORTED_OPERATION ERROR: "), message
        assert f"{REFUSED} {clause}" in message
        assert "DRILL-3944" in message


def test_one_argument_form_looks_at_the_workspace_directory(
    conn: Any, folders: str, data_dir: Path
) -> None:
    """``MAXDIR('dfs.data')`` equals the two-argument form naming the workspace's directory."""
    subdirs = [p.name for p in data_dir.iterdir() if p.is_dir() and p.name[0] not in "._"]
    expected = {
        "MAXDIR": max(subdirs),
        "IMAXDIR": max(subdirs, key=str.lower),
        "MINDIR": min(subdirs),
        "IMINDIR": min(subdirs, key=str.lower),
    }
    for func, name in expected.items():
        sql = (
            f"SELECT 1 AS ok FROM (VALUES(1)) WHERE {func}('dfs.data') = "
            f"{func}('dfs.root', '{data_dir}') AND {func}('dfs.data') = '{name}'"
        )
        assert rows(conn, sql) == [(1,)], func
