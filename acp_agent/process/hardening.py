"""Process hardening done once at start-up, before any key is read or any command runs.

`make_undumpable` sets the process non-dumpable (Linux `prctl(PR_SET_DUMPABLE, 0)`): the kernel
then makes `/proc/<pid>/{mem,environ,fd,…}` root-owned and refuses ptrace, so another process of
the same user (a command the model ran, outside the sandbox or without one) cannot read the key
from memory or write into the agent's stdin through `/proc/<pid>/fd/0`. Children get their own
dumpable flag back when they exec a program, so the commands the agent runs are unaffected.

Cheap on purpose (the cold start counts): the C call goes through `_ctypes` directly (about
0.4 ms) instead of importing `ctypes` (about 3 ms); `ctypes` is only the fallback.
"""

from __future__ import annotations

import sys

__all__ = ["is_dumpable", "make_undumpable"]

_PR_GET_DUMPABLE = 3
_PR_SET_DUMPABLE = 4


def _prctl(option: int, value: int) -> int:
    import _ctypes

    try:
        handle = _ctypes.dlopen(None, _ctypes.RTLD_LOCAL)  # type: ignore[arg-type]  # None: this process
        address = _ctypes.dlsym(handle, "prctl")
        return int(_ctypes.call_function(address, (option, value, 0, 0, 0)))
    except AttributeError:  # a Python without these internals
        import ctypes

        return int(ctypes.CDLL(None).prctl(option, value, 0, 0, 0))


def make_undumpable() -> bool:
    """Make this process non-dumpable; True when it now is (False off Linux or on failure)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return _prctl(_PR_SET_DUMPABLE, 0) == 0
    except (OSError, ImportError, ValueError):
        return False


def is_dumpable() -> bool | None:
    """This process's dumpable flag (None off Linux): what `make_undumpable` changed."""
    if not sys.platform.startswith("linux"):
        return None
    return _prctl(_PR_GET_DUMPABLE, 0) != 0
