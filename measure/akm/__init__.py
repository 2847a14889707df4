"""The port of akm's Claude Code path: JS semantics, records, read, pre-filter, prompt, hash, template.

Everything here exists because akm does it, byte for byte, and the parity vectors in
`tests/parity/` check it. Nothing here knows about strategies, tables or reports. A change to
any module of this package needs `pytest tests/test_parity.py` to pass before it lands.
"""
