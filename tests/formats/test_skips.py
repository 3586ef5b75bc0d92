"""Skipped records are counted where a scan can read them back: per thread, with their lines."""

from __future__ import annotations

import threading

from auger.formats.skips import MAX_LINES, recording, report_skipped


def test_recording_collects_counts_and_lines_of_this_thread_only() -> None:
    elsewhere: dict[str, tuple[int, list[int]]] = {}

    def other_thread() -> None:
        with recording() as sink:
            report_skipped("/d/other.json", 1, [9])
        elsewhere.update(sink)

    with recording() as outer:
        report_skipped("/d/a.json", 2, [7, 3])
        with recording() as inner:
            report_skipped("/d/a.json", 1, [12])
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
        report_skipped("/d/b.json", 1)  # a reader that knows no line
        report_skipped("/d/c.json", 0, [1])  # nothing skipped: nothing recorded
    assert inner == {"/d/a.json": (1, [12])}
    assert outer == {"/d/a.json": (3, [3, 7, 12]), "/d/b.json": (1, [])}
    assert elsewhere == {"/d/other.json": (1, [9])}
    report_skipped("/d/a.json", 1, [1])  # outside any block: only logged and tallied


def test_recording_keeps_the_count_exact_and_the_lines_bounded() -> None:
    with recording() as sink:
        report_skipped("/d/big.json", 500, range(1, 501))
    count, lines = sink["/d/big.json"]
    assert count == 500 and lines == list(range(1, MAX_LINES + 1))
