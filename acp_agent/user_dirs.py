"""Where acp-agent keeps the user's files: its config dir and its data dir (per platform, XDG on Linux).

`platformdirs` is imported only when a path is asked for, so importing this module costs nothing.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["user_config_dir", "user_data_dir", "user_home", "user_keystore"]


def user_config_dir() -> Path:
    """The stored key and the user-level instructions, commands and skills."""
    import platformdirs

    return Path(platformdirs.user_config_dir("acp-agent"))


def user_keystore() -> Path:
    """The file `acp-agent login` and the editor's `authenticate` store the key in."""
    return user_config_dir() / "credentials.json"


def user_home() -> Path | None:
    """The user's home, resolved (where `~/.claude` and `~/AGENTS.md` are looked for); None when
    there is none to speak of (no HOME and no passwd entry)."""
    try:
        return Path.home().resolve()
    except (RuntimeError, OSError):
        return None


def user_data_dir() -> Path:
    """The state dir when none is configured: the session journals live in its `sessions/`."""
    import platformdirs

    return Path(platformdirs.user_data_dir("acp-agent"))
