"""An MCP server's prompts as slash commands: `/mcp__<server>__<prompt> args`.

Listed when the server connects (if it offers prompts) and again when it says they changed
(`prompt_watch.py`), fetched with `prompts/get` when the
user runs one. The command line gives the arguments: `key=value` for a named one, and the other
words, in order, fill the declared arguments not named yet (the last one takes the rest of the
line). The result's messages become the user's prompt.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio
import structlog

from acp_agent.errors import ToolError
from acp_agent.tools.mcp.servers import every_page, failure_reason
from acp_agent.tools.mcp.tool import ServerConnection, content_text, tool_name

__all__ = ["McpPrompt", "PromptArgument", "adapt_prompts", "list_prompts"]

log = structlog.get_logger(__name__)

_LIST_PAGES = 20
GET_SECONDS = 30.0
"""How long `prompts/get` may take."""


@dataclass(frozen=True, slots=True)
class PromptArgument:
    name: str
    required: bool = False
    description: str = ""


@dataclass(frozen=True, slots=True)
class McpPrompt:
    """One prompt of a connected server, under its command name."""

    command: str
    server: str
    name: str
    description: str
    arguments: tuple[PromptArgument, ...] = ()
    connection: ServerConnection | None = field(default=None, compare=False, repr=False)

    @property
    def hint(self) -> str | None:
        """`<required> [optional]`, in declared order; None when it takes no arguments."""
        if not self.arguments:
            return None
        return " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in self.arguments)

    def bind(self, line: str) -> dict[str, str]:
        """The arguments a command line gives (see the module's docstring).

        Raises:
            ToolError: a required argument is missing, or there are words left over.
        """
        try:
            words = shlex.split(line)
        except ValueError:
            words = line.split()
        declared = [a.name for a in self.arguments]
        bound: dict[str, str] = {}
        positional: list[str] = []
        for word in words:
            key, eq, value = word.partition("=")
            if eq and key in declared and key not in bound:
                bound[key] = value
            else:
                positional.append(word)
        rest = [name for name in declared if name not in bound]
        for index, name in enumerate(rest):
            if not positional:
                break
            last = index == len(rest) - 1
            bound[name] = " ".join(positional) if last else positional.pop(0)
            if last:
                positional = []
        if positional:
            raise ToolError(f"/{self.command} takes no more arguments than {self.hint or 'none'}")
        missing = [a.name for a in self.arguments if a.required and a.name not in bound]
        if missing:
            raise ToolError(f"/{self.command} needs {', '.join(missing)}: /{self.command} {self.hint}")
        return bound

    async def fetch(self, arguments: dict[str, str]) -> str:
        """The prompt's messages as one text (each message's role named when there are several).

        Raises:
            ToolError: the server is gone, failed or did not answer within GET_SECONDS.
        """
        client = self.connection.client if self.connection is not None else None
        if client is None:
            raise ToolError(f"the MCP server {self.server!r} is not running")
        try:
            with anyio.fail_after(GET_SECONDS):
                result = await client.get_prompt(self.name, arguments or None)
        except TimeoutError:
            raise ToolError(
                f"the MCP server {self.server!r} did not answer within {GET_SECONDS:g} s"
            ) from None
        except Exception as exc:
            log.warning("mcp.prompt_failed", server=self.server, prompt=self.name, error=failure_reason(exc))
            raise ToolError(f"the MCP server {self.server!r} failed: {failure_reason(exc)}") from exc
        messages = list(result.messages)
        texts = [(m.role, content_text([m.content])) for m in messages]
        if len(texts) == 1 and texts[0][0] == "user":
            return texts[0][1]
        return "\n\n".join(f"[{role}]\n{text}" for role, text in texts)


async def list_prompts(client: Any, *, fresh: bool = False) -> list[Any]:
    """Every prompt the server lists (none when it offers no prompts); `fresh`: asked of the
    server, not the client's response cache (a re-list after a change notice)."""
    if getattr(client.server_capabilities, "prompts", None) is None:
        return []
    mode = "refresh" if fresh else "use"
    return await every_page(
        lambda cursor: client.list_prompts(cursor=cursor, cache_mode=mode), "prompts", _LIST_PAGES
    )


def adapt_prompts(listed: Iterable[Any], connection: ServerConnection, taken: set[str]) -> list[McpPrompt]:
    """A server's listed prompts as commands; each command name given is added to `taken`."""
    prompts = []
    for prompt in listed:
        command = tool_name(connection.server, prompt.name, taken)
        taken.add(command)
        arguments = tuple(
            PromptArgument(a.name, bool(a.required), a.description or "") for a in prompt.arguments or ()
        )
        description = prompt.description or prompt.title or f"The {prompt.name} prompt"
        prompts.append(McpPrompt(command, connection.server, prompt.name, description, arguments, connection))
    return prompts
