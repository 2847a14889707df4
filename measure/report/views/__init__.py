"""What the notebooks show: one module per notebook, what they share, the published #840 figures."""
