"""Measure how subagent transcripts reach akm's session-extraction LLM."""

__version__ = "0.1.0"
