"""What a broken property looks like: a violation, its signature, and the exception that carries it.

A signature names the class of a failure, not its instance: numbers, paths, hashes and quoted
values are masked (`int too large to convert to float` is one class whatever the file), so the
campaign can count cases per class and keep one minimal example of each, and the bounded
profile can tell a failure issue #26 already lists from a new one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MASKS = (
    (re.compile(r"/(?:tmp|work|home|root|dev|proc)[^\s'\",:;)]*"), "<path>"),
    (re.compile(r"\b[0-9a-f]{16,}\b"), "<hash>"),
    (re.compile(r"'[^'\s]{0,80}'"), "'…'"),
    (re.compile(r'"[^"\s]{0,80}"'), '"…"'),
    (re.compile(r"\d+"), "N"),
    (re.compile(r"\s+"), " "),
)


def normalize(text: str, limit: int = 160) -> str:
    """`text` with what varies between instances masked, cut to `limit` characters."""
    for pattern, mask in _MASKS:
        text = pattern.sub(mask, text)
    return text.strip()[:limit]


@dataclass(frozen=True)
class Violation:
    """One property that did not hold for one input."""

    prop: str  # the property's name, e.g. "run completes"
    what: str  # the class of failure (normalized: part of the signature)
    detail: str = ""  # this instance: paths, values, stderr
    command: str = ""  # the command that showed it, to paste

    @property
    def signature(self) -> str:
        return f"{self.prop}: {self.what}"

    def __str__(self) -> str:
        parts = [self.signature]
        if self.detail:
            parts.append(f"  detail: {self.detail[:1500]}")
        if self.command:
            parts.append(f"  command: {self.command[:1500]}")
        return "\n".join(parts)


def stderr_tail(stderr: str) -> str:
    """The exception that ended the program (the last unindented exception line before any
    "Exception ignored" noise of the interpreter's shutdown), else stderr's last line."""
    text = stderr.split("\nException ignored in", 1)[0]
    lines = [ln.rstrip() for ln in text.strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.match(r"^[A-Za-z_.]*(Error|Exception|Interrupt|Exit)\b", ln):
            return ln
    return lines[-1].strip() if lines else ""


class PropertyViolated(AssertionError):
    """Raised when an input broke a property; one subclass per signature (see `raised`)."""


_CLASSES: dict[str, type] = {}


def raised(violations: list[Violation]) -> PropertyViolated:
    """An exception for `violations` whose class is the first one's signature: Hypothesis tells
    failures apart by exception class and place, so each class of failure is shrunk on its own."""
    sig = violations[0].signature
    cls = _CLASSES.get(sig)
    if cls is None:
        cls = _CLASSES[sig] = type(f"Violated{len(_CLASSES)}", (PropertyViolated,), {"signature": sig})
    return cls("\n".join(str(v) for v in violations))
