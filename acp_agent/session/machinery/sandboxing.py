"""The sandbox a session's commands run under, and the one list of paths no tool shows.

Hidden from every sandboxed command and every file tool alike: the agent's state dir (session
journals hold file contents and command output), its config dir and the key stored there, and the
Anthropic SDK's profile dir (keys too). `tools/hidden.py` holds the list's rules,
`tools/sandbox/command_sandbox.py` does the confining.
"""

from __future__ import annotations

from acp_agent.config import Config
from acp_agent.tools.hidden import HiddenPaths, agent_hidden_paths
from acp_agent.tools.sandbox.command_sandbox import SandboxPolicy

__all__ = ["hidden_paths", "sandbox_policy"]


def sandbox_policy(config: Config, hidden: HiddenPaths) -> SandboxPolicy:
    """`--sandbox` and `--sandbox-network` as a policy, with the agent's own paths to hide."""
    return SandboxPolicy(enabled=config.sandbox != "off", network=config.sandbox_network, hidden=hidden)


def hidden_paths(config: Config | None) -> HiddenPaths:
    """The agent's state dir (`--state-dir`, else the default), its config dir and stored key, and
    the SDK's profiles, as given and resolved (the session manager refuses them as roots)."""
    return agent_hidden_paths(config.state_dir if config is not None else None)
