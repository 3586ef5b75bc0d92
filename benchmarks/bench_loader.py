"""Throughput of the result set loader's typed setters, next to ``pyarrow.array(list)``.

Prints values written per second for INT and VARCHAR columns, with the default limits (no
overflow) and with a small vector limit that overflows every few hundred rows, plus the bulk
``append_arrow`` path. Run: ``python benchmarks/bench_loader.py [rows]``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import pyarrow as pa

from auger.resultset import LoaderOptions, ResultSetLoader

COLUMNS = 8


def _rate(values: int, fn: Callable[[], None], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return values / best


def _loader_run(kind: str, data: list, vector_limit: int) -> Callable[[], None]:
    schema = ", ".join(f"c{i} {kind}" for i in range(COLUMNS))

    def run() -> None:
        loader = ResultSetLoader(
            LoaderOptions(schema=schema, row_limit=65536, vector_size_limit=vector_limit)
        )
        rows = loader.writer()
        loader.start_batch()
        setters = [
            rows.scalar(i).set_int if kind == "INT" else rows.scalar(i).set_string
            for i in range(COLUMNS)
        ]
        start, save, is_full = rows.start, rows.save, rows.is_full
        for value in data:
            start()
            for setter in setters:
                setter(value)
            save()
            if is_full():
                loader.harvest()
                loader.start_batch()
        loader.harvest()
        while loader.has_look_ahead():
            loader.start_batch()
            loader.harvest()

    return run


def _arrow_run(kind: str, data: list) -> Callable[[], None]:
    arrow_type = pa.int32() if kind == "INT" else pa.string()

    def run() -> None:
        for _ in range(COLUMNS):
            pa.array(data, arrow_type)

    return run


def _bulk_run(kind: str, data: list, vector_limit: int) -> Callable[[], None]:
    arrow_type = pa.int32() if kind == "INT" else pa.string()
    batch = pa.record_batch({f"c{i}": pa.array(data, arrow_type) for i in range(COLUMNS)})

    def run() -> None:
        loader = ResultSetLoader(LoaderOptions(row_limit=65536, vector_size_limit=vector_limit))
        rows = loader.writer()
        loader.start_batch()
        rows.append_arrow(batch)
        loader.harvest()
        while loader.has_look_ahead():
            loader.start_batch()
            loader.harvest()

    return run


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    values = n * COLUMNS
    print(f"{n} rows x {COLUMNS} columns = {values} values; figures in million values/s")
    print(f"{'case':<44}{'loader':>10}{'pyarrow':>10}{'ratio':>8}")
    for kind, data in (
        ("INT", list(range(n))),
        ("VARCHAR", [f"value-{i % 1000:04d}" for i in range(n)]),
    ):
        reference = _rate(values, _arrow_run(kind, data))
        width = 4 if kind == "INT" else 10
        small_limit = 400 * width  # overflow every ~400 rows
        for label, limit in (
            ("default limits", 16 * 1024 * 1024),
            ("overflow/400 rows", small_limit),
        ):
            rate = _rate(values, _loader_run(kind, data, limit))
            print(
                f"{kind + ' set_* ' + label:<44}{rate / 1e6:>10.2f}{reference / 1e6:>10.2f}"
                f"{rate / reference:>8.2f}"
            )
        bulk = _rate(values, _bulk_run(kind, data, small_limit))
        print(
            f"{kind + ' append_arrow overflow/400 rows':<44}{bulk / 1e6:>10.2f}"
            f"{reference / 1e6:>10.2f}{bulk / reference:>8.2f}"
        )


if __name__ == "__main__":
    main()
