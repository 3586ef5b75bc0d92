"""``spark.read.format("auger")`` in a user's own SparkSession, with nothing of auger imported:
Spark 4 finds the installed ``pyspark_auger`` module and registers its ``DefaultSource``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import pyspark_auger
from auger.spark.datasource import AugerDataSource

SCRIPT = """
import sys
from pyspark.sql import SparkSession

spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
rows = spark.read.format("auger").option("format", "csvh").load(sys.argv[1]).collect()
print(sorted((r["id"], r["region"], r["dir0"]) for r in rows))
print("auger imported:", any(m == "auger" or m.startswith("auger.") for m in sys.modules))

# then auger's own API on the same session (the README's next example), which must not
# register the data source a second time (Spark would warn that it "replaced" it)
import auger

with auger.connect() as conn:
    print(conn.execute("SELECT COUNT(*) AS n FROM cp.`region.json`").fetchall())
"""


def test_the_hook_module_names_auger_data_source() -> None:
    assert pyspark_auger.DefaultSource is AugerDataSource
    assert pyspark_auger.DefaultSource.name() == "auger"


@pytest.mark.spark
@pytest.mark.slow
def test_a_plain_session_reads_format_auger_without_registering_it(tmp_path: Path) -> None:
    # Before: DATA_SOURCE_NOT_FOUND, even after `import auger`
    for year, row in (("2024", "1,east"), ("2025", "2,west")):
        (tmp_path / year).mkdir()
        (tmp_path / year / "a.csvh").write_text(f"id,region\n{row}\n")
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert lines[-3] == "[('1', 'east', '2024'), ('2', 'west', '2025')]"
    # the driver never imported auger: the data source came from Spark's own lookup
    assert lines[-2] == "auger imported: False"
    assert lines[-1] == "[(110,)]"
    # the user's session logs warnings, and auger gave it none
    assert "WARN" in done.stderr
    assert "replaced a statically registered data source" not in done.stderr
