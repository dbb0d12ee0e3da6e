"""`python -m acp_agent`, and the `acp-agent` console script (`main`)."""

import os

from acp_agent.process.import_path import drop_working_directory

drop_working_directory(os.path.dirname(__file__))  # before anything else is imported: `import_path.py`

import contextlib  # noqa: E402

from acp_agent.startup import collector, dataclass_code  # noqa: E402

__all__ = ["main"]


def main() -> int:
    """Serve (or run a sub-command) with the collector paused through the start-up imports, and
    the dataclasses' methods compiled once (`dataclass_code.py`)."""
    collector.pause()
    dataclass_code.install()
    from acp_agent.cli import main as cli_main

    try:
        return cli_main()
    finally:
        with contextlib.suppress(Exception):  # a sub-command's; serving leaves through `app.leave`
            dataclass_code.save()


if __name__ == "__main__":
    raise SystemExit(main())
