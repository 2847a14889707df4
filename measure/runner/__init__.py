"""Running a measurement: the per-session job, the cache, redaction, the process pool, table files."""
