import pytest

from auger.config import load_config
from auger.errors import UserError


def test_embedded_defaults_have_dfs_and_cp(tmp_path) -> None:
    cfg = load_config({"storage": {"dfs": {"workspaces": {"tmp": {"location": str(tmp_path)}}}}})
    assert cfg.workspace("dfs.root") is not None
    assert cfg.workspace("dfs.tmp")[1].location == str(tmp_path)  # type: ignore[index]
    assert cfg.workspace("dfs.tmp")[1].writable  # type: ignore[index]
    plugin, ws = cfg.workspace("cp")  # type: ignore[misc]
    assert not ws.writable and (plugin.format_for("x/employee.json") or {}).name == "json"  # type: ignore[union-attr]
    assert set(plugin.formats) == {"csv", "tsv", "psv", "csvh", "json", "parquet"}


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
    assert set(plugin.formats) == {"csv", "tsv", "psv", "csvh", "json", "parquet", "logs"}
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
