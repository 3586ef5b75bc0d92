"""The denied-path rule on its own: inside, holding, hidden folders, globs, links, listings."""

from __future__ import annotations

from pathlib import Path

import pytest

from auger.errors import UserError
from auger.storage.denied import DeniedPath, PathGuard, covering, reached


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    home = tmp_path / "home"
    (home / ".auger").mkdir(parents=True)
    (home / "srv").mkdir()
    (home / "srv" / "users.json").write_text("{}")
    (home / ".auger" / "profiles").mkdir()
    (home / "data").mkdir()
    return {"home": home, "users": home / "srv" / "users.json", "state": home / ".auger"}


def denied(tree: dict[str, Path]) -> list[DeniedPath]:
    return [
        DeniedPath(str(tree["state"]), "the state directory"),
        DeniedPath(str(tree["state"] / "profiles"), "the profiles"),
        DeniedPath(str(tree["users"]), "the users file"),
    ]


def test_inside_and_holding(tree: dict[str, Path]) -> None:
    d = denied(tree)
    assert reached(str(tree["users"]), d) == d[2]
    assert reached(str(tree["home"] / "srv"), d) == d[2]  # a scan of srv/ reads users.json
    assert reached(str(tree["home"] / "data"), d) is None
    # the innermost denied path names the error
    assert reached(str(tree["state"] / "profiles" / "q.json"), d) == d[1]


def test_hidden_folders_are_out_of_a_directory_scans_reach(tree: dict[str, Path]) -> None:
    d = denied(tree)[:2]  # only what lies under the hidden ~/.auger
    assert reached(str(tree["home"]), d) is None
    # a glob is not a directory scan: it may name hidden folders, so it is refused
    assert reached(f"{tree['home']}/*/profiles", d) is not None
    assert reached(str(tree["state"] / "*"), d) == d[0]


def test_links_are_resolved_on_both_sides(tree: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "alias").symlink_to(tree["home"] / "srv", target_is_directory=True)
    d = denied(tree)
    assert reached(str(tmp_path / "alias" / "users.json"), d) == d[2]
    via_link = [DeniedPath(str(tmp_path / "alias" / "users.json"), "the users file")]
    assert reached(str(tree["users"]), via_link) == via_link[0]


def test_listing_is_refused_only_inside(tree: dict[str, Path]) -> None:
    d = denied(tree)
    guard = PathGuard(lambda: d)
    guard.check(str(tree["home"] / "srv"), "srv", "dfs.root", listing=True)
    assert guard.hides(str(tree["users"])) and not guard.hides(str(tree["home"] / "data"))
    assert covering(str(tree["home"] / "srv"), d) is None
    with pytest.raises(UserError) as info:
        guard.check(str(tree["home"] / "srv"), "srv", "dfs.root")
    assert info.value.kind.name == "PERMISSION"
    assert str(info.value).startswith("PERMISSION ERROR: Path [srv] reaches the users file")
    assert info.value.context == [f"Denied path: {tree['users']}", "Workspace: dfs.root"]
