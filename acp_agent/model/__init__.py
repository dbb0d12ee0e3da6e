"""Talking to Claude. Knows nothing of ACP: the turn loop consumes `ModelEvent`s."""
