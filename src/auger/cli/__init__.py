"""The ``auger`` command: ``sql`` (shell, -e, -f), ``serve``, ``demo``."""
