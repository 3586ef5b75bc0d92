"""Drill's Parquet metadata cache on an S3 prefix (a local S3-compatible server): written by a
refresh, and planning from it asks for no Parquet object."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq

from auger.config import build_config
from auger.formats.parquet import clear_footers, planning_footer
from auger.formats.parquet_metadata import (
    DIRECTORIES_FILE,
    FILES_FILE,
    SUMMARY_FILE,
    refresh_metadata,
    use_metadata_cache,
)
from auger.storage.selection import select_files
from auger.storage.workspace import Workspace
from tests.storage.s3_helpers import LocalS3


def test_refresh_and_planning_on_an_s3_prefix(local_s3: LocalS3, footer_reads: list[str]) -> None:
    bucket = local_s3.bucket("metacache")
    plugin = build_config({"storage": {"s3": local_s3.plugin(bucket)}}).plugins["s3"]
    Workspace(plugin, plugin.workspaces["root"])  # registers the bucket's settings
    for i in range(4):
        buf = io.BytesIO()
        pq.write_table(pa.table({"v": [i, i + 1]}), buf)
        local_s3.put(bucket, f"t/k={i % 2}/p{i}.parquet", buf.getvalue())
    root = f"s3a://{bucket}/t"
    assert refresh_metadata(root, None) == 4
    assert {k for k in local_s3.keys(bucket) if "drill" in k} == {
        f"t/{d}{name}"
        for d in ("", "k=0/", "k=1/")
        for name in (SUMMARY_FILE, FILES_FILE, DIRECTORIES_FILE)
    }
    clear_footers()
    footer_reads.clear()
    selection = select_files(root)
    with local_s3.recording() as requests:
        assert use_metadata_cache(selection)
        rows = [planning_footer(f.path, f.size, f.mtime).num_rows for f in selection.files]
    assert rows == [2, 2, 2, 2]
    assert footer_reads == []
    assert not [r for r in requests if r[1].endswith(".parquet")]
    # an object added after the refresh: planned from the objects again
    clear_footers()
    buf = io.BytesIO()
    pq.write_table(pa.table({"v": [9]}), buf)
    local_s3.put(bucket, "t/k=1/late.parquet", buf.getvalue())
    assert not use_metadata_cache(select_files(root))
