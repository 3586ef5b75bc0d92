"""An embedded run says nothing on standard error that the user did not cause: no notice from
the JVM at every start (``Using incubator modules``), while what else the JVM writes still shows."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from auger.spark.jvm_stderr import jvm_notice_filtered

NOTICE = "WARNING: Using incubator modules: jdk.incubator.vector"


def test_a_process_started_in_the_block_loses_the_notice_only(
    capfd: pytest.CaptureFixture[str],
) -> None:
    with jvm_notice_filtered():
        child = subprocess.Popen(
            ["sh", "-c", f"echo '{NOTICE}' >&2; echo 'a real error' >&2; sleep 0.2; echo late >&2"]
        )
    # the child keeps the pipe after the block: what it writes later still arrives
    assert child.wait(30) == 0
    seen = ""
    deadline = time.monotonic() + 30
    while "late" not in seen and time.monotonic() < deadline:  # copied by another thread
        time.sleep(0.05)
        seen += capfd.readouterr().err
    assert "a real error" in seen and "late" in seen
    assert NOTICE not in seen


@pytest.mark.spark
@pytest.mark.slow
def test_an_embedded_run_prints_no_jvm_notice() -> None:
    script = (
        "import auger\n"
        "with auger.connect() as conn:\n"
        "    print(conn.execute('SELECT COUNT(*) FROM cp.`region.json`').fetchall())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[(110,)]"
    assert "incubator" not in done.stderr
