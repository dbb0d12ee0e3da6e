"""acp-agent: a governed Claude coding agent speaking the Agent Client Protocol over stdio.

Nothing happens at import: the cold start is what an editor user waits for.
"""

__version__ = "0.2.0"
__all__ = ["__version__"]
