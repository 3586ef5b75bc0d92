"""Paths a query may reach: view names stay inside their workspace, and the server's own files
(users, profiles, state directory, config file) are denied to every statement, through the
DB-API of an embedded engine, for an admin and a non-admin session alike."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from auger.dbapi import Connection
from auger.engine import Engine

from .helpers import error, rows

pytestmark = pytest.mark.spark

ONE = "SELECT 1 AS a FROM (VALUES(1))"


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """``srv/`` holds a server's users file and profiles (not hidden, so a directory scan of
    ``srv`` would reach them); ``state/`` is AUGER_HOME; ``a/b/ws`` is a writable workspace two
    levels below ``tmp_path`` so ``../..`` stays inside the test's own directory."""
    paths = {
        "srv": tmp_path / "srv",
        "state": tmp_path / "state",
        "ws": tmp_path / "a" / "b" / "ws",
        "tmp": tmp_path / "dfs_tmp",
        "outside": tmp_path / "outside",
    }
    for p in paths.values():
        p.mkdir(parents=True)
    (paths["state"] / "inside").mkdir()
    (paths["state"] / "inside" / "t.json").write_text('{"a": 1}\n')
    paths["users"] = paths["srv"] / "users.json"
    paths["users"].write_text(json.dumps({"users": {"bob": {"password_hash": "scrypt$x"}}}))
    paths["profiles"] = paths["srv"] / "profiles"
    paths["profiles"].mkdir()
    (paths["profiles"] / "q.json").write_text('{"query": "secret"}\n')
    (paths["srv"] / "public.json").write_text('{"a": 1}\n')
    monkeypatch.setenv("AUGER_HOME", str(paths["state"]))
    config = tmp_path / "auger.toml"
    config.write_text(
        "\n".join(
            [
                "[storage.dfs.workspaces.tmp]",
                f"location = {json.dumps(str(paths['tmp']))}",
                "writable = true",
                "[storage.dfs.workspaces.ws]",
                f"location = {json.dumps(str(paths['ws']))}",
                "writable = true",
                "[storage.dfs.workspaces.srv]",
                f"location = {json.dumps(str(paths['srv']))}",
                "writable = true",
                "[storage.dfs.workspaces.inside]",
                f"location = {json.dumps(str(paths['state'] / 'inside'))}",
                "writable = true",
                "[server]",
                f"users_file = {json.dumps(str(paths['users']))}",
                f"profiles_dir = {json.dumps(str(paths['profiles']))}",
            ]
        )
        + "\n"
    )
    paths["config"] = config
    return paths


@pytest.fixture(params=[True, False], ids=["admin", "non_admin"])
def connect(request: pytest.FixtureRequest, spark: Any, layout: dict[str, Path]) -> Iterator[Any]:
    """Connections (each its own session) on an engine of the layout's config file."""
    engine = Engine(str(layout["config"]))
    made: list[Connection] = []

    def factory() -> Connection:
        conn = Connection(engine.open_session("bob", admin=request.param))
        made.append(conn)
        return conn

    yield factory
    for conn in made:
        conn.close()
    engine.shutdown()


# ------------------------------------------------------------------ views stay in the workspace
def test_view_names_with_dot_dot_are_refused(connect: Any, layout: dict[str, Path]) -> None:
    conn = connect()
    above = layout["ws"].parent.parent  # tmp_path/a
    for sql in (
        f"CREATE VIEW dfs.ws.`../../x` AS {ONE}",
        f"CREATE OR REPLACE VIEW dfs.ws.`../../x` AS {ONE}",
        f"CREATE VIEW IF NOT EXISTS dfs.ws.`../../x` AS {ONE}",
    ):
        msg = error(conn, sql)
        assert msg.startswith("PERMISSION ERROR: Path [../../x] is outside workspace [dfs.ws]")
    assert not (above / "x.view.drill").exists()

    victim = above / "victim.view.drill"
    victim.write_text("{}")
    msg = error(conn, "DROP VIEW dfs.ws.`../../victim`")
    assert msg.startswith("PERMISSION ERROR: Path [../../victim] is outside workspace [dfs.ws]")
    assert error(conn, "DROP VIEW IF EXISTS dfs.ws.`../../victim`").startswith("PERMISSION")
    assert error(conn, "SELECT * FROM dfs.ws.`../../victim`").startswith("PERMISSION")
    assert victim.exists()
    # a leading / is relative to the workspace: this names ws/<above>/victim, no such view
    msg = error(conn, f"DROP VIEW dfs.ws.`{above}/victim`")
    assert msg.startswith("VALIDATION ERROR: Unknown view")
    assert victim.exists()


def test_view_names_cannot_cross_into_another_workspace(
    connect: Any, layout: dict[str, Path]
) -> None:
    conn = connect()
    rel = os.path.relpath(layout["ws"], layout["tmp"])  # ../a/b/ws
    planted = layout["ws"] / "planted.view.drill"
    planted.write_text("{}")
    msg = error(conn, f"DROP VIEW dfs.tmp.`{rel}/planted`")
    assert msg.startswith(f"PERMISSION ERROR: Path [{rel}/planted] is outside workspace [dfs.tmp]")
    assert planted.exists()
    assert error(conn, f"CREATE VIEW dfs.tmp.`{rel}/made` AS {ONE}").startswith("PERMISSION")
    assert not (layout["ws"] / "made.view.drill").exists()


def test_view_paths_through_symlinks_out_are_refused(connect: Any, layout: dict[str, Path]) -> None:
    conn = connect()
    (layout["ws"] / "link").symlink_to(layout["outside"], target_is_directory=True)
    victim = layout["outside"] / "victim.view.drill"
    victim.write_text("{}")
    msg = error(conn, f"CREATE VIEW dfs.ws.`link/x` AS {ONE}")
    assert msg.startswith("PERMISSION ERROR: Path [link/x] is outside workspace [dfs.ws]")
    assert not (layout["outside"] / "x.view.drill").exists()
    assert error(conn, "DROP VIEW dfs.ws.`link/victim`").startswith("PERMISSION ERROR")
    assert victim.exists()

    # a view file that is itself a link out: not read, not dropped, not listed
    sneaky_target = layout["outside"] / "sneaky.view.drill"
    sneaky_target.write_text(json.dumps({"name": "sneaky", "sql": ONE, "fields": []}))
    (layout["ws"] / "sneaky.view.drill").symlink_to(sneaky_target)
    assert error(conn, "SELECT * FROM dfs.ws.sneaky").startswith("PERMISSION ERROR")
    assert error(conn, "DROP VIEW dfs.ws.sneaky").startswith("PERMISSION ERROR")
    assert sneaky_target.exists()
    listed = rows(conn, "SELECT TABLE_NAME FROM INFORMATION_SCHEMA.VIEWS")
    assert ("sneaky",) not in listed

    # views in a real sub-directory of the workspace keep working
    (layout["ws"] / "sub").mkdir()
    assert rows(conn, f"CREATE VIEW dfs.ws.`sub/v` AS {ONE}")[0][0] is True
    assert (layout["ws"] / "sub" / "v.view.drill").is_file()
    assert rows(conn, "SELECT a FROM dfs.ws.`sub/v`") == [(1,)]
    assert rows(conn, "DROP VIEW dfs.ws.`sub/v`")[0][0] is True
    assert not (layout["ws"] / "sub" / "v.view.drill").exists()


# ------------------------------------------------------------------ denied paths
def test_server_files_are_denied_to_select(connect: Any, layout: dict[str, Path]) -> None:
    conn = connect()
    cases = {
        str(layout["users"]): "the server's users file",
        str(layout["profiles"] / "q.json"): "the server's query profiles",
        str(layout["profiles"]): "the server's query profiles",
        str(layout["config"]): "the config file",
        str(layout["state"] / "inside" / "t.json"): "auger's state directory",
        str(layout["srv"]): "the server's",  # a scan of srv/ would read users.json
        f"{layout['srv']}/*.json": "the server's users file",
    }
    for path, what in cases.items():
        msg = error(conn, f"SELECT * FROM dfs.root.`{path}`")
        assert msg.startswith(f"PERMISSION ERROR: Path [{path}] reaches {what}"), msg
        assert "scrypt" not in msg and "secret" not in msg
    # the workspace is named, whichever one reaches the file
    msg = error(conn, "SELECT * FROM dfs.srv.`users.json`")
    assert "reaches the server's users file" in msg and "Workspace: dfs.srv" in msg
    # what is beside them stays readable
    assert rows(conn, f"SELECT a FROM dfs.root.`{layout['srv']}/public.json`") == [(1,)]


def test_symlinks_to_denied_paths_are_denied(connect: Any, layout: dict[str, Path]) -> None:
    conn = connect()
    (layout["ws"] / "u.json").symlink_to(layout["users"])
    (layout["ws"] / "state").symlink_to(layout["state"], target_is_directory=True)
    (layout["outside"] / "srv").symlink_to(layout["srv"], target_is_directory=True)
    assert error(conn, f"SELECT * FROM dfs.root.`{layout['ws']}/u.json`").startswith(
        "PERMISSION ERROR: Path ["
    )
    assert "users file" in error(conn, f"SELECT * FROM dfs.root.`{layout['ws']}/u.json`")
    assert "state directory" in error(conn, f"SELECT * FROM dfs.root.`{layout['ws']}/state`")
    msg = error(conn, f"SELECT * FROM dfs.root.`{layout['outside']}/srv/users.json`")
    assert "reaches the server's users file" in msg


def test_links_to_denied_files_inside_a_scanned_directory(
    connect: Any, layout: dict[str, Path]
) -> None:
    conn = connect()
    scanned = layout["ws"] / "logs"
    scanned.mkdir()
    (scanned / "a.json").write_text('{"a": 1}\n')
    (scanned / "b.json").symlink_to(layout["users"])
    for sql in ("SELECT * FROM dfs.ws.logs", "SELECT * FROM dfs.ws.`logs/*.json`"):
        msg = error(conn, sql)
        assert msg.startswith("PERMISSION ERROR: Path [logs") and "users file" in msg, msg
        assert "scrypt" not in msg
    (scanned / "b.json").unlink()
    (scanned / "b.json").symlink_to(scanned / "a.json")  # a link inside stays fine
    assert rows(conn, "SELECT a FROM dfs.ws.logs") == [(1,), (1,)]


def test_scans_skip_links_out_of_the_workspace(connect: Any, layout: dict[str, Path]) -> None:
    conn = connect()
    scanned = layout["ws"] / "mixed"
    scanned.mkdir()
    (scanned / "a.json").write_text('{"a": 1}\n')
    (layout["outside"] / "far.json").write_text('{"a": 2}\n')
    (scanned / "far.json").symlink_to(layout["outside"] / "far.json")
    for table in ("dfs.ws.mixed", "dfs.ws.`mixed/*.json`"):
        cur = conn.cursor()
        cur.execute(f"SELECT a FROM {table}")
        assert cur.fetchall() == [(1,)]
        skipped = [m for m in cur.warnings if "Skipped [mixed/far.json]" in m]
        assert skipped and "outside workspace [dfs.ws]" in skipped[0], cur.warnings
    # SHOW FILES lists the link as a link, with its own size
    listed = {r[0]: r for r in rows(conn, "SHOW FILES IN dfs.ws.mixed")}
    assert listed["far.json"][1:4] == (False, False, len(os.readlink(scanned / "far.json")))


def test_workspace_inside_the_state_directory_is_denied(
    connect: Any, layout: dict[str, Path]
) -> None:
    conn = connect()
    for sql in (
        "SELECT * FROM dfs.inside.`t.json`",
        "SHOW FILES IN dfs.inside",
        "DESCRIBE dfs.inside.`t.json`",
        f"CREATE TABLE dfs.inside.t2 AS {ONE}",
        f"CREATE VIEW dfs.inside.v AS {ONE}",
        "DROP TABLE dfs.inside.`t.json`",
        "SELECT * FROM table(dfs.inside.`t.json`(type => 'json'))",
    ):
        msg = error(conn, sql)
        assert msg.startswith("PERMISSION ERROR") and "state directory" in msg, (sql, msg)
    assert sorted(os.listdir(layout["state"] / "inside")) == ["t.json"]
    rows(conn, "USE dfs.inside")
    assert error(conn, "SHOW FILES").startswith("PERMISSION ERROR")
    for table in ("FILES", "TABLES", "VIEWS"):
        listed = rows(
            conn,
            f"SELECT COUNT(*) FROM INFORMATION_SCHEMA.`{table}` WHERE SCHEMA_NAME = 'dfs.inside'"
            if table == "FILES"
            else f"SELECT COUNT(*) FROM INFORMATION_SCHEMA.`{table}` "
            "WHERE TABLE_SCHEMA = 'dfs.inside'",
        )
        assert listed == [(0,)], table


def test_listings_leave_denied_paths_out(connect: Any, layout: dict[str, Path]) -> None:
    conn = connect()
    shown = {r[0] for r in rows(conn, f"SHOW FILES IN dfs.root.`{layout['srv']}`")}
    assert shown == {"public.json"}
    shown = {r[0] for r in rows(conn, "SHOW FILES IN dfs.srv")}
    assert shown == {"public.json"}
    files = rows(
        conn,
        "SELECT FILE_NAME FROM INFORMATION_SCHEMA.`FILES` WHERE SCHEMA_NAME = 'dfs.srv'",
    )
    assert {r[0] for r in files} == {"public.json"}
    tables = rows(
        conn, "SELECT TABLE_NAME FROM INFORMATION_SCHEMA.`TABLES` WHERE TABLE_SCHEMA = 'dfs.srv'"
    )
    assert {r[0] for r in tables} == {"public.json"}
    assert error(conn, "SHOW FILES IN dfs.srv.`profiles`").startswith("PERMISSION ERROR")


def test_writes_never_reach_denied_paths(connect: Any, layout: dict[str, Path]) -> None:
    conn = connect()
    msg = error(conn, "CREATE TABLE dfs.ws.stolen AS SELECT * FROM dfs.srv.`users.json`")
    assert msg.startswith("PERMISSION ERROR") and "users file" in msg
    assert not (layout["ws"] / "stolen").exists()
    msg = error(conn, f"CREATE TABLE dfs.srv.`profiles/t` AS {ONE}")
    assert msg.startswith("PERMISSION ERROR") and "query profiles" in msg
    assert error(conn, "DROP TABLE dfs.srv.`profiles`").startswith("PERMISSION ERROR")
    assert error(conn, "DROP TABLE dfs.srv.`users.json`").startswith("PERMISSION ERROR")
    assert layout["users"].exists() and (layout["profiles"] / "q.json").exists()
    assert not (layout["profiles"] / "t").exists()


def test_views_cannot_reach_denied_paths(connect: Any, layout: dict[str, Path]) -> None:
    conn = connect()
    msg = error(conn, f"CREATE VIEW dfs.ws.v AS SELECT * FROM dfs.root.`{layout['users']}`")
    assert msg.startswith("PERMISSION ERROR") and "users file" in msg
    assert not (layout["ws"] / "v.view.drill").exists()
    # a view file written by hand (or by an older auger) is checked when it is expanded
    planted = {
        "name": "planted",
        "sql": f"SELECT * FROM `dfs`.`root`.`{layout['users']}`",
        "fields": [{"name": "*", "type": "ANY", "isNullable": True}],
        "workspaceSchemaPath": [],
    }
    (layout["ws"] / "planted.view.drill").write_text(json.dumps(planted))
    msg = error(conn, "SELECT * FROM dfs.ws.planted")
    assert msg.startswith("PERMISSION ERROR") and "users file" in msg


def test_default_state_directory_is_denied_without_any_server_config(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "home"
    state.mkdir()
    (state / "users.json").write_text('{"users": {}}')
    monkeypatch.setenv("AUGER_HOME", str(state))
    engine = Engine(
        {
            "storage": {
                "dfs": {"workspaces": {"tmp": {"location": str(tmp_path / "t"), "writable": True}}}
            }
        }
    )
    try:
        conn = Connection(engine.open_session("carol", admin=False))
        msg = error(conn, f"SELECT * FROM dfs.root.`{state}/users.json`")
        assert msg.startswith("PERMISSION ERROR") and "state directory" in msg
        msg = error(conn, f"SHOW FILES IN dfs.root.`{state}`")
        assert msg.startswith("PERMISSION ERROR") and "state directory" in msg
        conn.close()
    finally:
        engine.shutdown()


def test_engine_denies_paths_a_server_adds(connect: Any, layout: dict[str, Path]) -> None:
    conn = connect()
    extra = layout["outside"] / "late.json"
    extra.write_text('{"a": 1}\n')
    assert rows(conn, f"SELECT a FROM dfs.root.`{extra}`") == [(1,)]
    conn.session.engine.deny_path(str(extra), "a file added later")
    msg = error(conn, f"SELECT a FROM dfs.root.`{extra}`")
    assert msg.startswith(f"PERMISSION ERROR: Path [{extra}] reaches a file added later")
