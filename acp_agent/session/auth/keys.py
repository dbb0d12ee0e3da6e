"""The agent's Anthropic API key: kept in the user's config dir by `acp-agent login` or by the
editor's `authenticate`, removed by `logout`, and used when the environment has none.

The file is mode 0600 in a 0700 directory; the key is never logged or echoed.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from acp_agent.user_dirs import user_keystore

if TYPE_CHECKING:
    from acp_agent.model.provider import ModelProvider

__all__ = [
    "AgentKeys",
    "credentials_path",
    "erase_initial_environ",
    "erase_key",
    "load_key",
    "login_main",
    "save_key",
]


def credentials_path() -> Path:
    return user_keystore()


def erase_initial_environ(names: Iterable[str]) -> list[str]:
    """Overwrite `NAME=value` in the environment block the process started with.

    Removing a variable from `os.environ` does not change what `/proc/<pid>/environ` shows: the
    kernel reads the block that was on the stack at exec. So the bytes there are zeroed (Linux
    only; elsewhere nothing happens). Call after the variables left `os.environ`, so nothing points
    at them any more. Returns the names that were found and erased.
    """
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])  # env_start (50), env_end (51): proc(5)
    except (OSError, IndexError, ValueError):
        return []
    import ctypes

    prefixes = {name.encode() + b"=": name for name in names}
    erased, offset = [], 0
    for entry in ctypes.string_at(start, end - start).split(b"\0"):
        name = next((n for p, n in prefixes.items() if entry.startswith(p)), None)
        if name is not None:
            ctypes.memset(start + offset, 0, len(entry))
            erased.append(name)
        offset += len(entry) + 1
    return erased


def load_key() -> str | None:
    """The stored key, or None (no file, unreadable, or no key in it)."""
    try:
        data = json.loads(credentials_path().read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: nested past what json parses
        return None
    key = data.get("anthropicApiKey") if isinstance(data, dict) else None
    return key if isinstance(key, str) and key.strip() else None


def save_key(key: str) -> Path:
    path = credentials_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"anthropicApiKey": key.strip()}, f)
    os.chmod(path, 0o600)
    return path


def erase_key() -> bool:
    """Remove the stored key; True if there was one."""
    try:
        credentials_path().unlink()
    except FileNotFoundError:
        return False
    return True


class AgentKeys:
    """The process's key, for `authenticate`, `logout` and the `auth_required` check (the session
    layer's `KeyStore`): a key given by the editor, else the environment's, else the stored one,
    else the SDK's profiles. What is found is handed to the model client, so a key stored since
    start-up (by `acp-agent login` in a terminal) or given by `authenticate` works at once."""

    def __init__(
        self, model: ModelProvider, *, replaying: bool = False, elsewhere: Callable[[], bool] | None = None
    ) -> None:
        self._model = model
        self._replaying = replaying
        """A replay answers every request from its cassette: no key is ever needed."""
        self._elsewhere = elsewhere
        """Whether the credentials come from elsewhere than a key (a cloud platform's sign-in, an
        `apiKeyHelper`): then a failure to sign in is said at the first request."""
        self._given: str | None = None

    async def found(self) -> bool:
        """Whether a request would carry credentials now."""
        from acp_agent.model.sdk import credentials_found, key_in_env

        if self._replaying or self._given is not None or key_in_env():
            return True
        if self._elsewhere is not None and self._elsewhere():
            return True
        stored = load_key()
        self._model.use_key(stored)
        return stored is not None or await credentials_found()

    def keep(self, key: str) -> Path:
        """Store `key` (mode 0600) and send it from the next request on; returns the file.

        Raises:
            OSError: the key file cannot be written.
        """
        path = save_key(key)
        self._given = key.strip()
        self._model.use_key(self._given)
        return path

    def forget(self) -> bool:
        """`logout`: remove the stored key and stop using any key this process holds, the
        environment's included (it comes back when the editor starts the agent again). True if a
        stored key was removed."""
        from acp_agent.model.sdk import forget_env_keys

        self._given = None
        forget_env_keys()
        self._model.use_key(None)
        return erase_key()


def login_main(argv: list[str] | None = None) -> int:
    """Ask for a key at the terminal (or read one line from a pipe) and store it."""
    if argv:
        sys.stderr.write("usage: acp-agent login   (asks for an Anthropic API key and stores it)\n")
        return 2
    if sys.stdin.isatty():
        import getpass

        key = getpass.getpass("Anthropic API key (input hidden): ")
    else:
        key = sys.stdin.readline()
    if not key.strip():
        sys.stderr.write("acp-agent login: no key given; nothing stored\n")
        return 1
    path = save_key(key)
    sys.stderr.write(
        f"acp-agent login: key stored in {path} (mode 0600); the agent uses it when "
        "ANTHROPIC_API_KEY is not set\n"
    )
    return 0
