"""Writes the file system refuses: read-only, full, a loop of symbolic links.

CTAS, CTTAS, CREATE VIEW and CREATE/ALTER SCHEMA answer a DATA_WRITE error (RESOURCE when space
runs out) naming what was written, where, and why; nothing is left behind; and the session goes
on working (a small CTTAS and a SELECT right after succeed).

Read-only and full file systems are real mounts (a read-only bind mount, a 512 KiB tmpfs), so
these tests need the right to mount; where that is missing they are skipped, and
``tests/spark/test_write_errors.py`` covers the same rules by injecting the errors.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from auger.dbapi import Connection, Error
from auger.engine import Engine
from auger.errors import ErrorKind

ONE_ROW = "select 1 as a from (values(1))"
# About 15,000 rows of 1.5 KB: several MB as CSV, far more than the 512 KiB tmpfs holds.
BIG = (
    "select repeat(a.n_name, 200) || b.n_comment as s from cp.`tpch/nation.parquet` a, "
    "cp.`tpch/nation.parquet` b, cp.`tpch/nation.parquet` c"
)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=False)


def _can_mount(probe: Path) -> bool:
    probe.mkdir()
    ok = _run("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)).returncode == 0
    if ok:
        _run("umount", str(probe))
    return ok


@pytest.fixture
def mounts(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """``mount(name, size=None, read_only_copy_of=None)``: a tmpfs (full at ``size``) or a
    read-only bind mount of a directory; all unmounted afterwards."""
    if not _can_mount(tmp_path / "probe"):
        pytest.skip("mounting is not permitted here; test_write_errors.py injects the errors")
    made: list[Path] = []

    def mount(name: str, size: str | None = None, read_only_copy_of: Path | None = None) -> Path:
        target = tmp_path / name
        target.mkdir()
        if read_only_copy_of is not None:
            _run("mount", "--bind", str(read_only_copy_of), str(target))
            made.append(target)
            result = _run("mount", "-o", "remount,bind,ro", str(target))
        elif size is not None:
            result = _run("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target))
        else:
            result = _run("mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(target))
        assert result.returncode == 0, result.stderr
        if target not in made:
            made.append(target)
        return target

    yield mount
    for target in reversed(made):
        if _run("umount", str(target)).returncode != 0:
            _run("umount", "-l", str(target))


@pytest.fixture
def connect(spark: Any) -> Iterator[Callable[[dict[str, Path]], Connection]]:
    """A connection to an engine of its own (sharing the test SparkSession) whose workspaces
    are the given directories; ``tmp`` is the temporary workspace."""
    engines: list[Engine] = []

    def factory(workspaces: dict[str, Path]) -> Connection:
        spaces = {n: {"location": str(p), "writable": True} for n, p in workspaces.items()}
        eng = Engine({"storage": {"dfs": {"type": "file", "workspaces": spaces}}})
        engines.append(eng)
        return Connection(eng.open_session("tester"))

    yield factory
    for eng in engines:
        eng.shutdown()


def failure(conn: Connection, sql: str) -> Error:
    with pytest.raises(Error) as info:
        conn.cursor().execute(sql).fetchall()
    return info.value


def rows(conn: Connection, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in conn.cursor().execute(sql).fetchall()]


def listing(root: Path) -> list[str]:
    """Every entry below ``root`` (hidden ones included), relative, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            out.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(out)


def still_usable(conn: Connection) -> None:
    """A one-row temporary table, and reading it back, work right after the failure."""
    name = f"after_{uuid.uuid4().hex[:8]}"
    assert rows(conn, f"create temporary table {name} as {ONE_ROW}") == [("0_0", 1)]
    assert rows(conn, f"select count(*) from {name}") == [(1,)]


def fill(root: Path) -> None:
    """Take every free byte of the file system at ``root``."""
    with contextlib.suppress(OSError), open(root / "filler", "wb") as fh:
        while True:
            fh.write(b"\0" * 65536)
            fh.flush()


# ----------------------------------------------------------------------------- read-only
def test_ctas_on_a_read_only_file_system_is_a_data_write_error(
    mounts: Any, connect: Any, tmp_path: Path
) -> None:
    ro = mounts("ro")
    conn = connect({"tmp": tmp_path / "scratch", "ro": ro})
    for name in ("t", "x/y/t"):
        err = failure(conn, f"create table dfs.ro.`{name}` as {ONE_ROW}")
        assert err.kind is ErrorKind.DATA_WRITE
        assert err.summary == (
            f"DATA_WRITE ERROR: Cannot write table [{name}] to [{ro / name}]: "
            "the file system is read-only"
        )
    assert listing(ro) == []
    still_usable(conn)


def test_ctas_below_a_read_only_bind_mount_leaves_the_directory_as_it_was(
    mounts: Any, connect: Any, tmp_path: Path
) -> None:
    source = tmp_path / "source"
    (source / "existing").mkdir(parents=True)
    (source / "existing" / "a.csv").write_text("1\n")
    ro = mounts("ro", read_only_copy_of=source)
    conn = connect({"tmp": tmp_path / "scratch", "ro": ro})
    err = failure(conn, f"create table dfs.ro.`existing/t` as {ONE_ROW}")
    assert err.summary == (
        f"DATA_WRITE ERROR: Cannot write table [existing/t] to [{ro / 'existing' / 't'}]: "
        "the file system is read-only"
    )
    assert listing(source) == ["existing", "existing/a.csv"]
    still_usable(conn)


def test_cttas_in_a_read_only_temporary_workspace_is_a_data_write_error(
    mounts: Any, connect: Any
) -> None:
    ro = mounts("ro", size="64k")
    conn = connect({"tmp": ro})  # an engine checks at start that the workspace is writable
    assert _run("mount", "-o", "remount,ro", str(ro)).returncode == 0
    err = failure(conn, f"create temporary table t as {ONE_ROW}")
    assert err.kind is ErrorKind.DATA_WRITE
    assert err.summary == (
        f"DATA_WRITE ERROR: Cannot write temporary table [t] to [{ro / conn.session.id}]: "
        "the file system is read-only"
    )
    assert "SYSTEM" not in str(err)


def test_create_view_on_a_read_only_file_system_is_a_data_write_error(
    mounts: Any, connect: Any, tmp_path: Path
) -> None:
    ro = mounts("ro")
    conn = connect({"tmp": tmp_path / "scratch", "ro": ro})
    err = failure(conn, f"create view dfs.ro.v as {ONE_ROW}")
    assert err.kind is ErrorKind.DATA_WRITE
    assert err.summary == (
        f"DATA_WRITE ERROR: Cannot write view [v] to [{ro / 'v.view.drill'}]: "
        "the file system is read-only"
    )
    assert listing(ro) == []
    still_usable(conn)


def test_create_and_alter_schema_on_a_read_only_file_system_are_data_write_errors(
    mounts: Any, connect: Any, tmp_path: Path
) -> None:
    source = tmp_path / "source"
    (source / "t").mkdir(parents=True)
    (source / "t" / "a.csv").write_text("1\n")
    (source / "s").mkdir()
    (source / "s" / "a.csv").write_text("1\n")
    writer = connect({"tmp": tmp_path / "scratch", "src": source})
    rows(writer, "create schema (a int) for table dfs.src.s")
    before = listing(source)
    ro = mounts("ro", read_only_copy_of=source)
    conn = connect({"tmp": tmp_path / "scratch2", "ro": ro})
    err = failure(conn, "create schema (a int) for table dfs.ro.t")
    assert err.kind is ErrorKind.DATA_WRITE
    assert err.summary == (
        f"DATA_WRITE ERROR: Cannot write the schema of [dfs.ro.t] to [{ro / 't/.drill.schema'}]: "
        "the file system is read-only"
    )
    err = failure(conn, "alter schema for table dfs.ro.s add columns (b varchar)")
    assert err.summary == (
        f"DATA_WRITE ERROR: Cannot write the schema of [dfs.ro.s] to [{ro / 's/.drill.schema'}]: "
        "the file system is read-only"
    )
    assert listing(source) == before
    still_usable(conn)


# ----------------------------------------------------------------------------- full
def test_ctas_and_cttas_on_a_full_file_system_are_resource_errors_and_free_the_space(
    mounts: Any, connect: Any
) -> None:
    full = mounts("full", size="512k")
    conn = connect({"tmp": full})
    rows(conn, "alter session set `store.format` = 'csv'")
    err = failure(conn, f"create table dfs.tmp.big as {BIG}")
    assert err.kind is ErrorKind.RESOURCE
    assert err.summary == (
        f"RESOURCE ERROR: Cannot write table [big] to [{full / 'big'}]: no space left on device"
    )
    assert listing(full) == []
    err = failure(conn, f"create temporary table big as {BIG}")
    assert err.summary == (
        f"RESOURCE ERROR: Cannot write temporary table [big] to [{full / conn.session.id}]: "
        "no space left on device"
    )
    assert listing(full) == []
    # The failed tasks' files are closed, so their space is free again for a small table.
    still_usable(conn)


def test_create_view_and_schema_on_a_full_file_system_leave_no_temporary_file(
    mounts: Any, connect: Any, tmp_path: Path
) -> None:
    full = mounts("full", size="512k")
    (full / "t").mkdir()
    (full / "t" / "a.csv").write_text("1\n")
    fill(full)
    conn = connect({"tmp": tmp_path / "scratch", "full": full})
    err = failure(conn, f"create view dfs.full.v as {ONE_ROW}")
    assert err.kind is ErrorKind.RESOURCE
    assert err.summary == (
        f"RESOURCE ERROR: Cannot write view [v] to [{full / 'v.view.drill'}]: "
        "no space left on device"
    )
    err = failure(conn, "create schema (a int) for table dfs.full.t")
    assert err.kind is ErrorKind.RESOURCE
    assert listing(full) == ["filler", "t", "t/a.csv"]
    still_usable(conn)


# ----------------------------------------------------------------------------- symlink loop
def test_writes_into_a_symlink_loop_are_data_write_errors(connect: Any, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    os.symlink("b", ws / "a")
    os.symlink("a", ws / "b")
    conn = connect({"tmp": tmp_path / "scratch", "ws": ws})
    for sql, what, path in (
        (f"create table dfs.ws.`a/t` as {ONE_ROW}", "table [a/t]", ws / "a" / "t"),
        (f"create view dfs.ws.`a/v` as {ONE_ROW}", "view [a/v]", ws / "a" / "v.view.drill"),
    ):
        err = failure(conn, sql)
        assert err.kind is ErrorKind.DATA_WRITE
        assert err.summary == (
            f"DATA_WRITE ERROR: Cannot write {what} to [{path}]: "
            "the path runs into a loop of symbolic links"
        )
    assert sorted(os.listdir(ws)) == ["a", "b"]
    still_usable(conn)
