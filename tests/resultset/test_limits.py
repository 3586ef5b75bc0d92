"""Row limits and the total row limit."""

from __future__ import annotations

from auger.resultset import LoaderOptions, ResultSetLoader

from .helpers import make_loader


def test_row_limit_is_clamped() -> None:
    assert LoaderOptions(row_limit=65537).row_limit == 65536
    assert LoaderOptions(row_limit=0).row_limit == 1
    assert LoaderOptions().row_limit == 4096


def test_row_limit_fills_exactly_and_start_returns_false() -> None:
    loader = make_loader("s VARCHAR", row_limit=1024)
    rows = loader.writer()
    count = 0
    while rows.start():
        rows.scalar(0).set_string("x" * 200)
        rows.save()
        count += 1
    assert count == 1024
    assert loader.harvest().num_rows == 1024


def test_target_row_count_applies_from_next_batch() -> None:
    loader = make_loader("a INT")
    loader.set_target_row_count(8000)
    loader.harvest()
    loader.start_batch()
    rows = loader.writer()
    while not rows.is_full():
        rows.add_row(1)
    assert loader.harvest().num_rows == 8000
    loader.set_target_row_count(-3)
    assert loader.target_row_count == 1


def test_total_limit_splits_last_batch() -> None:
    loader = ResultSetLoader(LoaderOptions(schema="a INT", row_limit=75, limit=100))
    rows = loader.writer()
    sizes = []
    while loader.start_batch():
        while not rows.is_full():
            rows.add_row(1)
        sizes.append(loader.harvest().num_rows)
        if loader.at_limit():
            break
    assert sizes == [75, 25]
    assert loader.at_limit()
    assert loader.start_batch() is False
