"""A property-based fuzzer of `measure`: input strategies, the properties of issue #26, a campaign.

The modules, bottom up: `drive` (the one place that touches `measure`: its command line as a
subprocess and a thin in-process run), `jsontext` (JSON text that may be hostile), `records`
and `mutations` (Claude Code lines and what can go wrong with them), `sidecars`, `trees` (whole
sessions roots built on disk), `options` (hostile command lines), `violations` (what a broken
property looks like, and its signature), `known` (today's failures that issue #26 lists, each
with its reproduction test), `properties` (the checks), `campaign` (`make fuzz`).

`test_fuzz.py` is the bounded profile `make test` collects; `python -m tests.fuzz` the campaign.
"""
