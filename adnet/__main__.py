"""``python -m adnet``: the same as the ``adnet`` command."""

import sys

from adnet.cli.main import main

sys.exit(main())
