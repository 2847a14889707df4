"""`python -m measure`: the command line."""

import sys

from measure.cli import main

sys.exit(main())
