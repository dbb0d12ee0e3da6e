"""Inbox: the harness client's reading of an agent's stdout, fed chunks the way a pipe cuts them."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from acp_agent.harness.inbox import Inbox
from acp_agent.harness.wire import Transcript


async def read_all(inbox: Inbox, *chunks: bytes) -> None:
    send, receive = anyio.create_memory_object_stream[bytes](len(chunks))
    for chunk in chunks:
        send.send_nowait(chunk)
    send.close()
    with receive, anyio.fail_after(5):
        await inbox.read(receive)  # type: ignore[arg-type]  # a memory stream yields bytes chunks too


def make_inbox() -> tuple[Inbox, list[dict[str, Any]], list[dict[str, Any]]]:
    requests: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    inbox = Inbox(Transcript(), on_request=requests.append, on_notification=notifications.append)
    return inbox, requests, notifications


@pytest.mark.anyio
async def test_a_response_to_an_awaited_id_is_matched_and_never_taken_as_a_new_message() -> None:
    inbox, _, _ = make_inbox()
    inbox.expect(7)
    await read_all(inbox, b'{"jsonrpc":"2.0","id":7,"res', b'ult":{}}\n{"jsonrpc":"2.0","method":"n"}\n')
    assert inbox.response_index(7) == 0
    assert inbox.take(lambda _: True, None) == {"jsonrpc": "2.0", "method": "n"}
    assert inbox.take(lambda _: True, None) is None
    assert inbox.closed


@pytest.mark.anyio
async def test_a_second_response_to_the_same_id_is_a_protocol_violation() -> None:
    inbox, _, _ = make_inbox()
    inbox.expect(1)
    await read_all(inbox, b'{"jsonrpc":"2.0","id":1,"result":1}\n{"jsonrpc":"2.0","id":1,"result":2}\n')
    assert inbox.response_index(1) == 0
    assert any("a second response to id" in v for v in inbox.transcript.protocol_violations)


@pytest.mark.anyio
async def test_requests_and_notifications_are_handed_on_and_bad_lines_kept() -> None:
    inbox, requests, notifications = make_inbox()
    await read_all(
        inbox,
        b'{"jsonrpc":"2.0","id":"a","method":"fs/read_text_file","params":{}}\n',
        b"not json\n",
        b'{"jsonrpc":"2.0","method":"session/update","params":{}}',  # no newline before EOF
    )
    assert [m["method"] for m in requests] == ["fs/read_text_file"]
    assert [m["method"] for m in notifications] == ["session/update"]
    assert inbox.invalid_lines == ["not json"]


def test_an_id_can_be_awaited_once_at_a_time() -> None:
    inbox, _, _ = make_inbox()
    inbox.expect("x")
    with pytest.raises(ValueError, match="already waiting"):
        inbox.expect("x")
    inbox.forget("x")
    inbox.expect("x")
    assert inbox.is_waiting("x") and inbox.response_index("x") is None
