"""DATE values in Parquet files written by Drill before 1.9 read back as Drill reads them."""

from __future__ import annotations

import datetime as dt
import struct
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.formats.parquet_dates import CORRUPT_DATE_SHIFT, DateCorruption, date_corruption
from tests.sql.helpers import rows

DATES = [dt.date(1970, 1, 1), dt.date(2015, 1, 1), dt.date(1900, 1, 1), dt.date(1969, 12, 31)]
EPOCH = dt.date(1970, 1, 1)
OLD_DRILL = "parquet-mr version 1.8.1-drill-r0 (build 6b605a4ea05b66e1a6bf843353abcb4834a4ced8)"


def write_parquet(
    path: Path,
    days: list[int | None],
    created_by: str | None = None,
    metadata: dict[str, str] | None = None,
    statistics: bool = True,
) -> None:
    """A Parquet file with one DATE column ``date_col`` holding ``days`` as stored, the footer's
    ``created_by`` replaced (pyarrow cannot set it) and Drill's key-value metadata added."""
    table = pa.table(
        {
            "id": pa.array(range(len(days)), pa.int32()),
            "date_col": pa.array(days, pa.int32()).cast(pa.date32()),
        }
    ).replace_schema_metadata(metadata or {})
    pq.write_table(table, path, write_statistics=statistics)
    if created_by is None:
        return
    data = path.read_bytes()
    (length,) = struct.unpack("<I", data[-8:-4])
    footer = data[-8 - length : -8]
    old = pq.ParquetFile(path).metadata.created_by.encode()
    assert len(old) < 128 and len(created_by) < 128 and footer.count(old) == 1
    patched = footer.replace(
        bytes([len(old)]) + old, bytes([len(created_by)]) + created_by.encode()
    )
    path.write_bytes(data[: -8 - length] + patched + struct.pack("<I", len(patched)) + b"PAR1")
    assert pq.ParquetFile(path).metadata.created_by == created_by


def shifted(dates: list[dt.date]) -> list[int | None]:
    return [(d - EPOCH).days + CORRUPT_DATE_SHIFT for d in dates]


@pytest.fixture
def old_files(data_dir: Path) -> Path:
    root = data_dir / "drill4203"
    root.mkdir(exist_ok=True)
    # Drill 1.4: a drill.version and no writer version, values shifted
    write_parquet(root / "drill_1_4.parquet", shifted(DATES), OLD_DRILL, {"drill.version": "1.4.0"})
    # migrated by old Drill: only the parquet-mr build tag says Drill
    write_parquet(root / "migrated.parquet", shifted(DATES), OLD_DRILL)
    # no created_by worth the name, no statistics: each value is judged alone
    mixed = [*shifted(DATES[:2]), (DATES[2] - EPOCH).days, None]
    write_parquet(root / "no_stats.parquet", mixed, "parquet-mr", statistics=False)
    # Drill 1.9's writer version 2: dates are right, even far in the future
    far = [dt.date(6000, 1, 1), *DATES[1:]]
    write_parquet(
        root / "drill_1_9.parquet",
        [(d - EPOCH).days for d in far],
        OLD_DRILL,
        {"drill.version": "1.9.0", "drill-writer.version": "2"},
    )
    # another writer: trusted whatever its values
    write_parquet(root / "other.parquet", [(d - EPOCH).days for d in far])
    return root


def test_footers_are_judged_as_drill_judges_them(old_files: Path) -> None:
    def judged(name: str, auto: bool = True) -> DateCorruption:
        return date_corruption(pq.ParquetFile(old_files / name).metadata, auto)

    assert judged("drill_1_4.parquet") is DateCorruption.ALL
    assert judged("migrated.parquet") is DateCorruption.ALL
    assert judged("no_stats.parquet") is DateCorruption.SUSPECT
    assert judged("drill_1_9.parquet") is DateCorruption.NONE
    assert judged("other.parquet") is DateCorruption.NONE
    assert judged("drill_1_4.parquet", auto=False) is DateCorruption.NONE


@pytest.mark.parametrize("native", [True, False])
def test_shifted_dates_are_corrected_on_every_path(
    conn: Any, old_files: Path, native: bool
) -> None:
    rows(conn, f"ALTER SESSION SET `auger.scan.native_parquet` = {str(native).lower()}")
    for name in ("drill_1_4", "migrated"):
        got = rows(conn, f"SELECT date_col FROM dfs.data.`drill4203/{name}.parquet` ORDER BY id")
        assert got == [(d,) for d in DATES], name
        # a filter on the corrected value finds it (statistics hold the shifted values)
        got = rows(
            conn,
            f"SELECT id FROM dfs.data.`drill4203/{name}.parquet` "
            "WHERE date_col = DATE '2015-01-01'",
        )
        assert got == [(1,)], name
    got = rows(conn, "SELECT date_col FROM dfs.data.`drill4203/no_stats.parquet` ORDER BY id")
    assert got == [(DATES[0],), (DATES[1],), (DATES[2],), (None,)]
    got = rows(conn, "SELECT date_col FROM dfs.data.`drill4203/drill_1_9.parquet` ORDER BY id")
    assert got[0] == (dt.date(6000, 1, 1),)
    got = rows(conn, "SELECT date_col FROM dfs.data.`drill4203/other.parquet` ORDER BY id")
    assert got[0] == (dt.date(6000, 1, 1),)


def test_auto_correction_can_be_turned_off_in_a_table_function(conn: Any, old_files: Path) -> None:
    table = (
        "table(dfs.data.`drill4203/drill_1_4.parquet`"
        "(type => 'parquet', autoCorrectCorruptDates => false))"
    )
    got = rows(conn, f"SELECT EXTRACT(YEAR FROM date_col) FROM {table} ORDER BY id")
    years = [y for (y,) in got]  # as stored: about 13,364 years late (Drill reads 15334-..)
    assert len(years) == len(DATES) and all(15200 < y < 15400 for y in years), years
    # a file Drill 1.9 wrote is not touched either way
    got = rows(
        conn,
        "SELECT date_col FROM table(dfs.data.`drill4203/drill_1_9.parquet`"
        "(type => 'parquet', autoCorrectCorruptDates => false)) ORDER BY id",
    )
    assert got[0] == (dt.date(6000, 1, 1),)


def test_ctas_copies_hold_the_corrected_dates(
    conn: Any, old_files: Path, tmp_workspace: Path
) -> None:
    rows(conn, "ALTER SESSION SET `store.format` = 'parquet'")
    got = rows(
        conn,
        "CREATE TABLE dfs.tmp.dates_4203_copy AS "
        "SELECT id, date_col FROM dfs.data.`drill4203/drill_1_4.parquet`",
    )
    assert got == [("0_0", len(DATES))]
    files = sorted((tmp_workspace / "dates_4203_copy").glob("*.parquet"))
    stored = pq.read_table(files).sort_by("id").column("date_col").to_pylist()
    assert stored == DATES  # what any reader of the copy sees
    got = rows(conn, "SELECT date_col FROM dfs.tmp.dates_4203_copy ORDER BY id")
    assert got == [(d,) for d in DATES]
