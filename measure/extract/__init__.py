"""`measure extract`: send the strategies' prompts to a real model and compare what it extracts."""
