"""The editor's workspace off the agent's import path.

`python -m acp_agent` puts the working directory first on `sys.path` (unless `-P` or
`PYTHONSAFEPATH`), and an editor starts the agent in the workspace it opened: anyone's repository.
A `structlog.py` or `regex.py` at its top would then be imported in the agent's place at start, or
when the warm-up or a tool first needs that module, before any trust question could be asked. So
`__main__` drops that entry before it imports anything else. It stays when the agent itself was
loaded from there (a checkout run in place, `cd acp-agent && python -m acp_agent`).

This cannot cover what the interpreter imports for `-m` before `__main__` runs (`runpy`'s own
imports: `collections`, `reprlib`, `functools`... from the same path): only `-P`, or the console
script (`acp-agent`, which puts the installation's own folder there), keeps those out. So every
command line the agent gives out has `-P` (the terminal login, the harness's default agent), and
the README says to start it that way.
"""

import os
import sys

__all__ = ["drop_working_directory"]


def drop_working_directory(package_dir: str) -> bool:
    """Remove the working directory from the front of `sys.path` unless `package_dir` (where
    `acp_agent` was loaded from) is directly in it; True if it was removed."""
    if sys.flags.safe_path or not sys.path:
        return False
    first = sys.path[0]
    try:
        working = os.path.realpath(os.getcwd())
        entry = os.path.realpath(first or os.curdir)
    except OSError:  # the working directory is gone: nothing can be imported from it anyway
        return False
    if entry != working or os.path.dirname(os.path.realpath(package_dir)) == working:
        return False
    del sys.path[0]
    return True
