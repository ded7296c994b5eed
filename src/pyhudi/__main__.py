"""`python -m pyhudi` is the `pyhudi` command."""

import sys

from pyhudi.cli.main import main

sys.exit(main())
