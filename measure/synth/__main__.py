"""`python -m measure.synth`: the same CLI as `measure synth`."""

import sys

from measure.synth.cli import main

sys.exit(main())
