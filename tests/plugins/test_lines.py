"""The line formats' shared reader base: special columns only when a query names them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from auger.config import FormatConfig
from auger.formats import get_format
from auger.scan import ScanOperator

SYSLOG = "<34>1 2003-10-11T22:14:15.003Z host su - ID47 - failed\n"
HTTPD = '1.2.3.4 - - [25/Oct/2015:04:11:25 +0100] "GET /p?a=1 HTTP/1.1" 200 5 "-" "agent"\n'
LOG = "1 one\n2 two\n"

CASES = [
    ("syslog", SYSLOG, {}, ["_raw"]),
    ("httpd", HTTPD, {}, ["_raw", "_matched"]),
    ("logRegex", LOG, {"regex": r"(\d+) (\w+)"}, ["_raw", "_unmatched_rows"]),
]


@pytest.mark.parametrize(("fmt", "text", "options", "specials"), CASES)
def test_special_columns_only_when_named(
    tmp_path: Path, fmt: str, text: str, options: dict[str, Any], specials: list[str]
) -> None:
    path = tmp_path / "f.txt"
    path.write_text(text * 3)
    plugin, config = get_format(fmt), FormatConfig(fmt, fmt, ("txt",), options)
    table = plugin.discover_schema([str(path)], config, {})
    assert table.names()[-len(specials) :] == specials  # the planner knows their types
    # a wildcard whose schema the first batch fixes (a planned scan's) neither has them nor
    # reports them as columns it dropped: an unnamed special column is not read at all
    star = ScanOperator(plugin, [str(path)], ["*"], config=config, mode="strict")
    batches = list(star)
    assert not set(specials) & set(batches[0].schema.names)
    assert star.warnings == []
    named = ScanOperator(plugin, [str(path)], [specials[0]], config=config, mode="strict")
    lines = (text * 3).splitlines()
    assert [r for b in named for r in b.to_pylist()] == [{specials[0]: x} for x in lines]
