"""A small whole-file scan read on the driver keeps its DataFrame for the next statement over
the same files: the same answer and scan figures, never a stale one once a file changes. The
kept frames are the engine's own: another engine of the process reads the file itself, and an
engine that shuts down keeps none."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from auger.dbapi import Connection
from auger.engine import Engine
from auger.spark import local_scan
from auger.spark.kept_frames import DERIVED_PER_FRAME, KeptFrames
from auger.spark.scan_report import TaskFacts
from tests.fakes import ViewFrame as _Frame
from tests.fakes import ViewSession as _Session
from tests.fakes import count_calls

SQL = "SELECT k, COUNT(*) AS n, SUM(v) AS s FROM dfs.`{path}` GROUP BY k ORDER BY k"


def _write(path: Path, rows: list[tuple[str, int]], mtime: float) -> None:
    path.write_text("".join(f'{{"k": "{k}", "v": {v}}}\n' for k, v in rows))
    os.utime(path, (mtime, mtime))


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the driver-side reads of whole files."""
    return count_calls(monkeypatch, local_scan, "_driver_read")


def test_a_second_statement_reuses_the_frame_and_reports_the_same(
    conn: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "kept.json"
    _write(path, [("a", 1), ("b", 2), ("a", 3)], 1_600_000_000)
    reads = _reads(monkeypatch)
    cur = conn.cursor()
    cur.execute(SQL.format(path=path))
    first = cur.fetchall()
    first_stats = cur.scan_statistics
    cur.execute(SQL.format(path=path))
    assert cur.fetchall() == first == [("a", 2, 4), ("b", 1, 2)]
    assert len(reads) == 1
    assert cur.scan_statistics == first_stats
    assert first_stats and first_stats[0]["rows_read"] == 3


def test_a_changed_file_is_read_again(
    conn: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "changing.json"
    _write(path, [("a", 1)], 1_600_000_000)
    reads = _reads(monkeypatch)
    cur = conn.cursor()
    cur.execute(SQL.format(path=path))
    assert cur.fetchall() == [("a", 1, 1)]
    # the same size, another modification time
    _write(path, [("b", 7)], 1_600_000_100)
    cur.execute(SQL.format(path=path))
    assert cur.fetchall() == [("b", 1, 7)]
    # another size, the same modification time
    _write(path, [("c", 10)], 1_600_000_100)
    cur.execute(SQL.format(path=path))
    assert cur.fetchall() == [("c", 1, 10)]
    assert len(reads) == 3


def test_turning_driver_reads_off_bypasses_kept_frames(
    conn: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "off.json"
    _write(path, [("a", 1)], 1_600_000_000)
    cur = conn.cursor()
    cur.execute(SQL.format(path=path))
    cur.fetchall()
    cur.execute("ALTER SESSION SET `auger.scan.local_bytes` = 0")
    try:
        cur.execute(SQL.format(path=path))
        frame = cur._result.dataframe
        assert "LocalRelation" not in frame._jdf.queryExecution().optimizedPlan().toString()
        assert cur.fetchall() == [("a", 1, 1)]
    finally:
        cur.execute("RESET `auger.scan.local_bytes`")


def test_a_read_that_skipped_records_is_not_kept(
    conn: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"k": "a", "v": 1}\n{"k": "b", "v": 2}\n{"k": \n')
    os.utime(path, (1_600_000_000, 1_600_000_000))
    reads = _reads(monkeypatch)
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET `store.json.reader.skip_invalid_records` = true")
    try:
        for _ in range(2):
            cur.execute(SQL.format(path=path))
            assert cur.fetchall() == [("a", 1, 1), ("b", 1, 2)]
            assert any("skip" in text.lower() for text in cur.warnings)
    finally:
        cur.execute("RESET `store.json.reader.skip_invalid_records`")
    assert len(reads) == 2


def test_kept_frames_are_bounded_and_owned_by_one_session() -> None:
    kept = KeptFrames(most_bytes=100)
    owner, other = object(), object()
    facts = TaskFacts(("f",), 1)
    kept.put(owner, "a", "frame a", facts, 40)
    kept.put(owner, "b", "frame b", facts, 40)
    assert kept.get(owner, "a") == ("frame a", facts)  # now the most recently used
    kept.put(owner, "c", "frame c", facts, 40)  # past the bound: "b" goes
    assert kept.get(owner, "b") is None
    assert kept.get(owner, "a") is not None and kept.get(owner, "c") is not None
    assert kept.nbytes == 80
    kept.put(owner, "huge", "frame", facts, 101)  # larger than the bound: not kept
    assert kept.get(owner, "huge") is None
    assert kept.get(other, "a") is None  # another session's frames are not its
    kept.put(other, "d", "frame d", facts, 10)  # and a new owner empties it
    assert kept.get(other, "a") is None and len(kept) == 1


def test_each_engine_keeps_its_own_frames_and_drops_them_on_shutdown(
    engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "per_engine.json"
    _write(path, [("a", 1), ("b", 2)], 1_600_000_000)
    reads = _reads(monkeypatch)
    sql = SQL.format(path=path)
    other = Engine({"spark": {"master": "local[2]"}})  # the same process, the same Spark
    try:
        with Connection(engine.open_session("tester")) as first:
            first.cursor().execute(sql)
        assert len(reads) == 1 and len(engine.kept_frames) >= 1
        assert len(other.kept_frames) == 0  # the shared engine's frame is not the other's
        with Connection(other.open_session("tester")) as second:
            cur = second.cursor()
            cur.execute(sql)
            assert cur.fetchall() == [("a", 1, 1), ("b", 1, 2)]
            assert len(reads) == 2  # read again: nothing kept by this engine yet
            cur.execute(sql)
            assert len(reads) == 2  # then kept by it
        assert len(other.kept_frames) == 1
    finally:
        other.shutdown()
    assert len(other.kept_frames) == 0 and other.kept_frames.nbytes == 0
    with Connection(engine.open_session("tester")) as again:
        again.cursor().execute(sql)
    assert len(reads) == 2  # the shared engine's frame outlived the other engine


def test_a_kept_view_outlives_its_frame_only_while_a_query_over_it_is_analysed() -> None:
    kept = KeptFrames(most_bytes=100)
    spark, facts = _Session(), TaskFacts(("f",), 1)
    a, b, plain = _Frame(), _Frame(), _Frame()
    kept.put(spark, "a", a, facts, 60, view=True)
    kept.put(spark, "plain", plain, facts, 10)  # kept without a view
    (view_a,) = a.views
    assert plain.views == []
    with kept.views_of({"t0": a, "t1": plain, "t2": _Frame()}) as views:
        assert views == {"t0": view_a}  # only kept frames with a view
        kept.put(spark, "b", b, facts, 60, view=True)  # "a" leaves while being analysed
        assert kept.get(spark, "a") is None
        assert spark.dropped == []
    assert spark.dropped == [view_a]  # dropped by the last statement that used it
    with kept.views_of({"t0": a}) as views:
        assert views == {}  # no longer kept: bound for the query as any frame
    kept.clear()  # the engine shuts down: its views go, Spark stays
    assert spark.dropped == [view_a, *b.views]


def test_a_statement_over_a_kept_frame_registers_no_view_of_its_own(
    engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # deferred: loads pyspark (heavy)
    from pyspark.sql.classic.dataframe import DataFrame

    path = tmp_path / "viewed.json"
    _write(path, [("a", 1), ("b", 2), ("a", 5)], 1_600_000_000)
    made: list[str] = []
    real = DataFrame.createOrReplaceTempView

    def counted(self: Any, name: str) -> None:
        made.append(name)
        real(self, name)

    monkeypatch.setattr(DataFrame, "createOrReplaceTempView", counted)
    other = Engine({"spark": {"master": "local[2]"}})
    try:
        with Connection(other.open_session("tester")) as conn:
            cur = conn.cursor()
            cur.execute(SQL.format(path=path))
            assert cur.fetchall() == [("a", 2, 6), ("b", 1, 2)]
            assert len(made) == 1  # the kept frame's view, made once
            for _ in range(2):
                cur.execute(SQL.format(path=path))
                assert cur.fetchall() == [("a", 2, 6), ("b", 1, 2)]
            assert len(made) == 1
            spark = other.spark
            assert made[0] in {t.name for t in spark.catalog.listTables()}
    finally:
        other.shutdown()
    assert made[0] not in {t.name for t in spark.catalog.listTables()}


def test_a_projection_of_a_kept_frame_is_kept_with_it() -> None:
    """A frame made of a kept frame is made once and found again by what it is, with a view
    of its own; a frame not kept gets a new one each time; the frames made of a kept frame
    are bounded, and leave (their views dropped) with it."""
    kept = KeptFrames(most_bytes=100)
    spark, facts = _Session(), TaskFacts(("f",), 1)
    parent, loose = _Frame(), _Frame()
    kept.put(spark, "p", parent, facts, 60, view=True)
    made: list[_Frame] = []

    def make() -> _Frame:
        made.append(_Frame())
        return made[-1]

    first = kept.derived(parent, "a, b", make)
    assert kept.derived(parent, "a, b", make) is first and made == [first]
    (view,) = first.views
    assert kept.view_names() == {*parent.views, view}
    with kept.views_of({"t0": first}) as views:
        assert views == {"t0": view}
    other = kept.derived(parent, "a", make)
    assert other is not first and len(made) == 2
    assert kept.derived(loose, "a, b", make) is not kept.derived(loose, "a, b", make)
    assert made[-1].views == [] and len(made) == 4  # not kept: made each time, no view
    for n in range(DERIVED_PER_FRAME - 1):  # "a, b" is the oldest: it goes past the bound
        kept.derived(parent, f"c{n}", make)
    assert spark.dropped == [view]
    assert kept.derived(parent, "a, b", make) is not first
    kept.put(spark, "q", _Frame(), facts, 60)  # past the bound: the parent leaves
    views_made = {v for f in made for v in f.views} - {view}
    assert set(spark.dropped) == {view, *parent.views, *views_made}
    assert kept.derived(parent, "a", make) is not other  # no longer kept
