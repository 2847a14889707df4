"""nbval settings for the golden notebooks.

stderr is not compared: warnings printed by a kernel carry its temporary cell file path, which
changes on every run (nbval issue #88; nbval docs, "Skipping certain output types").
"""


def pytest_collectstart(collector):
    """Add "stderr" to the output types nbval does not compare, for every notebook collected here."""
    path = getattr(collector, "path", None)
    if path is not None and path.suffix == ".ipynb" and hasattr(collector, "skip_compare"):
        if "stderr" not in collector.skip_compare:
            collector.skip_compare = (*collector.skip_compare, "stderr")
