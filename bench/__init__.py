"""Benchmarks of acp-agent against a minimal baseline relay: `python bench/run.py`."""
