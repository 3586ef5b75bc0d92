from importlib.metadata import entry_points

import pytest

from auger import config
from auger.config import (
    DEFAULT_FORMATS,
    FORMAT_ENTRY_POINTS,
    PLUGIN_DEFAULT_FORMATS,
    FormatConfig,
    default_formats,
    format_option,
    load_config,
    snake_case,
)
from auger.errors import UserError


def test_embedded_defaults_have_dfs_and_cp(tmp_path) -> None:
    cfg = load_config({"storage": {"dfs": {"workspaces": {"tmp": {"location": str(tmp_path)}}}}})
    assert cfg.workspace("dfs.root") is not None
    assert cfg.workspace("dfs.tmp")[1].location == str(tmp_path)  # type: ignore[index]
    assert cfg.workspace("dfs.tmp")[1].writable  # type: ignore[index]
    plugin, ws = cfg.workspace("cp")  # type: ignore[misc]
    assert not ws.writable and (plugin.format_for("x/employee.json") or {}).name == "json"  # type: ignore[union-attr]
    assert set(plugin.formats) == set(default_formats())
    assert {"csv", "tsv", "psv", "csvh", "json", "parquet"} <= set(plugin.formats)


def test_toml_file_is_read(tmp_path) -> None:
    ws = tmp_path / "ws"
    cfg_file = tmp_path / "auger.toml"
    cfg_file.write_text(
        f'[storage.dfs.workspaces.tmp]\nlocation = "{ws}"\nwritable = true\n'
        '[spark]\nmaster = "local[1]"\n'
    )
    cfg = load_config(str(cfg_file))
    assert cfg.spark_master == "local[1]"
    assert ws.is_dir()  # start-up creates the temporary workspace directory


def test_temporary_workspace_must_exist() -> None:
    with pytest.raises(UserError) as info:
        load_config({"exec": {"default_temporary_workspace": "dfs.nosuch"}})
    assert "dfs.nosuch" in str(info.value)


def test_temporary_workspace_is_case_sensitive() -> None:
    with pytest.raises(UserError):
        load_config({"exec": {"default_temporary_workspace": "DFS.TMP"}})


def test_temporary_workspace_must_be_writable(tmp_path) -> None:
    with pytest.raises(UserError) as info:
        load_config(
            {
                "storage": {
                    "dfs": {"workspaces": {"tmp": {"location": str(tmp_path), "writable": False}}}
                }
            }
        )
    assert "immutable" in str(info.value)


def test_temporary_workspace_must_be_file_based() -> None:
    with pytest.raises(UserError) as info:
        load_config(
            {
                "storage": {"mongo": {"type": "mongo"}},
                "exec": {"default_temporary_workspace": "mongo.x"},
            }
        )
    assert "VALIDATION ERROR" in str(info.value)


def test_bad_toml_is_a_parse_error(tmp_path) -> None:
    f = tmp_path / "bad.toml"
    f.write_text("[storage\n")
    with pytest.raises(UserError) as info:
        load_config(str(f))
    assert str(info.value).startswith("PARSE ERROR")


def test_declared_formats_add_to_the_defaults(tmp_path) -> None:
    # Before: listing csv switched off every other format ("No format plugin for file [x.csvh]")
    cfg = load_config(
        {
            "storage": {
                "dfs": {
                    "workspaces": {"tmp": {"location": str(tmp_path), "writable": True}},
                    "formats": {
                        "csv": {"type": "text", "extensions": ["csv"], "delimiter": ";"},
                        "logs": {"type": "text", "extensions": ["log"], "delimiter": " "},
                    },
                }
            }
        }
    )
    plugin, _ = cfg.workspace("dfs.tmp")  # type: ignore[misc]
    assert set(plugin.formats) == {*default_formats(), "logs"}
    assert plugin.format_for("x.csvh").name == "csvh"  # type: ignore[union-attr]
    assert plugin.format_for("a.csv").option("delimiter") == ";"  # type: ignore[union-attr]
    assert plugin.format_for("a.log").name == "logs"  # type: ignore[union-attr]


def test_declared_format_replaces_a_default_by_name_and_can_switch_one_off(tmp_path) -> None:
    cfg = load_config(
        {
            "storage": {
                "dfs": {
                    "workspaces": {"tmp": {"location": str(tmp_path), "writable": True}},
                    "formats": {
                        "json": {"enabled": False},
                        "mytext": {"type": "text", "extensions": ["tsv"], "delimiter": "|"},
                    },
                }
            }
        }
    )
    plugin, _ = cfg.workspace("dfs.tmp")  # type: ignore[misc]
    assert "json" not in plugin.formats and plugin.format_for("a.json") is None
    # a declared format claiming a default's extension wins it
    assert plugin.format_for("a.tsv").name == "mytext"  # type: ignore[union-attr]


def test_a_format_that_is_not_a_table_is_refused(tmp_path) -> None:
    with pytest.raises(UserError) as info:
        load_config({"storage": {"dfs": {"formats": {"csv": "text"}}}})
    assert "Format [csv] must be a table of options" in str(info.value)


# ------------------------------------------------ default formats of shipped plugins
def _installed() -> set[str]:
    return {ep.name.lower() for ep in entry_points(group=FORMAT_ENTRY_POINTS)}


def test_installed_plugin_formats_are_defaults_with_drills_options(tmp_path) -> None:
    cfg = load_config({"storage": {"dfs": {"workspaces": {"tmp": {"location": str(tmp_path)}}}}})
    plugin, _ = cfg.workspace("dfs.tmp")  # type: ignore[misc]
    # ltsv and syslog ship with auger, registered by entry point like a third party's
    ltsv, syslog = plugin.format_for("a/x.ltsv"), plugin.format_for("x.syslog.gz")
    assert ltsv is not None and (ltsv.name, ltsv.type) == ("ltsv", "ltsv")
    assert syslog is not None and syslog.type == "syslog"
    assert syslog.option("maxErrors") == 0 == syslog.option("max_errors")  # Drill's dfs value
    # every shipped plugin format whose type is installed is there, and only those
    installed = _installed()
    expected = {n for n, s in PLUGIN_DEFAULT_FORMATS.items() if s["type"].lower() in installed}
    assert {"ltsv", "syslog"} <= expected
    assert set(plugin.formats) == set(DEFAULT_FORMATS) | expected
    # logRegex is no default in Drill either: it needs a regex to mean anything
    assert plugin.format_for("x.log") is None


def test_a_plugin_format_that_is_not_installed_is_left_out(monkeypatch, tmp_path) -> None:
    monkeypatch.setitem(PLUGIN_DEFAULT_FORMATS, "pcap", {"type": "pcap", "extensions": ["pcap"]})
    assert "pcap" not in default_formats()
    cfg = load_config({"storage": {"dfs": {"workspaces": {"tmp": {"location": str(tmp_path)}}}}})
    plugin, _ = cfg.workspace("dfs.tmp")  # type: ignore[misc]
    assert plugin.format_for("x.pcap") is None and "ltsv" in plugin.formats


def test_a_plugin_format_joins_the_defaults_when_its_type_registers(monkeypatch) -> None:
    class FakeEntryPoint:
        name = "PCAP"

    monkeypatch.setitem(PLUGIN_DEFAULT_FORMATS, "pcap", {"type": "pcap", "extensions": ["pcap"]})
    monkeypatch.setattr(config, "format_entry_points", lambda: (FakeEntryPoint(),))
    assert default_formats()["pcap"]["extensions"] == ["pcap"]  # type names match in any case
    assert "ltsv" not in default_formats()  # only what is installed


@pytest.mark.parametrize("name", ["ltsv", "syslog"])
def test_a_default_can_be_replaced_or_switched_off_like_a_built_in(tmp_path, name) -> None:
    ws = {"tmp": {"location": str(tmp_path)}}
    formats = {name: {"enabled": False}}
    off = load_config({"storage": {"dfs": {"workspaces": ws, "formats": formats}}})
    assert off.workspace("dfs.tmp")[0].format_for(f"x.{name}") is None  # type: ignore[index]
    mine = {name: {"type": name, "extensions": ["lg"], "maxErrors": 5}}
    cfg = load_config({"storage": {"dfs": {"workspaces": ws, "formats": mine}}})
    plugin = cfg.workspace("dfs.tmp")[0]  # type: ignore[index]
    assert plugin.format_for(f"x.{name}") is None
    assert plugin.format_for("x.lg").option("max_errors") == 5  # type: ignore[union-attr]


# ---------------------------------------------------------- options under Drill's names
@pytest.mark.parametrize(
    ("drill", "snake"),
    [
        ("maxErrors", "max_errors"),
        ("skipMalformedJSONRecords", "skip_malformed_json_records"),
        ("autoCorrectCorruptDates", "auto_correct_corrupt_dates"),
        ("enableStringsSignedMinMax", "enable_strings_signed_min_max"),
        ("nanInf", "nan_inf"),
        ("extractHeader", "extract_header"),
        ("all_text_mode", "all_text_mode"),
    ],
)
def test_snake_case_of_drill_option_names(drill: str, snake: str) -> None:
    assert snake_case(drill) == snake


def test_an_option_is_found_under_either_spelling_and_snake_case_wins() -> None:
    fmt = FormatConfig("j", "json", ("json",), {"skipMalformedJSONRecords": True})
    assert fmt.option("skip_malformed_json_records") is True
    assert fmt.option("skipMalformedJSONRecords") is True
    assert fmt.option("allTextMode", "unset") == "unset"
    # a table function's snake_case value laid over a pasted Drill block is the one used
    both = {"allTextMode": False, "all_text_mode": True}
    assert format_option(both, "allTextMode") is True


def test_follow_links_is_a_workspace_flag_off_by_default(tmp_path) -> None:
    def dfs(**data: object) -> dict:
        ws = {"tmp": {"location": str(tmp_path), "writable": True}, "data": data}
        return {"storage": {"dfs": {"workspaces": ws}}}

    plain = load_config(dfs(location=str(tmp_path)))
    assert plain.plugins["dfs"].workspaces["data"].follow_links is False
    follow = load_config(dfs(location=str(tmp_path), follow_links=True))
    assert follow.plugins["dfs"].workspaces["data"].follow_links is True
    with pytest.raises(UserError, match="follow_links must be true or false"):
        load_config(dfs(location=str(tmp_path), follow_links="yes"))


def test_login_and_session_limits_are_server_settings() -> None:
    from auger.server.settings import ServerSettings

    default = ServerSettings.from_config({})
    assert (default.login_delay, default.login_delay_max) == (1.0, 30.0)
    assert default.max_sessions_per_user == 100
    assert ServerSettings.from_config({"max_sessions_per_user": 0}).max_sessions_per_user == 0
    with pytest.raises(UserError, match="must not be negative"):
        ServerSettings.from_config({"login_delay": -1})
