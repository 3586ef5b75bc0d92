"""HTML pages: the login pages with Drill's markers, the status page and the console shell.

Clients read two things from these pages, so they are kept exactly: a failed login answers 200
with a form posting to ``/j_security_check`` and ``<p style="color:red">Invalid
username/password credentials.</p>``; and no other page may contain
``action="/j_security_check"``, because pydrill takes any page with it for a login prompt.
"""

from __future__ import annotations

import html
from importlib import resources

__all__ = ["console_page", "login_page", "main_login_page", "status_page"]

INVALID_CREDENTIALS = "Invalid username/password credentials."

_HEAD = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 40em; }}
input {{ display: block; margin: .3em 0 1em; padding: .3em; }}
</style></head><body>
"""


def login_page(error: bool = False, redirect: str = "/") -> str:
    message = f'<p style="color:red">{INVALID_CREDENTIALS}</p></br>\n' if error else ""
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


def status_page() -> str:
    return (
        _HEAD.format(title="auger · Status")
        + "<h1>Status</h1>\n<p><strong>Running!</strong></p>\n</body></html>\n"
    )


def console_page(user: str | None, auth: bool) -> str:
    """The web console: one static page; its script talks to the JSON endpoints."""
    text = resources.files("auger.server").joinpath("static/console.html").read_text("utf-8")
    if user:
        who = f"{html.escape(user)} · <a href='/logout'>Log out</a>" if auth else html.escape(user)
    else:
        who = "<a href='/login'>Log in</a>" if auth else ""
    return text.replace("<!--USER-->", who)
