"""What the model can do. Knows nothing of ACP or of the turn loop."""
