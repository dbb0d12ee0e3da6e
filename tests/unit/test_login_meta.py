"""The key an editor passes in `authenticate`'s `_meta["api-key"]`, in the shapes clients send."""

from __future__ import annotations

import pytest

from acp_agent.errors import RpcError
from acp_agent.session.auth.login import key_from_meta


def test_the_key_is_read_from_api_key_apikey_or_a_bare_string() -> None:
    assert key_from_meta({"api-key": {"apiKey": " sk-ant-a \n"}}) == "sk-ant-a"  # codex-acp's shape
    assert key_from_meta({"api-key": "sk-ant-b"}) == "sk-ant-b"
    assert key_from_meta({"api-key": {"provider": "anthropic"}}) is None  # the advertisement, echoed
    assert key_from_meta({"other": 1}) is None and key_from_meta(None) is None


@pytest.mark.parametrize("bad", ["", "   ", "two words", "sk\x00ant", "k" * 2000, 42, ["sk-ant-x"]])
def test_a_malformed_key_is_invalid_params_that_never_echoes_it(bad: object) -> None:
    with pytest.raises(RpcError) as caught:
        key_from_meta({"api-key": {"apiKey": bad}})
    assert caught.value.code == -32602
    if isinstance(bad, str) and bad.strip():
        assert bad not in caught.value.message + str(caught.value.data)
