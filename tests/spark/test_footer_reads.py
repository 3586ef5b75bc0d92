"""A first plan over many Parquet files opens each file once: the footers discovery read go
along to the planning of the scan's tasks (row groups skipped by pushed filters, big files cut
at row groups), in this process or, carried by the scan spec, in Spark's planner process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.scan.spec import ScanSpec
from auger.spark.datasource_read import with_footers
from auger.spark.discovery import clear_cache
from auger.storage import filesystem as fs
from auger.storage.parquet_footers import clear_footer_bytes

FILES = 60


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The files opened for reading at random (a Parquet footer is read so)."""
    seen: list[str] = []
    real = fs.open_random

    def counting(path: str) -> object:
        seen.append(path)
        return real(path)

    monkeypatch.setattr(fs, "open_random", counting)
    clear_cache()
    yield seen
    clear_cache()


def _directory(tmp_path: Path) -> Path:
    root = tmp_path / "many"
    root.mkdir()
    for i in range(FILES):
        pq.write_table(
            pa.table({"v": list(range(i * 100, i * 100 + 100))}),
            root / f"f{i:02d}.parquet",
            row_group_size=25,
        )
    return root


def _reader(root: Path) -> tuple[object, ScanSpec, object]:
    from auger.spark.datasource import AugerDataSource

    ds = AugerDataSource({"path": str(root), "format": "parquet", "pushdown": "true"})
    schema = ds.schema()
    return ds.reader(schema), ds._spec(), schema


def test_planning_tasks_opens_no_file_discovery_read(tmp_path: Path, opens: list[str]) -> None:
    from pyspark.sql.datasource import GreaterThanOrEqual

    root = _directory(tmp_path)
    reader, _, _ = _reader(root)
    assert len(opens) == FILES  # discovery: each footer once
    list(reader.pushFilters([GreaterThanOrEqual(("v",), 5_960)]))  # type: ignore[attr-defined]
    parts = reader.partitions()  # type: ignore[attr-defined]
    splits = [s for p in parts for s in p.files]
    # the filter still skips files and row groups, from the footers discovery read
    assert [(Path(s.path).name, s.row_groups) for s in splits] == [("f59.parquet", (2, 3))]
    assert len(opens) == FILES


def test_the_spec_carries_the_footers_to_another_process(tmp_path: Path, opens: list[str]) -> None:
    from pyspark.sql.datasource import LessThan

    from auger.spark.datasource import AugerPushdownReader

    root = _directory(tmp_path)
    _, spec, schema = _reader(root)
    shipped = ScanSpec.from_json(with_footers(spec).to_json())
    assert len(shipped.footers) == FILES
    clear_footer_bytes()  # Spark's planner process keeps nothing of the driver's
    opens.clear()
    reader = AugerPushdownReader(shipped, schema)
    list(reader.pushFilters([LessThan(("v",), 30)]))
    splits = [s for p in reader.partitions() for s in p.files]
    assert [(Path(s.path).name, s.row_groups) for s in splits] == [("f00.parquet", (0, 1))]
    assert opens == []
    # without the footers, the planner process reads each of them again
    reader = AugerPushdownReader(spec, schema)
    list(reader.pushFilters([LessThan(("v",), 30)]))
    reader.partitions()
    assert len(opens) == FILES


def test_tasks_do_not_carry_the_footers(tmp_path: Path) -> None:
    import pickle

    from auger.spark.datasource import AugerPushdownReader

    _, spec, schema = _reader(_directory(tmp_path))
    reader = AugerPushdownReader(with_footers(spec), schema)
    assert len(reader.spec.footers) == FILES
    task_side = pickle.loads(pickle.dumps(reader))
    assert task_side.spec.footers == {}
    assert task_side.spec.files == reader.spec.files
