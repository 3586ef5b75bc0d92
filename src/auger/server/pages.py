"""HTML pages: the login pages with Drill's markers and the console shell behind Drill's URLs.

Clients read two things from these pages, so they are kept exactly: a failed login answers 200
with a form posting to ``/j_security_check`` and ``<p style="color:red">Invalid
username/password credentials.</p>``; and no other page may contain
``action="/j_security_check"``, because pydrill takes any page with it for a login prompt.
"""

from __future__ import annotations

import html
from importlib import resources

__all__ = ["CONSOLE_PAGES", "console_page", "login_page", "main_login_page"]

INVALID_CREDENTIALS = "Invalid username/password credentials."

_HEAD = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 40em; }}
input {{ display: block; margin: .3em 0 1em; padding: .3em; }}
</style></head><body>
"""


def login_page(error: bool = False, redirect: str = "/", reason: str | None = None) -> str:
    """The login form; with ``error``, Drill's failed-login line (or ``reason`` instead)."""
    text = html.escape(reason) if reason else INVALID_CREDENTIALS
    message = f'<p style="color:red">{text}</p></br>\n' if error else ""
    return (
        _HEAD.format(title="auger · Log in")
        + "<h1>Log in to auger</h1>\n"
        + '<form role="form" name="input" action="/j_security_check" method="POST">\n'
        + message
        + '<label>Username <input type="text" size="30" name="j_username" '
        + "autofocus></label>\n"
        + '<label>Password <input type="password" size="30" name="j_password"></label>\n'
        + f'<input type="hidden" name="redirect" value="{html.escape(redirect)}">\n'
        + '<button type="submit">Log in</button>\n</form>\n</body></html>\n'
    )


def main_login_page(redirect: str = "/") -> str:
    target = html.escape(f"/login?redirect={redirect}")
    return (
        _HEAD.format(title="auger · Log in")
        + "<h1>auger</h1>\n"
        + f'<p>This server needs a login. <a href="{target}">Log in with a user name '
        + "and password</a>.</p>\n</body></html>\n"
    )


#: The console's pages by their Drill URL name, with the heading each one shows.
CONSOLE_PAGES: dict[str, str] = {
    "query": "Query",
    "profiles": "Profiles",
    "profile": "Profile",
    "options": "Options",
    "storage": "Storage",
    "status": "Status",
    "metrics": "Metrics",
    "threads": "Threads",
    "logs": "Logs",
}


def console_page(
    user: str | None,
    auth: bool,
    page: str = "query",
    profile_id: str | None = None,
    admin: bool = False,
) -> str:
    """The web console: one static page whose script talks to the JSON endpoints.

    Args:
        user: the logged-in user (None: nobody).
        auth: whether the server has logins (then the header offers Log in / Log out).
        page: which page opens first, a key of :data:`CONSOLE_PAGES`.
        profile_id: on the profile page, the query whose profile it shows.
        admin: whether the user may change storage and system options (the page offers the
            editors; the server checks again on every change).
    """
    text = resources.files("auger.server").joinpath("static/console.html").read_text("utf-8")
    if user:
        who = f"{html.escape(user)} · <a href='/logout'>Log out</a>" if auth else html.escape(user)
    else:
        who = "<a href='/login'>Log in</a>" if auth else ""
    title = CONSOLE_PAGES[page]
    return (
        text.replace("<!--USER-->", who)
        .replace("<!--TITLE-->", html.escape(title))
        .replace("<!--PAGE-->", page)
        .replace("<!--PROFILE-->", html.escape(profile_id or "", quote=True))
        .replace("<!--USERNAME-->", html.escape(user or "", quote=True))
        .replace("<!--ADMIN-->", "true" if admin else "false")
    )
