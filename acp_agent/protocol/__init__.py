"""ACP v1 as pydantic models: what the agent accepts, and what it sends once a turn. No behaviour."""
