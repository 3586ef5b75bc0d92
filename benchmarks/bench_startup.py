"""Start-up and small-query latency of auger, side by side with DuckDB on the same queries.

Figures (wall time, medians over ``--runs``; nothing is asserted):

* ``auger sql -e`` repeated, on the local background server (started first, not counted),
  against ``duckdb -c`` (DuckDB's CLI, when on the PATH) and ``python -c 'import duckdb...'``;
* the first query on a cold start: ``auger sql -e`` with no server running (it starts one and
  Spark in it), ``auger sql --embedded -e`` (Spark in the process), and a bare PySpark session
  plus ``SELECT 1`` (Spark's own start, the floor for both);
* where a warm ``auger sql -e`` spends its time: the interpreter, the client's imports, the
  round trips;
* through the DB-API, in-process and warm: a tiny query and a GROUP BY over
  ``cp.`employee.json``` (p50), against DuckDB's Python API on the same file; the GROUP BY's
  rows iterated (the partition-by-partition stream the REST API serves answers from); the GROUP
  BY again once the session has run 30 of them (the JVM is still compiling Spark's code over
  the first dozens of queries). A repeated statement over a small file runs the plan Spark
  made for it before (``auger.spark.plan_reuse``); a GROUP BY whose text differs each time (a
  column's name) is planned each time, and is printed too. ``--idle S`` waits S seconds
  after the first statement, as a notebook's user would: the engine then warms Spark up
  (``auger.spark.warm_up``; about 20 s on two cores, so ``--idle 30`` gives the figures of a
  warmed-up session).

    python benchmarks/bench_startup.py               # everything (a few minutes: three JVMs)
    python benchmarks/bench_startup.py --no-cold     # warm figures only
    python benchmarks/bench_startup.py --dbapi-only  # the in-process DB-API figures alone
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

TINY = "SELECT 1 AS x FROM (VALUES(1))"
GROUP_BY = (
    "SELECT education_level, COUNT(*) AS n, ROUND(AVG(salary), 2) AS avg_salary "
    "FROM cp.`employee.json` GROUP BY education_level"
)
EMPLOYEE = Path(__file__).resolve().parents[1] / "src" / "auger" / "data" / "employee.json"
DUCK_TINY = "SELECT 1 AS x"
DUCK_GROUP_BY = (
    "SELECT education_level, COUNT(*) AS n, ROUND(AVG(salary), 2) AS avg_salary "
    f"FROM read_json_auto('{EMPLOYEE}') GROUP BY education_level"
)
BARE_SPARK = (
    "from pyspark.sql import SparkSession\n"
    "s = SparkSession.builder.master('local[*]').config('spark.ui.enabled', 'false')"
    ".getOrCreate()\n"
    "s.sql('SELECT 1').collect()\n"
)


def wall(command: Sequence[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")
    return took


def median(fn: Callable[[], float], runs: int) -> float:
    return statistics.median(fn() for _ in range(runs))


def row(name: str, auger: float | None, duck: float | None, note: str = "") -> None:
    def fmt(v: float | None) -> str:
        return "-" if v is None else f"{v * 1000:9.0f} ms"

    print(f"{name:<44} {fmt(auger):>12} {fmt(duck):>12}  {note}")


def cli_figures(env: dict[str, str], runs: int, cold: bool) -> None:
    auger = [sys.executable, "-m", "auger"]
    duck_cli = shutil.which("duckdb") or (
        str(Path(sys.executable).parent / "duckdb")
        if (Path(sys.executable).parent / "duckdb").exists()
        else None
    )
    duck_py = [sys.executable, "-c", f"import duckdb; duckdb.sql({DUCK_TINY!r}).fetchall()"]
    if cold:
        wall([*auger, "stop"], env)
        first = wall([*auger, "sql", "-e", TINY], env)
        embedded = wall([*auger, "sql", "--embedded", "-e", TINY], env)
        bare = wall([sys.executable, "-c", BARE_SPARK], env)
        duck_cold = wall([duck_cli, "-c", DUCK_TINY], env) if duck_cli else wall(duck_py, env)
        row("first query, cold: auger sql -e (server)", first, duck_cold, "starts server + Spark")
        row("first query, cold: auger sql --embedded -e", embedded, None)
        row("bare PySpark session + SELECT 1", bare, None, "Spark's own start")
    else:
        wall([*auger, "sql", "-e", TINY], env)  # make sure the server runs and is warm
    wall([*auger, "sql", "-e", TINY], env)
    repeated = median(lambda: wall([*auger, "sql", "-e", TINY], env), runs)
    if duck_cli:
        duck_repeated = median(lambda: wall([duck_cli, "-c", DUCK_TINY], env), runs)
        row("repeated: auger sql -e / duckdb -c", repeated, duck_repeated, "target <= 1 s")
    py_repeated = median(lambda: wall(duck_py, env), runs)
    row("repeated: auger sql -e / python -c duckdb", repeated, py_repeated)
    python = median(lambda: wall([sys.executable, "-c", "pass"], env), runs)
    imports = median(lambda: wall([sys.executable, "-c", "import auger.cli.main"], env), runs)
    client = median(
        lambda: wall([sys.executable, "-c", "import auger.cli.main, auger.cli.local"], env), runs
    )
    row("  of which: python -c pass", python, None)
    row("  of which: import auger.cli.main", imports, None, "the command's own imports")
    row("  of which: + the client (requests)", client, None)


def dbapi_figures(runs: int, settled: int = 30, idle: float = 0.0) -> None:
    import duckdb

    import auger

    with auger.connect() as conn:
        cur = conn.cursor()

        def run(sql: str) -> float:
            started = time.perf_counter()
            cur.execute(sql)
            cur.fetchall()
            return time.perf_counter() - started

        run(TINY)  # starts Spark
        # a notebook's or a shell's user takes a while to type the next statement: the
        # engine warms Spark up in the meantime (see auger.spark.warm_up)
        time.sleep(idle)
        first = run(GROUP_BY)
        for _ in range(2):  # the first plans are not the warm figure
            run(TINY)
            run(GROUP_BY)
        tiny = median(lambda: run(TINY), runs)
        grouped = median(lambda: run(GROUP_BY), runs)
        # where a warm GROUP BY spends its time: ``execute`` plans (auger's planning, the
        # driver's read of the small file, Spark's analysis); ``fetchall`` runs Spark's job
        planned: list[float] = []
        fetched: list[float] = []
        for _ in range(runs):
            started = time.perf_counter()
            cur.execute(GROUP_BY)
            middle = time.perf_counter()
            cur.fetchall()
            planned.append(middle - started)
            fetched.append(time.perf_counter() - middle)

        # the same rows iterated: the partition-by-partition stream that the REST API and
        # Flight SQL also serve answers from
        def streamed() -> float:
            started = time.perf_counter()
            cur.execute(GROUP_BY)
            for _ in cur:
                pass
            return time.perf_counter() - started

        grouped_streamed = median(streamed, runs)
        # the JVM compiles Spark's planner and executor code over the first dozens of
        # queries: the same figure once the session has run ``settled`` of them
        done = 3 + 3 * runs  # the GROUP BYs run so far
        for _ in range(max(0, settled - done)):
            run(GROUP_BY)
        grouped_settled = median(lambda: run(GROUP_BY), runs)
        # another text each time (the same rows, another name of a column): planned by Spark
        # each time (another constant would also be new generated code for Spark to compile)
        texts = iter(range(1, 10**6))
        grouped_planned = median(
            lambda: run(GROUP_BY.replace("AS n,", f"AS n{next(texts)},")), runs
        )
    duck = duckdb.connect()

    def duck_run(sql: str) -> float:
        started = time.perf_counter()
        duck.execute(sql).fetchall()
        return time.perf_counter() - started

    duck_run(DUCK_GROUP_BY)
    duck_tiny = median(lambda: duck_run(DUCK_TINY), runs)
    row(f"DB-API first GROUP BY, {idle:g} s after the start", first, None)
    row("DB-API warm p50: tiny query", tiny, duck_tiny, "target <= 100 ms")
    row(
        "DB-API warm p50: GROUP BY cp.employee.json",
        grouped,
        median(lambda: duck_run(DUCK_GROUP_BY), runs),
        "target <= 60 ms",
    )
    row("  of which: execute (planning, read)", statistics.median(planned), None)
    row("  of which: fetchall (Spark's job)", statistics.median(fetched), None)
    row("  rows iterated (the stream REST serves)", grouped_streamed, None)
    row(
        f"  the same after {max(settled, done)} GROUP BYs in the session",
        grouped_settled,
        None,
        "",
    )
    row("  a GROUP BY of another text each time (planned)", grouped_planned, None)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-start figures")
    parser.add_argument("--no-dbapi", action="store_true", help="skip the DB-API figures")
    parser.add_argument("--dbapi-only", action="store_true", help="the DB-API figures alone")
    parser.add_argument(
        "--idle",
        type=float,
        default=0.0,
        help="seconds the DB-API session waits after its first statement (as a user typing)",
    )
    args = parser.parse_args(argv)
    home = tempfile.mkdtemp(prefix="auger-bench-home-")
    env = {**os.environ, "AUGER_HOME": home}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    print(f"{'':<44} {'auger':>12} {'DuckDB':>12}")
    try:
        if not args.dbapi_only:
            cli_figures(env, args.runs, not args.no_cold)
        if not args.no_dbapi:
            dbapi_figures(args.runs, idle=args.idle)
    finally:
        subprocess.run([sys.executable, "-m", "auger", "stop"], env=env, capture_output=True)
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
