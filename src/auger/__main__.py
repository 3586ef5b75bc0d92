"""``python -m auger`` is the ``auger`` command."""

import sys

from auger.cli.main import main

sys.exit(main())
