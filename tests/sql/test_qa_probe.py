"""Inputs a Drill user meets that earlier tests did not cover (a QA pass over the DB-API)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.sql.helpers import error, names, rows


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("qa_probe")
    (root / "empty").mkdir()
    (root / "only_hidden").mkdir()
    (root / "only_hidden" / "_SUCCESS").write_text("")
    (root / "only_hidden" / ".part-0.crc").write_text("crc")
    (root / "maps.json").write_text('{"m": {"a": "x", "b": 1}}\n{"m": {"a": "y", "b": 2}}\n')
    (root / "nums.json").write_text('{"m": {"a": 1, "b": 2.5}}\n')
    (root / "scalars.json").write_text('{"a": 1, "l": [1, 2], "m": {"x": "s"}}\n')
    return root


@pytest.mark.parametrize("table", ["empty", "only_hidden"])
def test_directory_without_visible_files_is_an_empty_table(
    conn: Any, files: Path, table: str
) -> None:
    # Drill: a directory with nothing to read is an empty, schemaless table, not an error
    # about a file of unknown format.
    path = f"dfs.`{files}/{table}`"
    assert rows(conn, f"SELECT * FROM {path}") == []
    assert rows(conn, f"SELECT COUNT(*) FROM {path}") == [(0,)]
    assert names(conn, f"SELECT a FROM {path}") == ["a"]
    assert rows(conn, f"SELECT a FROM {path}") == []


def test_kvgen_of_mixed_value_types_is_a_clear_error(conn: Any, files: Path) -> None:
    # Without the check Spark cast 'x' to BIGINT and failed with a CAST_INVALID_INPUT hint
    # about try_cast, nothing to do with the query the user wrote.
    msg = error(conn, f"SELECT KVGEN(m) FROM dfs.`{files}/maps.json`")
    assert "UNSUPPORTED_OPERATION ERROR: kvgen function only supports maps" in msg
    assert "a VARCHAR, b BIGINT" in msg
    assert "CAST_INVALID_INPUT" not in msg


def test_kvgen_of_numbers_of_two_widths_still_works(conn: Any, files: Path) -> None:
    got = rows(conn, f"SELECT FLATTEN(KVGEN(m)) AS kv FROM dfs.`{files}/nums.json`")
    assert [(r[0]["key"], r[0]["value"]) for r in got] == [("a", 1.0), ("b", 2.5)]


@pytest.mark.parametrize(
    ("expr", "projected", "column"),
    [
        ("t.a[0]", "a[0]", "`a` BIGINT"),
        ("t.a.b", "a {b}", "`a` BIGINT"),
        ("t.m.x.y", "x {y}", "`x` VARCHAR"),  # Drill names the member it checks
    ],
)
def test_column_used_against_its_type_is_drills_projection_error(
    conn: Any, files: Path, expr: str, projected: str, column: str
) -> None:
    # Before: Spark's DATATYPE_MISMATCH about "get(a, 0)", or a SYSTEM error
    # INVALID_EXTRACT_BASE_FIELD_TYPE, for what Drill's reader refuses as a VALIDATION error.
    msg = error(conn, f"SELECT {expr} FROM dfs.`{files}/scalars.json` t")
    assert (
        "VALIDATION ERROR: Reader column type not compatible with projection specification" in msg
    )
    assert f"Projected column: {projected}" in msg
    assert f"column: {column}" in msg


def test_arrays_and_maps_used_as_such_still_read(conn: Any, files: Path) -> None:
    assert rows(conn, f"SELECT t.l[1], t.m.x, t.m.zz FROM dfs.`{files}/scalars.json` t") == [
        (2, "s", None)
    ]


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (
            "SELECT CAST(123456 AS DECIMAL(4, 0)) FROM (VALUES(1))",
            "VALIDATION ERROR: Value 123456 overflows specified precision 4 with scale 0",
        ),
        (
            "SELECT CAST(12345.123 AS DECIMAL(4, 0)) FROM (VALUES(1))",
            "VALIDATION ERROR: Value 12345.123 overflows specified precision 4 with scale 0",
        ),
        (
            "SELECT CAST(1 AS DECIMAL(3, 5)) FROM (VALUES(1))",
            "VALIDATION ERROR: Expected scale less than or equal to precision, "
            "but was precision 3 and scale 5",
        ),
    ],
)
def test_decimal_cast_errors_use_drills_texts(conn: Any, sql: str, message: str) -> None:
    # Drill's TestCastFunctions texts; Spark's were SYSTEM errors advising spark.sql.ansi.enabled
    msg = error(conn, sql)
    assert message in msg
    assert "ansi" not in msg


def test_decimal_error_mapping_without_spark() -> None:
    from auger.errors import ErrorKind
    from auger.spark.errors import unwrap_spark_error

    err = unwrap_spark_error(
        RuntimeError(
            "[NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION]  -7.5 cannot be represented as "
            'Decimal(2, 1). If necessary set "spark.sql.ansi.enabled" to "false".'
        )
    )
    assert err.kind is ErrorKind.VALIDATION
    assert err.message == "Value -7.5 overflows specified precision 2 with scale 1"
    # an unrelated out-of-range text keeps Spark's words rather than a made-up value
    other = unwrap_spark_error(RuntimeError("[NUMERIC_VALUE_OUT_OF_RANGE] something else"))
    assert "overflows" not in other.message


def test_a_failure_passed_between_spark_threads_says_its_cause() -> None:
    from auger.errors import ErrorKind
    from auger.spark.errors import unwrap_spark_error

    text = (
        "An error occurred while calling o417.getResult.\n"
        ": org.apache.spark.SparkException: Exception thrown in awaitResult: \n"
        "\tat org.apache.spark.util.SparkThreadUtils$.awaitResult(SparkThreadUtils.scala:56)\n"
        "\tat org.apache.spark.security.SocketAuthServer.getResult(SocketAuthServer.scala:126)\n"
        "Caused by: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 "
        "in stage 3.0 failed 1 times, most recent failure: Lost task 0.0 in stage 3.0 (TID 3) "
        "(host executor driver): java.io.IOException: No space left on device\n"
        "\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(x.scala:1)\n"
    )

    class Py4JJavaError(Exception):  # py4j's, as its name tells auger
        pass

    err = unwrap_spark_error(Py4JJavaError(text))
    assert err.kind is ErrorKind.SYSTEM
    assert err.message.startswith("Job aborted due to stage failure: Task 0 in stage 3.0")
    assert err.message.endswith("java.io.IOException: No space left on device")
    # without a cause told, the wrapper's words stay
    alone = unwrap_spark_error(Py4JJavaError(text.split("Caused by")[0]))
    assert "awaitResult" in alone.message
