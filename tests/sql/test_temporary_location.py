"""Where ``dfs.tmp`` writes is discoverable, and a private ``$AUGER_HOME`` keeps it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from auger.config import default_tmp_location
from auger.dbapi import Connection
from auger.engine import Engine

from .helpers import error, rows


def test_a_private_auger_home_holds_the_temporary_workspace(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AUGER_HOME", str(tmp_path / "home"))
    assert default_tmp_location() == str(tmp_path / "home" / "tmp")
    monkeypatch.delenv("AUGER_HOME")
    assert Path(default_tmp_location()).name.startswith("auger-")


def test_dfs_tmp_under_auger_home_is_written_read_listed_and_described(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "users.json").write_text('{"users": {}}')
    monkeypatch.setenv("AUGER_HOME", str(home))
    engine = Engine({})
    try:
        conn = Connection(engine.open_session("dana", admin=False))
        cur = conn.cursor()
        cur.execute("CREATE TABLE dfs.tmp.`kept` AS SELECT 1 AS x")
        assert (home / "tmp" / "kept").is_dir()
        assert rows(conn, "SELECT x FROM dfs.tmp.`kept`") == [(1,)]
        cur.execute("SHOW FILES IN dfs.tmp")
        assert "kept" in [r[0] for r in cur.fetchall()]
        assert any(str(home / "tmp") in text for _, text in cur.messages)
        cur.execute("DESCRIBE SCHEMA dfs.tmp")
        assert json.loads(cur.fetchall()[0][1])["location"] == str(home / "tmp")
        # the rest of the state directory stays out of reach
        msg = error(conn, f"SELECT * FROM dfs.root.`{home}/users.json`")
        assert msg.startswith("PERMISSION ERROR") and "state directory" in msg
        assert error(conn, f"SHOW FILES IN dfs.root.`{home}`").startswith("PERMISSION ERROR")
        conn.close()
    finally:
        engine.shutdown()
