"""Client-side tools for people testing ACP agents: the smoke runner and the scripted harness.

`acp-agent smoke` (`smoke.smoke_main`) runs one prompt turn against any ACP agent and shows it;
`acp-agent harness` (`script.harness_main`) runs a JSON-lines script of JSON-RPC steps and
reports each step. Both drive the agent through `client.AgentClient` (the test suite does too), which
checks every line the agent writes with `wire.Transcript`. Nothing here is imported
by the agent itself, and these are the only modules of the package that write to stdout.
"""

from __future__ import annotations

__all__: list[str] = []
