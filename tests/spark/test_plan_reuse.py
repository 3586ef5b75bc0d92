"""A statement repeated over small files runs the DataFrame planned for it before: the same
answer, figures and metrics; never over a changed file, never for a plan whose values change
per statement (the current time, random numbers), never after a run that did not give the
whole answer, and never by two statements at once."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from auger.spark.kept_frames import KeptFrames
from auger.spark.plan_reuse import ReusedPlans, ran
from auger.spark.plan_tree import PlanNode, physical_tree
from auger.spark.scan_report import TaskFacts
from tests.fakes import ViewFrame as _Frame
from tests.fakes import ViewSession as _Session

SQL = "SELECT k, COUNT(*) AS n, SUM(v) AS s FROM dfs.`{path}` GROUP BY k ORDER BY k"


def _write(path: Path, rows: list[tuple[str, int]], mtime: float) -> None:
    path.write_text("".join(f'{{"k": "{k}", "v": {v}}}\n' for k, v in rows))
    os.utime(path, (mtime, mtime))


def _frame(cur: Any) -> Any:
    return cur._result.dataframe


def _ready(engine: Any, frame: Any) -> bool:
    """Whether the engine keeps ``frame`` as a plan the next statement may run."""
    plans = engine.kept_frames.plans._plans.values()
    return any(p.frame is frame and p.reusable and not p.taken for p in plans)


def _scan_rows(node: PlanNode | None) -> list[int | None]:
    if node is None:
        return []
    own = [node.rows] if node.name == "LocalTableScan" else []
    return own + [r for c in node.children for r in _scan_rows(c)]


def test_a_repeated_statement_runs_its_plan_again_with_the_same_answer(
    engine: Any, conn: Any, tmp_path: Path
) -> None:
    path = tmp_path / "repeated.json"
    _write(path, [("a", 1), ("b", 2), ("a", 3)], 1_600_000_000)
    sql = SQL.format(path=path)
    cur = conn.cursor()
    cur.execute(sql)
    first = _frame(cur)
    assert not _ready(engine, first)  # not before a run gave the whole answer
    assert cur.fetchall() == [("a", 2, 4), ("b", 1, 2)]
    stats = cur.scan_statistics
    assert _ready(engine, first)
    cur.execute(sql)
    assert _frame(cur) is first and not _ready(engine, first)  # taken by this statement
    assert cur.fetchall() == [("a", 2, 4), ("b", 1, 2)]
    assert cur.scan_statistics == stats and stats[0]["rows_read"] == 3
    # read as a stream (the REST API's and Flight SQL's path) too, its metrics counted afresh
    for _ in range(2):
        cur.execute(sql)
        assert _frame(cur) is first
        assert list(cur) == [("a", 2, 4), ("b", 1, 2)]
        assert _scan_rows(physical_tree(first)) == [3]
    assert _ready(engine, first)
    # other text over the same file: a plan of its own
    cur.execute(sql.replace("ORDER BY k", "ORDER BY k DESC"))
    assert _frame(cur) is not first
    assert cur.fetchall() == [("b", 1, 2), ("a", 2, 4)]


def test_a_changed_file_is_planned_again(conn: Any, tmp_path: Path) -> None:
    path = tmp_path / "changing.json"
    _write(path, [("a", 1)], 1_600_000_000)
    sql = SQL.format(path=path)
    cur = conn.cursor()
    cur.execute(sql)
    first = _frame(cur)
    assert cur.fetchall() == [("a", 1, 1)]
    with path.open("a") as out:  # an appended line, counted by the next statement
        out.write('{"k": "a", "v": 5}\n')
    os.utime(path, (1_600_000_000, 1_600_000_000))
    cur.execute(sql)
    assert _frame(cur) is not first
    assert cur.fetchall() == [("a", 2, 6)]


@pytest.mark.parametrize(
    "select",
    [
        "SELECT k, RAND() AS r FROM dfs.`{path}`",
        "SELECT k, CURRENT_TIMESTAMP AS t FROM dfs.`{path}`",
        "SELECT k, NOW() AS t FROM dfs.`{path}`",
        "SELECT k FROM dfs.`{path}` WHERE k IN "
        "(SELECT k FROM dfs.`{path}` WHERE CURRENT_DATE > DATE '2000-01-01')",
    ],
)
def test_a_plan_whose_values_change_per_statement_is_planned_each_time(
    engine: Any, conn: Any, tmp_path: Path, select: str
) -> None:
    path = tmp_path / "values.json"
    _write(path, [("a", 1), ("b", 2)], 1_600_000_000)
    sql = select.format(path=path)
    cur = conn.cursor()
    answers, frames = [], []
    for _ in range(2):
        cur.execute(sql)
        frames.append(_frame(cur))
        answers.append(cur.fetchall())
        assert not _ready(engine, frames[-1])
    assert frames[0] is not frames[1]
    if "RAND" in select or "NOW" in select or "TIMESTAMP" in select:
        assert answers[0] != answers[1]  # random numbers, or a later time
    else:
        assert answers[0] == answers[1] == [("a",), ("b",)]


def test_a_run_that_failed_is_not_run_again(engine: Any, conn: Any, tmp_path: Path) -> None:
    path = tmp_path / "failing.json"
    _write(path, [("a", 1), ("7", 2)], 1_600_000_000)
    sql = f"SELECT CAST(k AS INT) AS i, COUNT(*) AS n FROM dfs.`{path}` GROUP BY CAST(k AS INT)"
    cur = conn.cursor()
    errors, frames = [], []
    for _ in range(2):
        cur.execute(sql)
        frames.append(_frame(cur))
        with pytest.raises(Exception) as failed:
            cur.fetchall()
        errors.append(str(failed.value).splitlines()[0])
        assert not _ready(engine, frames[-1])
    assert frames[0] is not frames[1]
    assert errors[0] == errors[1] and "a" in errors[0]


def test_a_stream_closed_early_is_not_run_again(engine: Any, conn: Any, tmp_path: Path) -> None:
    path = tmp_path / "closed.json"
    _write(path, [(f"k{n % 50}", n) for n in range(2_000)], 1_600_000_000)
    sql = SQL.format(path=path)
    cur = conn.cursor()
    cur.execute(sql)
    first = _frame(cur)
    assert cur.fetchone() == ("k0", 40, sum(range(0, 2_000, 50)))
    cur.execute("SELECT 1 AS x FROM (VALUES(1))")  # the first result is given up
    assert not _ready(engine, first)
    cur.execute(sql)
    assert _frame(cur) is not first
    assert len(cur.fetchall()) == 50


def test_statements_running_at_once_each_run_a_plan_of_their_own(
    make_conn: Any, tmp_path: Path
) -> None:
    path = tmp_path / "concurrent.json"
    _write(path, [(f"k{n % 3}", n) for n in range(300)], 1_600_000_000)
    sql = SQL.format(path=path)
    expected = [(f"k{m}", 100, sum(range(m, 300, 3))) for m in range(3)]
    start = threading.Barrier(3)
    answers: list[Any] = []

    def run() -> None:
        cur = make_conn().cursor()
        start.wait()
        for _ in range(6):
            cur.execute(sql)
            answers.append(list(cur) if len(answers) % 2 else cur.fetchall())

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(t.is_alive() for t in threads)
    assert len(answers) == 18 and all(a == expected for a in answers)


# ------------------------------------------------------------------ the plans, without Spark
@pytest.fixture
def plans_of_fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake frames: every plan is reusable, and taking one resets nothing."""
    # deferred: the module under test
    from auger.spark import plan_reuse

    monkeypatch.setattr(plan_reuse, "_reusable", lambda frame, *_: not getattr(frame, "now", False))
    monkeypatch.setattr(plan_reuse, "_reset_metrics", lambda frame: None)


def test_only_queries_over_kept_small_reads_may_reuse_a_plan() -> None:
    kept = KeptFrames()
    spark, facts = _Session(), TaskFacts(("f",), 1)
    small, scan = _Frame(), _Frame()
    kept.put(spark, "small", small, facts, 10, view=True, local=True)
    kept.put(spark, "scan", scan, facts, 10, view=True)  # files read when it runs
    projected = kept.derived(small, "a", _Frame)  # a projection of a small read is one too
    (small_view,), (scan_view,), (projected_view,) = small.views, scan.views, projected.views
    assert kept.reusable_plans({"t0": small_view, "t1": projected_view}) is kept.plans
    assert kept.reusable_plans({"t0": small_view, "t1": scan_view}) is None
    assert kept.reusable_plans({"t0": "not a kept view"}) is None
    assert kept.reusable_plans({}) is None


def test_a_plan_is_taken_once_it_ran_whole_and_by_one_statement(plans_of_fakes: None) -> None:
    plans = ReusedPlans()
    frame = _Frame()
    plans.offer("q", ["v"], frame)
    assert plans.take("q") is None  # not run yet
    ran(frame, True)
    assert plans.take("q") is frame
    assert plans.take("q") is None  # taken: another statement plans its own
    other = _Frame()
    plans.offer("q", ["v"], other)  # ... and offers it; the taken one is dropped
    ran(frame, True)  # the first one's run ends: it is no longer kept
    assert plans.take("q") is None
    ran(other, True)
    assert plans.take("q") is other
    ran(other, False)  # failed, cancelled or closed early: dropped
    assert plans.take("q") is None and len(plans) == 0


def test_a_plan_never_reusable_is_not_looked_at_again(
    plans_of_fakes: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # deferred: the module under test
    from auger.spark import plan_reuse

    plans = ReusedPlans()
    timed = _Frame()
    timed.now = True  # type: ignore[attr-defined]
    plans.offer("now", ["v"], timed)
    ran(timed, True)
    assert plans.take("now") is None
    looked: list[Any] = []
    monkeypatch.setattr(plan_reuse, "_reusable", lambda frame, *_: looked.append(frame) or True)
    plans.offer("now", ["v"], _Frame())
    assert looked == []


def test_plans_leave_with_the_frames_they_read_and_are_bounded(plans_of_fakes: None) -> None:
    kept = KeptFrames(most_bytes=100)
    spark, facts = _Session(), TaskFacts(("f",), 1)
    a, b = _Frame(), _Frame()
    kept.put(spark, "a", a, facts, 60, view=True, local=True)
    kept.put(spark, "b", b, facts, 30, view=True, local=True)
    over_a, over_b = _Frame(), _Frame()
    kept.plans.offer("over a", a.views, over_a)
    kept.plans.offer("over b", b.views, over_b)
    ran(over_a, True)
    ran(over_b, True)
    kept.put(spark, "c", _Frame(), facts, 60, view=True, local=True)  # past the bound: "a" goes
    assert kept.plans.take("over a") is None
    assert kept.plans.take("over b") is over_b
    kept.clear()
    assert len(kept.plans) == 0
    bounded = ReusedPlans(most=2)
    for n in range(3):
        bounded.offer(f"q{n}", ["v"], _Frame())
    assert len(bounded) == 2 and bounded.take("q0") is None


def test_a_plan_spark_cannot_look_at_is_planned_each_time() -> None:
    # deferred: the module under test
    from auger.spark import plan_reuse

    plans = ReusedPlans()
    frame = _Frame()  # no JVM plan to look at
    plans.offer("q", ["v"], frame)
    ran(frame, True)
    assert plans.take("q") is None
    assert plan_reuse._reusable(frame, lambda jvm: None) is False
