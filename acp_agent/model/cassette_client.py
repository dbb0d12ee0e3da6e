"""The model client of a replay (`--model replay:FILE`) or a record (`--record FILE`).

Built by `model/factory.py:make_model` only for those: a run against the API never imports the
cassette's modules (its format, `cassette.py`, and the transports, `transports.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from acp_agent.errors import CassetteError
from acp_agent.model.anthropic import AnthropicModel
from acp_agent.model.cassette import CassetteHeader, CassetteWriter, load_cassette
from acp_agent.model.spec import replay_path
from acp_agent.model.transports import ClientTransport, RecordingTransport, ReplayTransport

__all__ = ["REPLAY_API_KEY", "REPLAY_BASE_URL", "cassette_model"]

log = structlog.get_logger(__name__)

REPLAY_API_KEY = "acp-agent-replay-placeholder-key"
"""A placeholder credential: a replay never reaches the network, but the SDK wants one. Not a
word that may appear in an error message: the model client redacts its key from every message."""
REPLAY_BASE_URL = "http://replay.invalid"
"""Never resolved: every request is answered by the replay transport."""


def cassette_model(
    model_spec: str,
    *,
    streaming: bool,
    record: Path | None = None,
    replay_strict: bool = False,
    **kwargs: Any,
) -> tuple[AnthropicModel, str]:
    """The model client of a replay (`replay:FILE`) and/or a record, and the model id it sends.

    Raises:
        CassetteError: the replay cassette cannot be read, or the record file cannot be written.
    """
    cassette_path = replay_path(model_spec)
    if cassette_path is not None:
        cassette = load_cassette(cassette_path)
        model_id = cassette.header.model
        kwargs.update(api_key=REPLAY_API_KEY, base_url=REPLAY_BASE_URL)
        log.info(
            "model.replay", path=str(cassette_path), exchanges=len(cassette.exchanges), strict=replay_strict
        )

        def inner() -> Any:
            return ReplayTransport(cassette, strict=replay_strict)
    else:
        model_id = model_spec
        inner = _default_transport

    transport = inner
    if record is not None:
        writer = _writer(record, CassetteHeader(model=model_id, streaming=streaming))
        log.info("model.record", path=str(record))

        def transport() -> Any:
            return RecordingTransport(inner(), writer)

    factory = None if transport is _default_transport else _client_factory(transport)
    return AnthropicModel(streaming=streaming, http_client_factory=factory, **kwargs), model_id


def _writer(path: Path, header: CassetteHeader) -> CassetteWriter:
    try:
        return CassetteWriter(path, header)
    except OSError as exc:
        raise CassetteError(f"cannot write cassette {path}: {exc.strerror or exc}") from None


def _default_transport() -> Any:
    """The SDK's default HTTP client (proxies from the environment, keep-alive) as a transport."""
    import anthropic

    return ClientTransport(anthropic.DefaultAsyncHttpxClient())


def _client_factory(transport: Callable[[], Any]) -> Callable[[], Any]:
    """Build the SDK's httpx2 client around a fresh transport, when the SDK client is built."""

    def build() -> Any:
        import anthropic

        return anthropic.DefaultAsyncHttpxClient(transport=transport())

    return build
