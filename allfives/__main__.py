"""``python -m allfives``: the command line."""

import sys

from allfives.cli.main import main

sys.exit(main())
