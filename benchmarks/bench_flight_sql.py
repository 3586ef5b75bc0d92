"""Fetching a large result three ways: Arrow Flight SQL, the REST API and the in-process DB-API.

Writes two Parquet files into a temporary workspace (``--rows`` rows of 3 columns, and
``--wide-rows`` rows of 20 columns: the in-process DB-API gathers its whole answer in Spark's
driver, whose default heap does not hold a million 20-column rows), starts one
``auger serve --flight-port`` on loopback, and times fetching every row of ``SELECT * FROM``
each file:

* Flight SQL through the ADBC driver (``cursor.fetch_arrow_table()``): Arrow from Spark to the
  client, streamed batch by batch;
* the REST API (``POST /query.json``): every value encoded as JSON;
* the DB-API in this process (``auger.connect()``, ``fetch_arrow_table()``): no network, the
  bound the other two are measured against (target: Flight SQL within 1.5x of it).

Each figure is the best of ``--repeat`` runs after one warm-up (the machine may be shared);
nothing is asserted.

Usage: ``python benchmarks/bench_flight_sql.py [--rows 1000000] [--wide-rows 200000]
[--repeat 3]``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import requests

NARROW, WIDE = "narrow.parquet", "wide.parquet"


def _table(rows: int, columns: int) -> pa.Table:
    ids = pa.array(range(rows), pa.int64())
    values = pa.array([i * 0.5 for i in range(rows)], pa.float64())
    names = pa.array([f"name_{i % 1000}" for i in range(rows)], pa.string())
    kinds = (ids, values, names)
    return pa.table({f"c{c}": kinds[c % 3] for c in range(columns)})


def write_data(folder: Path, rows: int, wide_rows: int) -> None:
    pq.write_table(_table(rows, 3), folder / NARROW)
    pq.write_table(_table(wide_rows, 20), folder / WIDE)


def best(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    fn()  # warm-up: Spark's first query, the file's footer in the page cache
    times, rows = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        rows = fn()
        times.append(time.perf_counter() - start)
    return min(times), rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--wide-rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import adbc_driver_flightsql.dbapi as adbc
    from tests.server.helpers import Server, free_port

    import auger

    flight_port = free_port()
    server = Server(
        Path(tempfile.mkdtemp(prefix="bench_flight_")),
        {"flight_port": flight_port, "send_timeout": 600},
    )
    write_data(server.data, args.rows, args.wide_rows)
    server.start()
    flight_conn = adbc.connect(f"grpc://127.0.0.1:{flight_port}", autocommit=True)
    local = auger.connect(str(server.config))
    http = requests.Session()
    try:
        for name in (NARROW, WIDE):
            sql = f"SELECT * FROM dfs.data.`{name}`"

            def flight_fetch(sql: str = sql) -> int:
                with flight_conn.cursor() as cur:
                    cur.execute(sql)
                    return int(cur.fetch_arrow_table().num_rows)

            def rest_fetch(sql: str = sql) -> int:
                body = {"queryType": "SQL", "query": sql, "autoLimit": 0}
                resp = http.post(f"{server.url}/query.json", json=body, timeout=1800)
                resp.raise_for_status()
                return len(resp.json()["rows"])

            def dbapi_fetch(sql: str = sql) -> int:
                cur = local.cursor()
                cur.execute(sql)
                rows = int(cur.fetch_arrow_table().num_rows)
                cur.close()
                return rows

            columns = 3 if name == NARROW else 20
            figures = {
                "DB-API fetch_arrow_table (in process)": best(dbapi_fetch, args.repeat),
                "Flight SQL (ADBC)": best(flight_fetch, args.repeat),
                "REST /query.json": best(rest_fetch, args.repeat),
            }
            base = figures["DB-API fetch_arrow_table (in process)"][0]
            print(f"\n{figures['Flight SQL (ADBC)'][1]:,} rows x {columns} columns")
            for label, (seconds, rows) in figures.items():
                print(
                    f"  {label:<40} {seconds:8.2f} s  {rows / seconds:>12,.0f} rows/s  "
                    f"{seconds / base:5.2f}x DB-API  ({rows:,} rows)"
                )
    finally:
        flight_conn.close()
        local.close()
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
