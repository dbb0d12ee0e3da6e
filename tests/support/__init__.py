"""Test support: a subprocess driver for the agent (`agent.py`), the ACP schema validator
(`schema.py`), and the minimal environment every spawned agent gets."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["REPO_ROOT", "base_env"]

REPO_ROOT = Path(__file__).resolve().parents[2]
_XDG = {
    "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local/share",
    "XDG_STATE_HOME": ".local/state",
    "XDG_CACHE_HOME": ".cache",
    "ANTHROPIC_CONFIG_DIR": ".config/anthropic",
}


def base_env(tmp_path: Path, **extra: str | None) -> dict[str, str]:
    """A minimal environment with HOME, the XDG dirs and the SDK's profile dir under `tmp_path`.

    `extra` adds variables (None removes one). No `ANTHROPIC_API_KEY` unless given: the
    developer's own credentials must never reach a test, nor the machine's managed policy
    (`tmp_path/managed` is the policy's directory: a test that wants one writes it there).

    """
    home = tmp_path / "home"
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home)}
    for name, sub in _XDG.items():
        env[name] = str(home / sub)
    for directory in (env["HOME"], *(env[name] for name in _XDG)):
        Path(directory).mkdir(parents=True, exist_ok=True)
    env |= {
        "ACP_AGENT_MANAGED_SETTINGS_DIR": str(tmp_path / "managed"),  # never the machine's policy
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "PYTHONPATH": str(REPO_ROOT),
        "ACP_AGENT_LOG_LEVEL": "info",
    }
    for name, value in extra.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env
