"""Golden translations: every case of ``tests/golden/*.sql`` (Drill in, Spark out) still holds.

A file holds cases separated by blank lines; a case is a Drill line followed by the Spark line
it must translate to; ``--`` lines are comments.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from auger.sql.frontend.translate import drill_to_spark

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def _cases() -> list[tuple[str, str, str]]:
    out = []
    for path in sorted(GOLDEN.glob("*.sql")):
        for n, block in enumerate(path.read_text().split("\n\n")):
            lines = [ln for ln in block.splitlines() if ln.strip() and not ln.startswith("--")]
            if not lines:
                continue
            assert len(lines) == 2, f"{path.name} case {n}: want a Drill line and a Spark line"
            out.append((f"{path.stem}-{n}", lines[0], lines[1]))
    return out


CASES = _cases()


def test_there_are_golden_files() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize(("case", "drill", "spark"), CASES, ids=[c[0] for c in CASES])
def test_translation(case: str, drill: str, spark: str) -> None:
    assert drill_to_spark(drill) == spark
