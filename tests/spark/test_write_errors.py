"""Write failures found in an exception chain: the rules of ``write_failure``, without Spark.

The same failures through real read-only and full mounts are in ``test_write_failures.py``.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from auger.errors import ErrorKind, UserError
from auger.spark.errors import encode_user_error, unwrap_spark_error, write_errors, write_failure
from auger.storage.drill_json import write_atomically
from auger.storage.table_files import StorageStrategy


class Py4JJavaError(Exception):
    """Stands in for py4j's error: its text carries the Java trace."""


NO_SPACE_TRACE = """An error occurred while calling o101.csv.
: org.apache.spark.SparkException: [TASK_WRITE_FAILED] Task failed while writing rows to \
file:/w/.t.auger-staging-1/_temporary/0/_temporary/attempt_1/part-00000-c000.csv. SQLSTATE: 58030
\tat org.apache.spark.sql.errors.QueryExecutionErrors$.taskFailedWhileWritingRowsError(x.scala:1)
Caused by: com.univocity.parsers.common.TextWritingException: Error writing row.
Internal state when error was thrown: recordCount=371, recordData=[Read-only file system]
Caused by: java.lang.IllegalStateException: Error closing the output.
Caused by: org.apache.hadoop.fs.FSError: java.io.IOException: No space left on device
Caused by: java.io.IOException: No space left on device
\t... 46 more
"""

MKDIRS_TRACE = """An error occurred while calling o168.csv.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 5.0 failed \
1 times, most recent failure: Lost task 0.0 in stage 5.0 (TID 7) (192.0.2.2 executor driver): \
java.io.IOException: Mkdirs failed to create file:{path}/_temporary/0/_temporary/attempt_1 \
(exists=false, cwd=file:/work)
Caused by: java.io.IOException: Mkdirs failed to create file:{path}/_temporary/0 (exists=false)
"""


@pytest.mark.parametrize(
    ("code", "kind", "words"),
    [
        (errno.EROFS, ErrorKind.DATA_WRITE, "the file system is read-only"),
        (errno.ENOSPC, ErrorKind.RESOURCE, "no space left on device"),
        (errno.EDQUOT, ErrorKind.RESOURCE, "the disk quota is exceeded"),
        (errno.ELOOP, ErrorKind.DATA_WRITE, "the path runs into a loop of symbolic links"),
        (errno.EACCES, ErrorKind.PERMISSION, "permission denied"),
    ],
)
def test_os_errors_name_what_where_and_why(code: int, kind: ErrorKind, words: str) -> None:
    exc = OSError(code, os.strerror(code), "/w/.v.view.drill.1.tmp")
    error = write_failure(exc, "view [v]", "/w/v.view.drill")
    assert error is not None
    assert error.kind is kind
    assert (
        error.summary == f"{kind.value} ERROR: Cannot write view [v] to [/w/v.view.drill]: {words}"
    )
    assert error.context[0].startswith("Fix: ")


def test_an_os_error_deeper_in_the_chain_is_found() -> None:
    try:
        try:
            raise OSError(errno.EROFS, "Read-only file system")
        except OSError as inner:
            raise RuntimeError("writing failed") from inner
    except RuntimeError as outer:
        error = write_failure(outer, "table [t]", "/w/t")
    assert error is not None and error.kind is ErrorKind.DATA_WRITE


def test_the_innermost_java_cause_is_read_and_quoted_data_is_not() -> None:
    error = write_failure(Py4JJavaError(NO_SPACE_TRACE), "table [t]", "/w/t")
    assert error is not None
    assert (
        error.summary == "RESOURCE ERROR: Cannot write table [t] to [/w/t]: no space left on device"
    )
    assert "recordData" not in str(error)


def test_data_that_looks_like_a_cause_is_not_a_cause() -> None:
    trace = NO_SPACE_TRACE.replace("java.io.IOException: No space left on device", "x.Y: boom")
    assert write_failure(Py4JJavaError(trace), "table [t]", "/w/t") is None


def test_mkdirs_failed_is_explained_by_looking_at_the_path(tmp_path: Path) -> None:
    os.symlink("b", tmp_path / "a")
    os.symlink("a", tmp_path / "b")
    target = tmp_path / "a" / "t"
    exc = Py4JJavaError(MKDIRS_TRACE.format(path=target))
    error = write_failure(exc, "table [a/t]", str(target))
    assert error is not None
    assert error.summary == (
        f"DATA_WRITE ERROR: Cannot write table [a/t] to [{target}]: "
        "the path runs into a loop of symbolic links"
    )


def test_failures_of_the_query_itself_are_not_write_failures(tmp_path: Path) -> None:
    encoded = encode_user_error(UserError.data_read("Unbalanced quote", ["File: /d/a.csv"]))
    assert write_failure(Py4JJavaError(f"Task failed: {encoded}"), "table [t]", "/w/t") is None
    assert write_failure(ValueError("bad"), "table [t]", "/w/t") is None
    with pytest.raises(FileExistsError), write_errors("table [t]", str(tmp_path)):
        raise FileExistsError(str(tmp_path))


def test_a_spark_write_failure_without_a_caller_is_not_a_system_error() -> None:
    error = unwrap_spark_error(Py4JJavaError(NO_SPACE_TRACE))
    assert error.kind is ErrorKind.RESOURCE
    assert error.summary == "RESOURCE ERROR: Cannot write data to [/w/.t.auger-staging-1]: " + (
        "no space left on device"
    )


def test_write_atomically_removes_its_temporary_file_when_the_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        write_atomically(str(tmp_path / "v.view.drill"), "{}", 0o664)
    assert os.listdir(tmp_path) == []


def test_create_path_removes_the_folders_it_made_when_it_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_chmod = os.chmod

    def chmod(path: str, mode: int) -> None:
        if str(path).endswith("/c"):
            raise OSError(errno.EROFS, "Read-only file system")
        real_chmod(path, mode)

    monkeypatch.setattr(os, "chmod", chmod)
    with pytest.raises(OSError):
        StorageStrategy("002").create_path(str(tmp_path / "a" / "b" / "c"))
    assert os.listdir(tmp_path) == []
