"""The loopback fake's routes: replies chosen by what a request says, for conversations whose
requests interleave (subagents), and the per-reply delay benches use; through the real SDK."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from acp_agent.testing import FakeMessagesAPI, replies, routes

MODEL = "claude-test-1"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeMessagesAPI]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with FakeMessagesAPI() as api:
        yield api


@pytest.fixture
def client(fake: FakeMessagesAPI) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(api_key="test-key", base_url=fake.base_url, max_retries=0, timeout=10) as sdk:
        yield sdk


def ask(client: anthropic.Anthropic, prompt: str, system: str = "main", **kwargs: Any) -> str:
    message = client.messages.create(
        model=MODEL,
        max_tokens=100,
        system=system,
        messages=[{"role": "user", "content": [{"type": "text", "text": prompt}]}],
        **kwargs,
    )
    return "".join(b.text for b in message.content if b.type == "text")


def test_a_route_answers_its_conversation_and_the_script_the_rest(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    child = fake.route(routes.system_has("a subagent"), replies.text("child 1"), replies.text("child 2"))
    fake.script(replies.text("parent 1"), replies.text("parent 2"))
    assert ask(client, "hi") == "parent 1"
    assert ask(client, "task", system="You are a subagent") == "child 1"
    assert ask(client, "hi again") == "parent 2"
    assert ask(client, "task", system="You are a subagent") == "child 2"
    assert child.served == 2


def test_routes_by_first_prompt_keep_interleaved_conversations_apart(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    for name in ("A", "B"):
        fake.route(
            routes.first_prompt_has(f"task {name}"), replies.text(f"{name}1"), replies.text(f"{name}2")
        )
    answers = [ask(client, f"task {name}: go") for name in ("B", "A", "A", "B")]
    assert answers == ["B1", "A1", "A2", "B2"]


def test_otherwise_answers_every_further_match_and_an_exhausted_route_falls_through(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    fake.route(routes.first_prompt_has("loop"), replies.text("first"), otherwise=replies.text("again"))
    fake.route(routes.first_prompt_has("once"), replies.text("only once"))
    fake.script(replies.text("from the script"))
    assert [ask(client, "loop") for _ in range(3)] == ["first", "again", "again"]
    assert ask(client, "once") == "only once"
    assert ask(client, "once") == "from the script"  # the route is spent: the script answers
    with pytest.raises(anthropic.InternalServerError, match="no scripted reply left"):
        ask(client, "once")


def test_a_route_may_answer_with_a_factory_and_a_broken_predicate_answers_500(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    fake.route(routes.first_prompt_has("count"), otherwise=lambda body, n: replies.text(f"attempt {n}"))
    assert ask(client, "count") == "attempt 1"
    assert ask(client, "count") == "attempt 2"

    def broken(body: dict[str, Any]) -> bool:
        raise KeyError("oops")

    fake.route(broken, replies.text("never"))
    with pytest.raises(anthropic.InternalServerError, match="predicate raised KeyError"):
        ask(client, "something else")


@pytest.mark.parametrize("stream", [False, True])
def test_a_delay_holds_the_reply_on_both_paths(
    fake: FakeMessagesAPI, client: anthropic.Anthropic, stream: bool
) -> None:
    fake.script(replies.text("late", delay=0.3))
    started = time.monotonic()
    if stream:
        with client.messages.stream(
            model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        ) as reply:
            answer = reply.get_final_text()
    else:
        answer = ask(client, "hi")
    assert answer == "late"
    assert time.monotonic() - started >= 0.3  # held (an upper bound would time the machine)
