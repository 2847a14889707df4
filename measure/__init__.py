"""Measure how subagent transcripts reach akm's extraction LLM."""
