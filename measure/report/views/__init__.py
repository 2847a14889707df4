"""What the notebooks show: one module per notebook, plus what they share and the published #840 figures."""
