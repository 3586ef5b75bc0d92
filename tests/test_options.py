from typing import Any

import pytest

from auger.errors import UserError
from auger.options import SessionOptions, SystemOptions


def test_session_overrides_system_and_reset_falls_back() -> None:
    system = SystemOptions()
    a, b = SessionOptions(system), SessionOptions(system)
    a.set("store.format", "json")
    assert a.get("store.format") == "json"
    assert b.get("store.format") == "parquet"
    system.set("store.format", "csv")
    assert b.get("store.format") == "csv"
    a.reset("store.format")
    assert a.get("store.format") == "csv"


def test_types_are_checked() -> None:
    opts = SessionOptions(SystemOptions())
    opts.set("store.json.all_text_mode", "true")
    assert opts.get("store.json.all_text_mode") is True
    with pytest.raises(UserError):
        opts.set("store.json.all_text_mode", 3)
    with pytest.raises(UserError):
        opts.set("exec.query.max_rows", "many")


def test_unknown_option_is_a_validation_error() -> None:
    with pytest.raises(UserError) as info:
        SessionOptions(SystemOptions()).set("no.such.option", 1)
    assert "VALIDATION ERROR" in str(info.value) and "no.such.option" in str(info.value)


def test_values_report_scope() -> None:
    opts = SessionOptions(SystemOptions())
    opts.set("store.format", "json")
    scopes = {v.name: v.scope for v in opts.values()}
    assert scopes["store.format"] == "SESSION"
    assert scopes["store.json.all_text_mode"] == "BOOT"


def test_a_non_admin_session_cannot_raise_what_the_server_caps() -> None:
    system = SystemOptions({"auger.scan.local_bytes": 1000, "auger.result.max_rows": 50})
    bob = SessionOptions(system, "bob")
    bob.set("auger.scan.local_bytes", 10)  # lowering is allowed, and 0 turns it off
    bob.set("auger.scan.local_bytes", 0)
    bob.set("auger.result.max_rows", 20)
    for name, value in (
        ("auger.scan.local_bytes", 1001),
        ("auger.scan.local_limit_rows", 10_001),
        ("auger.result.max_rows", 51),
        ("auger.result.max_rows", 0),  # no limit at all
    ):
        with pytest.raises(UserError) as info:
            bob.set(name, value)
        assert info.value.kind.value == "PERMISSION"
        assert name in str(info.value) and "[bob]" in str(info.value)
    assert bob.get("auger.result.max_rows") == 20
    admin = SessionOptions(system)  # an administrator's session is not capped
    admin.set("auger.scan.local_bytes", 10**9)
    assert admin.get("auger.scan.local_bytes") == 10**9
    system.set("auger.scan.local_bytes", 5000)  # the cap is the system value as it is now
    bob.set("auger.scan.local_bytes", 5000)


def test_an_engine_default_replaces_the_definition_and_reset_returns_to_it() -> None:
    system = SystemOptions({}, {"auger.cache.enabled": False})
    session = SessionOptions(system)
    assert session.get("auger.cache.enabled") is False
    row = next(v for v in session.values() if v.name == "auger.cache.enabled")
    assert (row.value, row.default, row.scope) == (False, False, "BOOT")
    system.set("auger.cache.enabled", True)
    assert session.get("auger.cache.enabled") is True
    system.reset("auger.cache.enabled")
    assert session.get("auger.cache.enabled") is False
    assert SessionOptions(SystemOptions()).get("auger.cache.enabled") is True


@pytest.mark.parametrize(
    ("config", "enabled"),
    [
        ({"spark": {"master": "local[2]"}}, True),
        ({}, True),  # the embedded engine's default master is local
        ({"spark": {"master": "spark://head:7077"}}, False),
        ({"spark": {"master": "sc://localhost:15002"}}, False),
        ({"spark": {"master": "yarn"}, "options": {"auger.cache.location": "s3a://b/c"}}, True),
        # option names are read without regard to case, this one too
        ({"spark": {"master": "yarn"}, "options": {"Auger.Cache.Location": "/shared/c"}}, True),
        ({"spark": {"master": "yarn"}, "options": {"auger.cache.location": "  "}}, False),
        ({"spark": {"master": "local[2]"}, "options": {"auger.cache.enabled": False}}, False),
    ],
)
def test_the_raw_file_cache_is_on_by_default_only_where_spark_runs_here(
    config: dict[str, Any], enabled: bool
) -> None:
    """A directory on this machine is not a cluster's executors': there the cache waits for a
    location they reach. Nothing here starts Spark (the engine starts it on first use)."""
    from auger.engine import Engine

    engine = Engine(config)
    try:
        session = engine.open_session("tester")
        assert session.options.get("auger.cache.enabled") is enabled
    finally:
        engine.shutdown()
