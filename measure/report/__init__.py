"""Presentation: notebook views (one module per notebook), figures, and the report runner."""
