"""A format plugin registered in code is queried through SQL, its reader running in Spark's
Python workers, which never ran the registration nor can import the plugin's module."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from auger.formats import FormatPlugin, get_format, register_format, unregister_format

# The plugin API's face: a FormatPlugin with a name, extensions and reader(); nothing else.
PLUGIN_SOURCE = '''
from auger.formats import FormatPlugin
from auger.scan import FormatReader
from auger.types import ColumnMetadata, DataMode, MinorType

class PairsReader(FormatReader):
    """Lines of ``key=value;key=value``; every key a VARCHAR column."""

    def __init__(self, path):
        self.path = path

    def open(self, negotiator):
        self.rows = negotiator.build().writer()
        self.lines = open(self.path, encoding="utf-8").read().splitlines()
        return True

    def next(self):
        if not self.lines:
            return False
        while self.lines and not self.rows.is_full():
            pairs = dict(p.split("=", 1) for p in self.lines.pop(0).split(";"))
            self.rows.start()
            for key, value in pairs.items():
                if self.rows.index(key) < 0:
                    self.rows.add_column(ColumnMetadata(key, MinorType.VARCHAR, DataMode.OPTIONAL))
                self.rows.scalar(key).set_string(value)
            self.rows.save()
        return True

    def close(self):
        pass

class PairsFormat(FormatPlugin):
    name = "pairs"
    extensions = ("kv",)

    def reader(self, file, config):
        return PairsReader(file.path)
'''


@pytest.fixture
def pairs(tmp_path: Path) -> Iterator[Path]:
    module_file = tmp_path / "pairs_plugin_by_path.py"
    module_file.write_text(PLUGIN_SOURCE)
    spec = importlib.util.spec_from_file_location("pairs_plugin_by_path", module_file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["pairs_plugin_by_path"] = module
    spec.loader.exec_module(module)
    register_format("pairs", module.PairsFormat)
    data = tmp_path / "data"
    (data / "east").mkdir(parents=True)
    (data / "east" / "a.kv").write_text("k=1;v=one\nk=2;v=two\n")
    (data / "b.kv").write_text("k=3;w=three\n")
    try:
        yield data
    finally:
        unregister_format("pairs")
        sys.modules.pop("pairs_plugin_by_path", None)


def test_plugin_with_only_a_reader_gets_the_rest(pairs: Path) -> None:
    plugin = get_format("pairs")
    assert isinstance(plugin, FormatPlugin)
    assert plugin.type_name == "pairs"


def test_registered_plugin_runs_in_spark_workers(conn: Any, pairs: Path) -> None:
    conn.cursor().execute("ALTER SESSION SET `auger.scan.local_limit_rows` = 0")
    sql = (
        f"SELECT k, v, w, dir0, filename, nope FROM table(dfs.`{pairs}`(type => 'pairs')) "
        "ORDER BY k"
    )
    cur = conn.cursor()
    cur.execute(sql)
    assert cur.fetchall() == [
        ("1", "one", None, "east", "a.kv", None),
        ("2", "two", None, "east", "a.kv", None),
        ("3", None, "three", None, "b.kv", None),
    ]
    cur.execute(f"SELECT COUNT(*) FROM table(dfs.`{pairs}`(type => 'pairs')) WHERE dir0 = 'east'")
    assert cur.fetchall() == [(2,)]
