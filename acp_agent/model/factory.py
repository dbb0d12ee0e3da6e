"""Build the model client from `--model`: the real API, or a cassette replayed through the SDK.

`replay:FILE` serves a recorded run back through the real `anthropic` SDK (an in-process
transport, so the same parsing, streaming and turn-loop code runs); `record` tees every Messages
exchange of a run to a cassette. Neither imports `anthropic` or `httpx2` here: the SDK's HTTP
client is built on the first request. The cassette's own modules (its format, the transports) are
imported only for a replay or a record (`cassette_client.py`), never on a first request's path.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp_agent.lazy import deferred
from acp_agent.model.anthropic import AnthropicModel
from acp_agent.model.spec import replay_path

__all__ = ["cassette_model", "make_model"]

CassetteModel = Callable[..., tuple[AnthropicModel, str]]


@deferred
def cassette_model() -> CassetteModel:
    """`cassette_client.cassette_model`: a replay's or a record's client, with the cassette's modules."""
    from acp_agent.model.cassette_client import cassette_model as build

    return build


def make_model(
    model_spec: str,
    *,
    streaming: bool,
    record: Path | None = None,
    replay_strict: bool = False,
    **kwargs: Any,
) -> tuple[AnthropicModel, str]:
    """The model client and the model id to send in requests.

    `kwargs` go to `AnthropicModel` (max_retries, stall_seconds, request_timeout, ...);
    for a replay, `api_key` and `base_url` are replaced by placeholders.

    Raises:
        CassetteError: the replay cassette cannot be read, or the record file cannot be written.
    """
    if replay_path(model_spec) is None and record is None:
        return AnthropicModel(streaming=streaming, **kwargs), model_spec
    build = cassette_model.now()
    return build(model_spec, streaming=streaming, record=record, replay_strict=replay_strict, **kwargs)
