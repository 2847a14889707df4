"""`make bench`: the corpus, timing and memory, and the results table (`python -m tests.bench`)."""
