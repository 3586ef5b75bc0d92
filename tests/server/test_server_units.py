"""Server pieces that need no Spark: password hashes, the users file, request parsing, row
limits and the profile store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auger.errors import UserError
from auger.server.profiles import Profile, ProfileStore
from auger.server.query_request import BadRequest, QueryRequest, effective_limit
from auger.server.settings import ServerSettings
from auger.server.users import UserStore, hash_password, verify_password


def test_password_hash_round_trip_and_salt() -> None:
    a, b = hash_password("pw"), hash_password("pw")
    assert a != b  # per-user salt
    assert verify_password("pw", a) and verify_password("pw", b)
    assert not verify_password("PW", a)
    assert not verify_password("pw", "plain-text") and not verify_password("pw", "scrypt$x")


def test_user_store_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "users.json"
    store = UserStore(str(path))
    assert store.authenticate("ann", "x") is None
    store.set_password("ann", "secret", admin=True)
    store.set_password("ben", "other")
    assert store.authenticate("ann", "secret").admin is True  # type: ignore[union-attr]
    assert store.authenticate("ben", "other").admin is False  # type: ignore[union-attr]
    assert store.authenticate("ben", "secret") is None
    store.set_password("ann", "changed")  # role kept
    assert store.authenticate("ann", "changed").admin is True  # type: ignore[union-attr]
    assert "secret" not in path.read_text()
    assert store.delete("ben") and store.get("ben") is None
    with pytest.raises(UserError):
        store.set_password("has space", "x")


def test_inline_users_from_config(tmp_path: Path) -> None:
    store = UserStore(
        str(tmp_path / "none.json"),
        {"cfg": {"password_hash": hash_password("p"), "admin": True}},
    )
    assert store.authenticate("cfg", "p") is not None


def test_query_request_parsing() -> None:
    r = QueryRequest.from_json(
        {"queryType": "sql", "query": " select 1 ;; ", "autoLimit": "10", "userName": None}
    )
    assert r.query_type == "SQL" and r.auto_limit == 10 and r.user_name is None
    assert r.statement() == "select 1"
    assert QueryRequest.from_json({"query": "x", "autoLimit": "abc"}).auto_limit == 0
    assert QueryRequest.from_json({"query": "x", "autoLimit": -1}).auto_limit == 0
    assert QueryRequest.from_json({"query": "x", "autoLimit": 7}).auto_limit == 7
    assert QueryRequest.from_json({"query": "x", "defaultSchema": ""}).default_schema is None
    for bad in ([], {"queryType": "SQL"}, {"query": 1}, {"query": "x", "options": [1]}):
        with pytest.raises(BadRequest):
            QueryRequest.from_json(bad)


@pytest.mark.parametrize(
    ("requested", "max_rows", "expected"),
    [(0, 0, 0), (10, 0, 10), (0, 5, 5), (10, 5, 5), (3, 5, 3)],
)
def test_effective_limit(requested: int, max_rows: int, expected: int) -> None:
    assert effective_limit(requested, max_rows) == expected


def test_profile_store_persists_and_prunes(tmp_path: Path) -> None:
    store = ProfileStore(str(tmp_path), keep=2)
    ids = [f"00000000-0000-0000-0000-00000000000{i}" for i in range(3)]
    for i, qid in enumerate(ids):
        store.save(Profile(qid, f"q{i}", "u", "s", start=1000 + i, end=2000, state="COMPLETED"))
    assert [p.query_id for p in store.list()] == [ids[2], ids[1]]
    assert sorted(f.name for f in tmp_path.glob("*.json")) == sorted(f"{q}.json" for q in ids[1:])
    running = Profile("11111111-1111-1111-1111-111111111111", "q", "u", "s", start=5)
    store.save(running)
    reopened = ProfileStore(str(tmp_path), keep=2)
    again = reopened.get(running.query_id)
    assert again is not None and again.state == "FAILED"  # the server stopped mid-query
    data = reopened.get(ids[2]).to_json("host")  # type: ignore[union-attr]
    assert data["state"] == 2 and data["query"] == "q2" and data["id"]["part2"] == 2
    json.dumps(data)


def test_settings_validation() -> None:
    s = ServerSettings.from_config({"port": "9000", "auth": True})
    assert s.port == 9000 and s.auth and s.session_timeout == 3600
    with pytest.raises(UserError):
        ServerSettings.from_config({"anonymous_sessions": "sometimes"})
    with pytest.raises(UserError):
        ServerSettings.from_config({"port": "eighty"})


def test_profile_timings_and_plan_text(tmp_path: Path) -> None:
    qid = "22222222-2222-2222-2222-222222222222"
    plan = {
        "name": "HashAggregate",
        "detail": "HashAggregate(keys=[k])",
        "rows": 3,
        "timeMs": 1.5,
        "children": [{"name": "Scan", "detail": "Scan json", "rows": 9, "children": []}],
    }
    done = Profile(qid, "q", "u", "s", start=1000, end=1900, state="COMPLETED", plan=plan)
    done.run_start, done.planned = 1010, 1300
    data = done.to_json("host")
    assert data["timings"] == {"queued": 10, "planning": 290, "execution": 600}
    assert data["plan"] == "HashAggregate(keys=[k])\n  Scan json"
    assert data["planTree"] == plan
    # a query still waiting for a thread has reached no phase yet
    waiting = Profile(qid, "q", "u", "s", start=1000)
    assert waiting.timings() == {"queued": None, "planning": None, "execution": None}
    # profiles written before these fields existed still load
    store = ProfileStore(str(tmp_path))
    store.save(done)
    old = json.loads((tmp_path / f"{qid}.json").read_text())
    for key in ("plan", "run_start", "planned"):
        old.pop(key)
    (tmp_path / f"{qid}.json").write_text(json.dumps(old))
    reloaded = ProfileStore(str(tmp_path)).get(qid)
    assert reloaded is not None and reloaded.to_json("h")["plan"] == ""


def test_log_lines_by_name_only(tmp_path: Path) -> None:
    from auger.server.resources import LOG_LINES, log_lines

    (tmp_path / "server-1.log").write_text("".join(f"line {i}\n" for i in range(LOG_LINES + 5)))
    (tmp_path / "sub").mkdir()
    lines = log_lines(str(tmp_path), "server-1.log")
    assert lines is not None and len(lines) == LOG_LINES
    assert lines[0] == "line 5" and lines[-1] == f"line {LOG_LINES + 4}"
    for bad in ("../server-1.log", "sub", ".x", "", "missing.log", "sub/../server-1.log"):
        assert log_lines(str(tmp_path), bad) is None, bad
