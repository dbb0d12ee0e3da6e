"""Test helpers shipped with the package: a loopback fake of the Anthropic Messages API.

    from acp_agent.testing import FakeMessagesAPI, replies

    with FakeMessagesAPI() as api:
        api.script(replies.tool_use("read_file", {"path": "a.txt"}), replies.text("done"))
        ...  # point the SDK (or the agent) at api.base_url

Importing this package never imports `anthropic`; it uses only the standard library.
"""

from __future__ import annotations

from acp_agent.testing import replies, routes, web_replies
from acp_agent.testing.messages_api import FakeMessagesAPI, RecordedRequest
from acp_agent.testing.models_listing import ModelsListing

__all__ = ["FakeMessagesAPI", "ModelsListing", "RecordedRequest", "replies", "routes", "web_replies"]
