"""`python -m measure`: the command line."""

from measure.cli import entry

entry()
