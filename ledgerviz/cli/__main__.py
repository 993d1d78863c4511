import sys

from ledgerviz.cli import main

sys.exit(main())
