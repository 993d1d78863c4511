"""``python -m ledgerviz``: the same command line as ``ledgerviz``."""

import sys

from ledgerviz.cli import main

sys.exit(main())
