"""One user's attacks on a real ``auger serve`` with ``auth = true`` (an admin, two ordinary
users and a few more to attack): logins guessed by form and by Basic, sessions piled up,
another user's profile, the storage configuration, and links out of a workspace planted in a
scanned directory. After each attack another user's query still runs.

The login waits are read from the server's ``Retry-After`` (the test sleeps as long as it says
and then checks the door is open again); the rules themselves are tested on an injected clock in
``test_login_throttle.py``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
import requests

from .helpers import Server, login, post_query, rows, warm_up

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ADMIN = ("root", "adm1n pw")
ALICE = ("alice", "wonder land")
BOB = ("bob", "builder")
CAROL = ("carol", "c4rol pw")  # whose password is guessed
DAVE = ("dave", "d4ve pw")  # who logs in too often
JSON = {"Accept": "application/json"}
HTML = {"Accept": "text/html"}
#: the first wait after the free failures, and the longest one (seconds)
DELAY, DELAY_MAX = 3, 6
FREE_USER_FAILURES = 5
SESSIONS = 3
SECRET = '{"secret": "outside"}\n'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("auth_links")
    srv = Server(
        root,
        {
            "auth": True,
            "login_delay": DELAY,
            "login_delay_max": DELAY_MAX,
            "max_sessions_per_user": SESSIONS,
        },
    )
    for user in (ALICE, BOB, CAROL, DAVE):
        srv.passwd(*user)
    srv.passwd(*ADMIN, admin=True)
    outside = root / "outside"  # no workspace holds it
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.json").write_text(SECRET)
    (outside / "dir" / "more.json").write_text(SECRET)
    os.utime(outside / "secret.json", (1_000_000_000, 1_000_000_000))  # 2001: unlike the link
    for name in ("mixed", "followed"):
        d = srv.data / name
        d.mkdir()
        (d / "a.json").write_text('{"secret": "inside"}\n')
        (d / "out.json").symlink_to(outside / "secret.json")
        (d / "in.json").symlink_to(d / "a.json")  # a link that stays inside is read
    (srv.data / "globbed").mkdir()
    (srv.data / "globbed" / "b.json").write_text('{"secret": "inside"}\n')
    (srv.data / "globbed" / "outdir").symlink_to(outside / "dir", target_is_directory=True)
    with srv.config.open("a") as fh:  # a workspace an admin lets follow links
        fh.write(
            "[storage.dfs.workspaces.follow]\n"
            f'location = "{srv.data / "followed"}"\n'
            "follow_links = true\n"
        )
    srv.start()
    warm_up(srv, ADMIN)  # Spark starts now, not inside a test's wait
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def bob(server: Server) -> Iterator[requests.Session]:
    """Another user, logged in before any attack, whose queries must keep running."""
    http = login(server, *BOB)
    yield http
    http.close()


@pytest.fixture(scope="module")
def alice(server: Server) -> Iterator[requests.Session]:
    http = login(server, *ALICE)
    yield http
    http.close()


def others_still_served(server: Server, bob: requests.Session) -> None:
    assert rows(bob, server.url, "SELECT r_name FROM cp.`tpch/region.parquet` LIMIT 1")


def form_login(server: Server, user: str, password: str) -> requests.Response:
    return requests.post(
        server.url + "/j_security_check",
        data={"j_username": user, "j_password": password},
        allow_redirects=False,
        timeout=60,
    )


# ------------------------------------------------------------------ authentication
def test_failed_logins_slow_down_without_locking_the_user_out(
    server: Server, bob: requests.Session
) -> None:
    for _ in range(FREE_USER_FAILURES + 1):  # the last one starts the first wait
        resp = form_login(server, CAROL[0], "guess")
        assert resp.status_code == 200 and "Invalid username/password" in resp.text
    early = form_login(server, *CAROL)  # even the right password waits: it is not checked
    assert early.status_code == 429, early.text
    first = int(early.headers["Retry-After"])
    assert 1 <= first <= DELAY
    assert "Too many failed logins" in early.text and "Drill-Session-Id" not in early.cookies
    others_still_served(server, bob)

    time.sleep(first + 0.5)
    assert form_login(server, CAROL[0], "guess again").status_code == 200  # checked: wrong
    again = form_login(server, CAROL[0], "guess")
    assert again.status_code == 429
    second = int(again.headers["Retry-After"])
    assert second > first  # the wait grew, within its cap
    assert second <= DELAY_MAX

    time.sleep(second + 0.5)  # no lockout: after the wait, the right password works
    resp = form_login(server, *CAROL)
    assert resp.status_code == 303 and resp.cookies.get("Drill-Session-Id")
    others_still_served(server, bob)


def test_basic_guesses_slow_down_too(server: Server, bob: requests.Session) -> None:
    def guess() -> requests.Response:
        return requests.post(
            server.url + "/query.json",
            json={"queryType": "SQL", "query": "SELECT 1"},
            auth=("nobody", "guess"),
            timeout=60,
        )

    assert [guess().status_code for _ in range(FREE_USER_FAILURES + 1)] == [401] * (
        FREE_USER_FAILURES + 1
    )
    refused = guess()
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= DELAY
    assert "Too many failed logins" in refused.json()["errorMessage"]
    others_still_served(server, bob)


def test_sessions_per_user_are_capped(server: Server, bob: requests.Session) -> None:
    def answers(held: list[requests.Session]) -> list[int]:
        return [post_query(h, server.url, "SELECT 1").status_code for h in held]

    first, second, third = (login(server, *DAVE) for _ in range(SESSIONS))
    rows(first, server.url, "SELECT 1 AS one")  # now the second is the least recently used
    fourth = login(server, *DAVE)
    assert answers([first, second, third, fourth]) == [200, 401, 200, 200]
    # a script logging in in a loop: only the newest sessions stay open
    piled = [login(server, *DAVE) for _ in range(15)]
    assert answers([first, third, fourth, *piled]) == [401] * 15 + [200] * SESSIONS
    others_still_served(server, bob)


def test_another_users_profile_is_forbidden(
    server: Server, bob: requests.Session, alice: requests.Session
) -> None:
    query_id = post_query(bob, server.url, "SELECT 1 AS one").json()["queryId"]
    for path in (f"/profiles/{query_id}.json", f"/profiles/{query_id}"):
        resp = alice.get(server.url + path, headers=JSON, timeout=30)
        assert resp.status_code == 403, (path, resp.text)
        assert resp.json() == {"errorMessage": "User not authorized."}
        assert bob.get(server.url + path, headers=JSON, timeout=30).json()["user"] == "bob"
    admin = requests.get(
        f"{server.url}/profiles/{query_id}.json", auth=ADMIN, headers=JSON, timeout=30
    )
    assert admin.status_code == 200
    # a profile that does not exist keeps Drill's answer
    assert alice.get(server.url + "/profiles/nope.json", timeout=30).status_code == 500
    others_still_served(server, bob)


def test_storage_is_for_admins_in_every_form(
    server: Server, bob: requests.Session, alice: requests.Session
) -> None:
    forms = [
        ("/storage", HTML),
        ("/storage", JSON),
        ("/storage", {"Accept": "*/*"}),
        ("/storage.json", JSON),
        ("/storage/enabled-plugins.json", JSON),
        ("/storage/dfs.json", JSON),
    ]
    for path, headers in forms:
        resp = alice.get(server.url + path, headers=headers, timeout=30)
        assert resp.status_code == 403, (path, headers, resp.text)
        assert "location" not in resp.text and str(server.data) not in resp.text
        ok = requests.get(server.url + path, auth=ADMIN, headers=headers, timeout=30)
        assert ok.status_code == 200, (path, headers)
    plugin = requests.get(server.url + "/storage/dfs.json", auth=ADMIN, timeout=30).json()
    assert plugin["config"]["workspaces"]["follow"]["followLinks"] is True
    assert plugin["config"]["workspaces"]["data"]["followLinks"] is False
    others_still_served(server, bob)


# ------------------------------------------------------------------ links out of a workspace
def _profile_warnings(http: requests.Session, server: Server, query_id: str) -> list[str]:
    profile = http.get(f"{server.url}/profiles/{query_id}.json", timeout=30).json()
    return list(profile["warnings"])


def test_scans_skip_links_out_of_the_workspace(
    server: Server, bob: requests.Session, alice: requests.Session
) -> None:
    for table, link in (
        ("dfs.data.mixed", "mixed/out.json"),
        ("dfs.data.`mixed/*.json`", "mixed/out.json"),
        ("dfs.data.`globbed/*`", "globbed/outdir/more.json"),
    ):
        resp = post_query(alice, server.url, f"SELECT secret FROM {table}")
        data = resp.json()
        assert data["queryState"] == "COMPLETED", data
        assert {r["secret"] for r in data["rows"]} == {"inside"}, table
        warnings = _profile_warnings(alice, server, data["queryId"])
        named = [w for w in warnings if f"Skipped [{link}]" in w]
        assert named and "outside workspace [dfs.data]" in named[0], warnings
    # as naming the link is refused
    named = post_query(alice, server.url, "SELECT * FROM dfs.data.`mixed/out.json`").json()
    assert named["errorMessage"].startswith("PERMISSION ERROR: Path [mixed/out.json] is outside")
    others_still_served(server, bob)


def test_a_workspace_configured_to_follow_links_reads_them(
    server: Server, alice: requests.Session
) -> None:
    got = rows(alice, server.url, "SELECT secret FROM dfs.follow.`*.json` ORDER BY secret")
    assert [r["secret"] for r in got] == ["inside", "inside", "outside"]


def test_show_files_shows_the_link_itself(server: Server, alice: requests.Session) -> None:
    got = {r["name"]: r for r in rows(alice, server.url, "SHOW FILES IN dfs.data.mixed")}
    link, target = got["out.json"], server.data.parent / "outside" / "secret.json"
    assert link["isFile"] is False and link["isDirectory"] is False
    assert int(link["length"]) == len(os.readlink(server.data / "mixed" / "out.json"))
    assert int(link["length"]) != target.stat().st_size
    # times are epoch milliseconds: the link's own, not its target's (dated 2001)
    own = os.lstat(server.data / "mixed" / "out.json").st_mtime * 1000
    assert abs(int(link["modificationTime"]) - own) <= 1
    assert abs(int(link["modificationTime"]) - target.stat().st_mtime * 1000) > 1000
    assert got["a.json"]["isFile"] is True
