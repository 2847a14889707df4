"""`python -m measure`: the command line."""

import sys

try:
    from measure.cli import entry
except KeyboardInterrupt:  # Ctrl-C while the command line loads: nothing has been written
    print("measure: interrupted before it started; nothing was written", file=sys.stderr)
    sys.exit(130)

entry()
