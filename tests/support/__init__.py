"""Test support: a subprocess driver for the agent and the ACP schema validator."""
