"""`python -m acp_agent`, and the `acp-agent` console script (`main`)."""

from acp_agent import startup_gc

__all__ = ["main"]


def main() -> int:
    """Serve (or run a sub-command) with the collector paused through the start-up imports."""
    startup_gc.pause()
    from acp_agent.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    raise SystemExit(main())
