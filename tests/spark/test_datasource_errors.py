"""A UserError raised anywhere in the data source reaches the user as itself (kind, message,
file, line), and Spark's own errors map onto Drill's kinds."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from auger.errors import ErrorKind, UserError
from auger.scan.spec import FileSplit, ScanSpec
from auger.spark.errors import encode_user_error, unwrap_spark_error


def caught(action: Any) -> UserError:
    with pytest.raises(Exception) as info:
        action()
    return unwrap_spark_error(info.value)


def test_encode_decode_round_trip_keeps_everything() -> None:
    err = UserError.data_read("Bad value ] [ in row", ["File: /x/y.csv", "Line: 7", "é ü"])
    back = unwrap_spark_error(RuntimeError("noise before " + encode_user_error(err) + " after"))
    assert (back.kind, back.message, back.context) == (err.kind, err.message, err.context)
    assert pickle.loads(pickle.dumps(back)).context == err.context


def test_error_in_schema_at_load(spark: Any, tmp_path: Path) -> None:
    err = caught(lambda: spark.read.format("auger").load(str(tmp_path / "nope.json")))
    assert err.kind is ErrorKind.VALIDATION
    assert "nope.json" in err.message


def test_discovery_error_names_file_and_line(spark: Any, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1}\n{"a": 2}\n{"a": \n')
    err = caught(lambda: spark.read.format("auger").load(str(bad)))
    assert err.kind is ErrorKind.DATA_READ
    assert f"File: {bad}" in err.context
    assert any(c.startswith("Line: ") for c in err.context)


def test_error_in_partitions(spark: Any, tmp_path: Path) -> None:
    spec = ScanSpec(
        "weird", "no_such_reader", {}, str(tmp_path), (FileSplit("/x"),), "a INT", {"a": "table"}
    )
    df = spark.read.format("auger").schema("a int").option("spec", spec.to_json()).load()
    err = caught(df.collect)
    assert err.kind is ErrorKind.VALIDATION
    assert "no_such_reader" in err.message


def test_error_in_read_names_file_and_line(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "late.json"
    path.write_text("".join(f'{{"a": {i}}}\n' for i in range(50)) + '{"a": }\n')
    # only the first 10 records are sampled for the schema: the bad one is met by the task
    assert caught(lambda: spark.read.format("auger").load(str(path))).kind is ErrorKind.DATA_READ
    df = spark.read.format("auger").option("auger.scan.json_sample_rows", "10").load(str(path))
    assert df.columns == ["a"]
    err = caught(df.collect)
    assert err.kind is ErrorKind.DATA_READ
    assert f"File: {path}" in err.context
    assert any(c.startswith("Line: 51") for c in err.context)


def test_conversion_conflict_names_file_column_and_both_types(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "conv.json"
    path.write_text('{"a": "12"}\n{"a": "twelve"}\n')
    df = spark.read.format("auger").schema("a int").load(str(path))
    err = caught(df.collect)
    assert err.kind is ErrorKind.DATA_READ
    assert f"File: {path}" in err.context and "Column: a" in err.context
    assert "INT" in err.message and "string" in err.message
    ok = spark.read.format("auger").schema("a string").load(str(path)).collect()
    assert [r.a for r in ok] == ["12", "twelve"]


def test_long_error_context_is_not_truncated(spark: Any, tmp_path: Path) -> None:
    long_name = "d" * 200
    path = tmp_path / long_name / ("x" * 150 + ".json")
    path.parent.mkdir()
    path.write_text('{"a": 1}\n{"a": [\n')
    df = spark.read.format("auger").schema("a bigint").load(str(path.parent))
    err = caught(df.collect)
    assert f"File: {path}" in err.context


@pytest.mark.parametrize(
    ("sql", "kind", "words"),
    [
        ("SELECT no_such_function(1)", ErrorKind.VALIDATION, "No match found for function"),
        ("SELECT no_such_column FROM range(1)", ErrorKind.VALIDATION, "Column 'no_such_column'"),
        ("SELECT CAST('abc' AS INT)", ErrorKind.FUNCTION, "cast value 'abc' to INTEGER"),
        ("SELECT 1 / 0", ErrorKind.SYSTEM, "ArithmeticException: / by zero"),
        ("SELEC 1", ErrorKind.PARSE, 'Encountered "SELEC"'),
    ],
)
def test_spark_errors_map_to_drill_kinds_and_words(
    spark: Any, sql: str, kind: ErrorKind, words: str
) -> None:
    err = caught(lambda: spark.sql(sql).collect())
    assert err.kind is kind
    assert words in err.message
    # Spark's condition, SQLSTATE and advice stay in the log
    assert "SQLSTATE" not in str(err) and "[" not in err.message and "\n" not in err.message
    assert "spark.sql" not in str(err) and "try_" not in str(err)


@pytest.mark.parametrize(
    "error",
    [
        "[FAILED_TO_PARSE_TOO_COMPLEX] The statement ... was too complex to parse.",
        "An error occurred while calling o41.sql.\n: java.lang.StackOverflowError\n\tat x.y",
    ],
)
def test_spark_running_out_of_stack_on_a_deep_query_is_a_parse_error(error: str) -> None:
    # Before: SYSTEM ERROR
    err = unwrap_spark_error(RuntimeError(error))
    assert err.kind is ErrorKind.PARSE
    assert err.message == "The query nests too deeply for Spark to plan"


def test_spark_too_complex_statement_through_spark(spark: Any) -> None:
    # a sum of 3,000 terms is deeper than Spark's parser goes
    err = caught(lambda: spark.sql("SELECT " + "+".join(["1"] * 3000)).collect())
    assert (err.kind, err.message) == (
        ErrorKind.PARSE,
        "The query nests too deeply for Spark to plan",
    )


def test_errors_through_sql_keep_their_kind(conn: Any, data_dir: Path) -> None:
    from auger.dbapi import DataError

    bad = data_dir / "errs" / "b.csv"
    bad.parent.mkdir()
    bad.write_bytes(b"ok,1\n\xff\xfe\n")
    with pytest.raises(DataError) as info:
        conn.cursor().execute("SELECT columns[0] FROM dfs.data.`errs`").fetchall()
    assert str(info.value).startswith("DATA_READ ERROR")
    assert str(bad) in str(info.value)


def test_unreachable_spark_connect_master_is_one_clear_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "from auger.errors import UserError\n"
        "from auger.spark.bootstrap import get_spark\n"
        "try:\n"
        "    get_spark('sc://127.0.0.1:1')\n"
        "except UserError as exc:\n"
        "    print('KIND', exc.kind.value)\n"
        "    print('MSG', exc.message)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert "KIND SYSTEM" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    assert "MSG Cannot connect to Spark Connect at sc://127.0.0.1:1" in proc.stdout


def test_unknown_function_is_named_as_the_user_wrote_it_with_argument_families() -> None:
    spark_text = (
        "[UNRESOLVED_ROUTINE] Cannot resolve routine `NOSUCHFN` on search path "
        "[`system`.`builtin`, `system`.`session`, `spark_catalog`.`default`]. "
        "SQLSTATE: 42883; line 1 pos 896"
    )
    sql = "SELECT noSuchFn(a, 'x', CAST(b AS INT), DATE '2020-01-01') FROM t"
    err = unwrap_spark_error(RuntimeError(spark_text), sql)
    assert err.kind is ErrorKind.VALIDATION
    assert err.message == (
        "No match found for function signature noSuchFn(<ANY>, <CHARACTER>, <NUMERIC>, <DATE>)"
    )
    assert err.context == [f"SQL Query: {sql}"]


def test_unmapped_spark_text_loses_condition_advice_and_positions() -> None:
    err = unwrap_spark_error(
        RuntimeError(
            '[DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN] Cannot resolve "x" due to data type '
            'mismatch: Filter expression "x" of type "INT" is not a boolean. SQLSTATE: 42K09; '
            "line 1 pos 40"
        )
    )
    assert err.kind is ErrorKind.VALIDATION
    assert err.message == 'Type mismatch: Filter expression "x" of type "INT" is not a boolean.'
    advice = unwrap_spark_error(
        RuntimeError(
            "[SOME_NEW_CONDITION] It failed. Use `try_thing` to tolerate it. If necessary set "
            '"spark.sql.ansi.enabled" to "false" to bypass this error. SQLSTATE: 22012'
        )
    )
    assert advice.message == "It failed."


def _pyspark_text(action: Any) -> str:
    """What a plain PySpark user reads: ``str()`` of the exception PySpark raises."""
    with pytest.raises(Exception) as info:
        action()
    return str(info.value)


def test_pyspark_users_read_drill_s_message_first(spark: Any, tmp_path: Path) -> None:
    text = _pyspark_text(lambda: spark.read.format("auger").load(str(tmp_path / "nope.json")))
    # Spark's own prefix, then Drill's words: no traceback, no encoded payload
    head = text.split("Failed to create Python data source instance: ", 1)[-1]
    assert head.startswith("VALIDATION ERROR: Table ["), text
    assert "Traceback" not in text and "AUGER-USER-ERROR" not in text and "RuntimeError" not in text
    # and auger still restores the error whole from that text
    err = caught(lambda: spark.read.format("auger").load(str(tmp_path / "nope.json")))
    assert err.kind is ErrorKind.VALIDATION and "nope.json" in err.message


def test_pyspark_users_read_a_task_s_error_with_its_file_and_line(
    spark: Any, tmp_path: Path
) -> None:
    path = tmp_path / "late.json"
    path.write_text("".join(f'{{"a": {i}}}\n' for i in range(50)) + '{"a": }\n')
    df = spark.read.format("auger").option("auger.scan.json_sample_rows", "10").load(str(path))
    text = _pyspark_text(df.collect)
    body = text.split("An exception was thrown from the Python worker:", 1)[-1].lstrip()
    assert body.startswith("DATA_READ ERROR: "), text
    assert f"File: {path}" in body and "Line: 51" in body
    assert "Traceback" not in text and "AUGER-USER-ERROR" not in text
    err = caught(df.collect)
    assert err.kind is ErrorKind.DATA_READ and f"File: {path}" in err.context


def test_a_user_s_own_udf_error_keeps_its_traceback_after_an_auger_error(
    spark: Any, tmp_path: Path
) -> None:
    from pyspark.sql.functions import udf

    _pyspark_text(lambda: spark.read.format("auger").load(str(tmp_path / "nope.json")))

    @udf("int")
    def boom(x: int) -> int:
        raise ValueError("the user's own bug")

    text = _pyspark_text(lambda: spark.range(1).select(boom("id")).collect())
    assert "the user's own bug" in text and "Traceback" in text
