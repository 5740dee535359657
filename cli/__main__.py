"""``python -m veil.cli``: the headless command line alone (``veil`` opens the desktop when given no command)."""

import sys

from .program import main

sys.exit(main())
