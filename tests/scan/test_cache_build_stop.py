"""A raw-file cache build's tasks end by themselves when the build asks them to stop.

The build gives way to a user's query by creating its stop signal (``ScanSpec.build_stop``);
a building scan sees it before its next batch, ends there like a scan that read its rows, and
publishes no part of the split it had not read whole (a part already published stays)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from auger.scan.cache_build import building_scan, stop_asked
from auger.scan.spec import ScanSpec
from auger.types.spark import schema_to_spark, spark_arrow_schema
from tests.scan.test_run_scan import plan

ROWS = 50_000  # more than one building batch per file (at least 16,384 rows each)


def _spec(tmp_path: Path, files: int = 1) -> ScanSpec:
    data = tmp_path / "data"
    data.mkdir()
    for f in range(files):
        lines = (json.dumps({"id": f * ROWS + i, "s": f"v{i % 7}"}) for i in range(ROWS))
        (data / f"f{f}.json").write_text("\n".join(lines) + "\n")
    spec = plan("json", data, sorted(data.iterdir()), None)
    return replace(
        spec,
        cache_columns=spec.output_schema,
        cache_build=str(tmp_path / "cache"),
        build_stop=str(tmp_path / "stop"),
    )


def _target(spec: ScanSpec) -> pa.Schema:
    return spark_arrow_schema(schema_to_spark(spec.schema()))


def _files(root: Path) -> list[str]:
    """Every file under ``root``, published or not (a temporary part counts)."""
    return sorted(p.name for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_without_the_signal_every_part_is_published(tmp_path: Path) -> None:
    spec = _spec(tmp_path, files=2)
    rows = sum(b.num_rows for b in building_scan(spec, list(spec.files), 4096, _target(spec)))
    assert rows == 2 * ROWS and not stop_asked(spec)
    assert len([n for n in _files(tmp_path / "cache") if n.endswith(".parquet")]) == 2


def test_a_signal_there_before_the_scan_reads_nothing(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    Path(spec.build_stop).touch()
    assert stop_asked(spec)
    assert list(building_scan(spec, list(spec.files), 4096, _target(spec))) == []
    assert _files(tmp_path / "cache") == []


def test_a_signal_during_the_scan_ends_it_at_the_next_batch(tmp_path: Path) -> None:
    """The first file's part is published; the signal comes after the second file's first
    batch: the scan ends there, leaving no part of that file, not even a temporary one."""
    spec = _spec(tmp_path, files=2)
    batches = building_scan(spec, list(spec.files), 4096, _target(spec))
    rows = 0
    for batch in batches:
        rows += batch.num_rows
        if rows > ROWS:  # into the second file
            Path(spec.build_stop).touch()
    assert ROWS < rows < 2 * ROWS
    parts = _files(tmp_path / "cache")
    assert len(parts) == 1 and parts[0].endswith(".parquet") and not parts[0].startswith(".")
    published = next((tmp_path / "cache").rglob("*.parquet"))
    assert pq.read_table(published).num_rows == ROWS


def test_a_spec_without_a_signal_never_stops(tmp_path: Path) -> None:
    """A query's own scan (no build) and a build on a cluster carry no signal path."""
    spec = replace(_spec(tmp_path), build_stop="")
    (tmp_path / "stop").touch()
    assert not stop_asked(spec)
