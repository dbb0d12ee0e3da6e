"""The sandbox a session's commands run under: the user's settings and the paths to keep hidden.

Hidden from every sandboxed command: the agent's state dir (session journals hold file contents
and command output), its config dir (the key `acp-agent login` stores, user instructions) and the
Anthropic SDK's profile dir (keys too). `tools/sandbox.py` does the confining.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from acp_agent.config import Config
from acp_agent.tools.sandbox import SandboxPolicy
from acp_agent.user_dirs import user_config_dir, user_data_dir

__all__ = ["hidden_paths", "sandbox_policy"]


def sandbox_policy(config: Config) -> SandboxPolicy:
    """`--sandbox` and `--sandbox-network` as a policy, with the agent's own paths to hide."""
    return SandboxPolicy(
        enabled=config.sandbox != "off", network=config.sandbox_network, hidden=hidden_paths(config)
    )


def hidden_paths(config: Config) -> tuple[Path, ...]:
    """The agent's state dir, its config dir (the stored key) and the SDK's profiles, resolved."""
    paths = [
        config.state_dir or user_data_dir(),
        user_config_dir(),
    ]
    sdk = os.environ.get("ANTHROPIC_CONFIG_DIR")
    if sdk:
        paths.append(Path(sdk))
    else:
        with contextlib.suppress(RuntimeError):  # no home directory to speak of
            paths.append(Path.home() / ".config" / "anthropic")
    return tuple(dict.fromkeys(Path(os.path.realpath(p)) for p in paths))
