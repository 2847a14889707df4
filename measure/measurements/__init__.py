"""The suite's own measurements: the strategy registry, then one module per table family.

Each table module is a pure function from a session (and its strategy results) to rows whose
columns `measure.schema` defines. Imports flow one way: akm port ← measurements ← runner.
"""
