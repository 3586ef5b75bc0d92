"""The same queries over local disk and over a local S3-compatible server, side by side, and
the time to list and plan over a prefix of many objects.

Starts moto's S3 server on 127.0.0.1 (a free port), writes the same small tables to a temp dir
and to a bucket, and times through the DB-API (best of ``--repeat``):

* listing a directory / prefix of ``--objects`` small Parquet files, in sub-prefixes of 1,000
  (``select_files``; one pass, the listing has no cache),
* planning a query over that directory (``EXPLAIN PLAN FOR``: listing, every footer read for
  the schema, the scan planned), the first time and again (footers then come from the cache),
* running ``SELECT COUNT(*)`` over it (only up to 2,000 objects: each object is a request),
* a filter over a CSV file, a JSON file and a Parquet file.

moto runs as a process of its own on the same machine (in the benchmark's process its
request handling would compete with auger's threads for one interpreter lock): the figures
show auger's own overhead per request plus moto's, not a real network's latency. Nothing is
asserted.

Usage: ``python benchmarks/bench_s3.py [--objects 10000] [--rows 100000] [--repeat 3]``
(``--objects 10000`` uploads 10,000 objects to moto first: a minute or two).
"""

from __future__ import annotations

import argparse
import atexit
import io
import json
import logging
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

BUCKET = "bench"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"moto's server exited with {server.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    server.kill()
    raise SystemExit("moto's server did not start within 60 s")


def _stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        server.kill()


def _best(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _tables(rows: int) -> dict[str, bytes]:
    csv = "id,name,v\n" + "".join(f"{i},n{i % 97},{i * 0.5}\n" for i in range(rows))
    js = "".join(
        json.dumps({"id": i, "name": f"n{i % 97}", "v": i * 0.5}) + "\n" for i in range(rows)
    )
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": range(rows), "name": [f"n{i % 97}" for i in range(rows)]}), buf)
    return {"t.csvh": csv.encode(), "t.json": js.encode(), "t.parquet": buf.getvalue()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=2000)
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    import boto3

    import auger
    from auger.storage import filesystem as fs
    from auger.storage.selection import select_files

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    atexit.register(_stop, server)  # also when a step below fails
    _wait_for_port(port, server)
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="k",
        aws_secret_access_key="s",
        region_name="us-east-1",
    )
    client.create_bucket(Bucket=BUCKET)
    local = Path(tempfile.mkdtemp(prefix="auger-bench-s3-"))
    small = io.BytesIO()
    pq.write_table(pa.table({"id": [1], "name": ["x"]}), small)
    files = {
        f"many/{i // 1000:03d}/f{i:05d}.parquet": small.getvalue() for i in range(args.objects)
    }
    files.update(_tables(args.rows))
    for key, body in files.items():
        (local / key).parent.mkdir(parents=True, exist_ok=True)
        (local / key).write_bytes(body)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(16) as pool:
        list(
            pool.map(
                lambda kv: client.put_object(Bucket=BUCKET, Key=kv[0], Body=kv[1]), files.items()
            )
        )
    print(f"uploaded {len(files)} objects in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    config = {
        "options": {"auger.cache.enabled": False},  # each query parses: the scan is measured
        "storage": {
            "dfs": {"workspaces": {"bench": {"location": str(local)}}},
            "s3": {
                "type": "file",
                "connection": f"s3a://{BUCKET}",
                "config": {
                    "fs.s3a.endpoint": endpoint,
                    "fs.s3a.access.key": "k",
                    "fs.s3a.secret.key": "s",
                },
                "workspaces": {"bench": {"location": "/"}},
            },
        },
    }
    queries = [
        ("COUNT(*) over many", "SELECT COUNT(*) FROM {ws}.`many`"),
        ("csvh filter", "SELECT COUNT(*) FROM {ws}.`t.csvh` WHERE name = 'n3'"),
        ("json filter", "SELECT COUNT(*) FROM {ws}.`t.json` WHERE name = 'n3'"),
        ("parquet filter", "SELECT COUNT(*) FROM {ws}.`t.parquet` WHERE name = 'n3'"),
    ]
    s3 = config["storage"]["s3"]
    settings = fs.config_for_plugin(s3["connection"], s3["config"])
    assert settings is not None
    fs.register(settings)  # select_files below is called without a workspace
    with auger.connect(config=config) as conn:
        cur = conn.cursor()
        cur.execute("SELECT 1 FROM (VALUES(1))").fetchall()  # start Spark before timing
        print(f"{'case':<28}{'local s':>10}{'s3 s':>10}")
        t0 = time.perf_counter()
        local_files = len(select_files(str(local / "many")).files)
        listing = [time.perf_counter() - t0]
        t0 = time.perf_counter()
        s3_files = len(select_files(f"s3a://{BUCKET}/many").files)
        listing.append(time.perf_counter() - t0)
        assert local_files == s3_files == args.objects, (local_files, s3_files)
        print(f"{f'list {args.objects} objects':<28}{listing[0]:>10.3f}{listing[1]:>10.3f}")
        plan = "EXPLAIN PLAN FOR SELECT id, name FROM {ws}.`many`"
        for attempt in ("first", "second"):
            took = []
            for ws in ("dfs.bench", "s3.bench"):
                t0 = time.perf_counter()
                cur.execute(plan.format(ws=ws)).fetchall()
                took.append(time.perf_counter() - t0)
            label = f"plan over {args.objects}, {attempt}"
            print(f"{label:<28}{took[0]:>10.3f}{took[1]:>10.3f}", flush=True)
        if args.objects > 2000:
            queries = queries[1:]  # one request per object: minutes against moto
        for label, sql in queries:
            times = []
            answers = []
            for ws in ("dfs.bench", "s3.bench"):
                text = sql.format(ws=ws)
                try:
                    answers.append(cur.execute(text).fetchall())
                    times.append(_best(lambda text=text: cur.execute(text).fetchall(), args.repeat))
                except auger.Error as exc:  # print the case's failure, go on with the next
                    answers.append(str(exc).splitlines()[0])
                    times.append(float("nan"))
            same = "" if answers[0] == answers[1] else f"  (answers differ: {answers})"
            print(f"{label:<28}{times[0]:>10.3f}{times[1]:>10.3f}{same}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
