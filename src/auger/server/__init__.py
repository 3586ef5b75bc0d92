"""Drill's REST API over auger: ``auger serve``.

Layering: ``server`` sits on top of ``engine``/``session`` and never reaches below ``sql``'s
public entry points; nothing else in auger imports ``server``. Modules: ``app`` (routes and
``serve``), ``auth`` and ``users`` (login, sessions' owners, password hashes), ``sessions``
(cookie sessions), ``queries`` (running and streaming queries), ``encoding`` (Drill's JSON
value encoding), ``profiles`` (query profiles on disk), ``resources`` (informational JSON),
``pages`` and ``static/`` (HTML).
"""

from auger.server.app import build_app, serve

__all__ = ["build_app", "serve"]
