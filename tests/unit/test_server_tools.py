"""The web server tools on the model side: their definitions, the search allowance, the blocks on
both API paths through the real SDK, and what the fake refuses (issue 26, item 2)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from acp_agent.model.anthropic import AnthropicModel
from acp_agent.model.base import MessageDone, ModelEvent, ModelRequest, ServerToolBlock, TextDelta, Usage
from acp_agent.model.pricing import Price
from acp_agent.model.profiles import builtin_profile, profile_from_api
from acp_agent.model.server_tools import (
    WEB_FETCH_BASIC,
    WEB_SEARCH_BASIC,
    WebTools,
    search_allowance,
    web_tools,
)
from acp_agent.testing import FakeMessagesAPI, web_replies
from acp_agent.testing.rules.model_rules import check_request

SEARCH = web_replies.web_search(
    "acp spec", [("ACP", "https://agentclientprotocol.com"), ("Repo", "https://g.it/acp")]
)
FETCH = web_replies.web_fetch("https://agentclientprotocol.com", "The protocol.", title="ACP")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeMessagesAPI]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with FakeMessagesAPI() as api:
        yield api


def request(tools: list[dict[str, Any]], model: str = "claude-test-1", **fields: Any) -> ModelRequest:
    return ModelRequest(
        model=model,
        max_tokens=256,
        messages=[{"role": "user", "content": "look it up"}],
        tools=tools,
        **fields,
    )


async def collect(fake: FakeMessagesAPI, streaming: bool, req: ModelRequest) -> list[ModelEvent]:
    model = AnthropicModel(streaming=streaming, api_key="k", base_url=fake.base_url, max_retries=0)
    try:
        return [event async for event in model.respond(req)]
    finally:
        await model.aclose()


# ── definitions and the allowance ────────────────────────────────────────────────────────────


def test_the_allowance_is_the_largest_power_of_two_within_what_is_left() -> None:
    assert [search_allowance(10, used) for used in range(12)] == [8, 8, 8, 4, 4, 4, 4, 2, 2, 1, 0, 0]
    assert search_allowance(1, 0) == 1 and search_allowance(1, 1) == 0
    assert search_allowance(None, 50) is None
    assert search_allowance(0, 0) == 0


def test_definitions_carry_the_versions_the_domains_and_max_uses() -> None:
    web = WebTools(
        search="web_search_20260318", fetch="web_fetch_20260318", allowed_domains=("docs.python.org",)
    )
    assert web.definitions(max_uses=4) == [
        {
            "type": "web_search_20260318",
            "name": "web_search",
            "allowed_domains": ["docs.python.org"],
            "max_uses": 4,
        },
        {"type": "web_fetch_20260318", "name": "web_fetch", "allowed_domains": ["docs.python.org"]},
    ]
    assert [t["name"] for t in web.definitions(max_uses=0)] == ["web_fetch"]  # nothing left to search
    assert "max_uses" not in web.definitions(max_uses=None)[0]
    assert WebTools(enabled=False, search="web_search_20260318").definitions(max_uses=8) == []
    assert WebTools().definitions(max_uses=8) == []  # a model without web tools


def test_domain_lists_are_checked_and_never_both() -> None:
    assert web_tools(enabled=True, blocked="ads.example.com, spam.example").blocked_domains == (
        "ads.example.com",
        "spam.example",
    )
    with pytest.raises(ValueError, match="set one or the other"):
        web_tools(enabled=True, allowed=["a.example"], blocked=["b.example"])
    with pytest.raises(ValueError, match="no scheme"):
        web_tools(enabled=True, allowed=["https://a.example"])
    with pytest.raises(ValueError, match="list of domains"):
        web_tools(enabled=True, allowed=7)


def test_profiles_name_the_versions_and_the_models_api_overrides_them() -> None:
    assert builtin_profile("claude-sonnet-5-5").web_search == "web_search_20260318"
    assert builtin_profile("claude-haiku-4-5").web_search == WEB_SEARCH_BASIC
    assert builtin_profile("claude-haiku-4-5").web_fetch == WEB_FETCH_BASIC
    assert builtin_profile("claude-test-1").web_search is None  # unknown: none
    has = {"capabilities": {"server_tools": {"supported": True, "web_search": {"supported": True}}}}
    lacks = {"capabilities": {"server_tools": {"supported": True, "web_search": {"supported": False}}}}
    unknown = profile_from_api(builtin_profile("claude-gateway-9"), has)
    assert (unknown.web_search, unknown.web_fetch) == (WEB_SEARCH_BASIC, WEB_FETCH_BASIC)
    assert profile_from_api(builtin_profile("claude-sonnet-5-5"), has).web_search == "web_search_20260318"
    refused = profile_from_api(builtin_profile("claude-sonnet-5-5"), lacks)
    assert (refused.web_search, refused.web_fetch) == (None, None)
    assert profile_from_api(builtin_profile("claude-sonnet-5-5"), {}).web_search == "web_search_20260318"


def test_searches_are_priced_at_ten_dollars_per_thousand() -> None:
    price = Price(2, 10)
    assert price.cost(Usage(web_search_requests=3)) == pytest.approx(0.03)
    assert price.cost(Usage(input_tokens=1_000_000, web_fetch_requests=5)) == pytest.approx(2.0)


# ── both API paths ───────────────────────────────────────────────────────────────────────────


async def test_a_search_and_a_fetch_reach_the_loop_on_both_paths(
    fake: FakeMessagesAPI, streaming: bool
) -> None:
    fake.script(web_replies.searched(SEARCH, FETCH, text="Found it.", usage=(30, 9)))
    tools = WebTools(search="web_search_20250305", fetch="web_fetch_20250910").definitions(max_uses=2)
    events = await collect(fake, streaming, request(tools))
    shown = [e.block for e in events if isinstance(e, ServerToolBlock)]
    assert [b["type"] for b in shown] == [
        "server_tool_use",
        "web_search_tool_result",
        "server_tool_use",
        "web_fetch_tool_result",
    ]
    assert shown[0]["input"] == {"query": "acp spec"}  # complete, on the stream too
    done = events[-1]
    assert isinstance(done, MessageDone)
    assert done.content[:4] == shown  # kept unchanged and in place
    assert done.content[1]["content"][1]["url"] == "https://g.it/acp"
    assert done.content[3]["content"]["content"]["source"]["data"] == "The protocol."
    assert done.usage.web_search_requests == 1 and done.usage.web_fetch_requests == 1
    assert [type(e) for e in events if isinstance(e, ServerToolBlock | TextDelta)][-1] is TextDelta


async def test_error_results_and_a_lone_paused_call_pass_through(
    fake: FakeMessagesAPI, streaming: bool
) -> None:
    failed = web_replies.web_search("x", error="unavailable")
    paused = web_replies.server_tool_use("web_search", {"query": "y"})
    fake.script(web_replies.searched(failed, paused, stop_reason="pause_turn"))
    tools = WebTools(search="web_search_20250305").definitions(max_uses=4)
    done = (await collect(fake, streaming, request(tools)))[-1]
    assert isinstance(done, MessageDone) and done.stop_reason == "pause_turn"
    assert done.content[1]["content"] == {"type": "web_search_tool_result_error", "error_code": "unavailable"}
    assert done.content[2] == paused.content


# ── the fake ─────────────────────────────────────────────────────────────────────────────────


def test_the_fake_refuses_what_the_api_refuses() -> None:
    def body(tools: list[dict[str, Any]], model: str = "claude-sonnet-5-5", **extra: Any) -> dict[str, Any]:
        return {
            "model": model,
            "max_tokens": 100,
            "messages": [{"role": "user", "content": "q"}],
            "tools": tools,
            **extra,
        }

    newest = {"type": "web_search_20260318", "name": "web_search"}
    assert check_request(body([newest])) is None
    refused = check_request(body([newest], model="claude-haiku-4-5"))
    assert refused is not None and "'web_search_20260318' is not supported by claude-haiku-4-5" in refused[2]
    assert (
        check_request(body([{"type": "web_search_20250305", "name": "web_search"}], model="claude-haiku-4-5"))
        is None
    )
    zero = check_request(body([{**newest, "max_uses": 0}]))
    assert zero is not None and zero[2] == "tools.0.max_uses: Input should be greater than 0"
    both = check_request(body([{**newest, "allowed_domains": ["a"], "blocked_domains": ["b"]}]))
    assert both is not None and "Cannot specify both" in both[2]
    unknown = check_request(
        body([{"type": "web_search_20991231", "name": "web_search"}], model="claude-test-1")
    )
    assert unknown is not None and "does not match any of the expected tags" in unknown[2]
    alone = [{"role": "user", "content": "q"}, {"role": "assistant", "content": [SEARCH[1].content]}]
    misplaced = check_request(body([newest], messages=alone))
    assert (
        misplaced is not None
        and "must have a corresponding `server_tool_use` block before it" in misplaced[2]
    )


def test_a_paused_server_tool_reply_may_be_sent_back_last_but_no_other_prefill() -> None:
    paused = {
        "role": "assistant",
        "content": [web_replies.server_tool_use("web_search", {"query": "q"}).content],
    }
    prefill = {"role": "assistant", "content": [{"type": "text", "text": "Sure,"}]}
    for last, refused in ((paused, False), (prefill, True)):
        messages = [{"role": "user", "content": "q"}, last]
        found = check_request({"model": "claude-sonnet-5-5", "max_tokens": 10, "messages": messages})
        assert (found is not None) is refused


async def test_a_script_that_searches_past_max_uses_fails_the_test(fake: FakeMessagesAPI) -> None:
    two = web_replies.searched(web_replies.web_search("a"), web_replies.web_search("b"), text="x")
    fake.script(two, two)
    tools = WebTools(search="web_search_20250305").definitions(max_uses=1)
    client = anthropic.Anthropic(api_key="k", base_url=fake.base_url, max_retries=0)
    with pytest.raises(anthropic.InternalServerError, match="max_uses is 1"):
        client.messages.create(
            model="claude-test-1", max_tokens=10, messages=[{"role": "user", "content": "q"}], tools=tools
        )  # type: ignore[arg-type]
    with pytest.raises(anthropic.InternalServerError, match="does not offer"):
        client.messages.create(
            model="claude-test-1", max_tokens=10, messages=[{"role": "user", "content": "q"}]
        )
    refused = web_replies.searched(
        web_replies.web_search("a"), web_replies.web_search("b", error="max_uses_exceeded")
    )
    fake.script(refused)  # the API's own refusal of the second is not a search
    message = client.messages.create(
        model="claude-test-1", max_tokens=10, messages=[{"role": "user", "content": "q"}], tools=tools
    )  # type: ignore[arg-type]
    assert (
        message.usage.server_tool_use is not None and message.usage.server_tool_use.web_search_requests == 1
    )
    client.close()


def test_the_meter_sums_searches_and_fetches_and_prices_them_into_the_turn() -> None:
    from acp_agent.limits import Limits
    from acp_agent.turn.meter import TurnMeter
    from acp_agent.turn.record import TurnRecord
    from acp_agent.turn.stop import TurnStop

    meter = TurnMeter(Limits(max_web_searches=3, max_turn_cost_usd=0.025), price=Price(0, 0))
    assert meter.web_search_allowance() == 2
    meter.tokens_used(Usage(web_search_requests=2, web_fetch_requests=1))
    assert meter.web_search_allowance() == 1 and meter.exhausted() is None
    meter.tokens_used(Usage(web_search_requests=1))
    assert meter.web_search_allowance() == 0
    assert meter.exhausted() is not None  # $0.03 of searches passed maxTurnCostUsd
    record = TurnRecord.from_meter(meter, turn_id="t", stop=TurnStop.END_TURN, streaming=True).to_meta()
    assert (record["webSearches"], record["webFetches"], record["costUsd"]) == (3, 1, 0.03)


def test_the_sse_codec_carries_server_blocks_both_ways() -> None:
    """A recorded reply with a search is served on the other path unchanged (cassettes, the fake)."""
    from acp_agent.model.sse import events_to_message, message_to_events

    use, result = web_replies.web_search("acp", DOCS_FOR_CODEC)
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test-1",
        "content": [use.content, result.content, {"type": "text", "text": "done"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 2, "server_tool_use": {"web_search_requests": 1}},
    }
    events = message_to_events(message)
    starts = [e.data["content_block"] for e in events if e.event == "content_block_start"]
    assert (
        starts[0] == {**use.content, "input": {}} and starts[1] == result.content
    )  # input streamed, result whole
    status, rebuilt = events_to_message(events)
    assert status == 200 and rebuilt["content"] == message["content"]
    assert rebuilt["usage"]["server_tool_use"] == {"web_search_requests": 1}


DOCS_FOR_CODEC = [("A", "https://a.example"), ("B", "https://b.example/x")]
