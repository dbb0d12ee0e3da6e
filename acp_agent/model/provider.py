"""The process's one model client, built by the warm-up thread (`warm`) or when the first turn needs it.

Building it imports the model client's own modules (`model/factory.py`) and the SDK, which the
handshake must not wait for (docs/decisions.md D4). Replaying or recording a cassette is the
exception: the client is built at start-up, because a replay's model id is shown from
`session/new` on, and a cassette that cannot be read or written should stop the agent at once.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import anyio.to_thread

from acp_agent.lazy import deferred
from acp_agent.model.spec import replay_path
from acp_agent.model.tls import TlsContext

if TYPE_CHECKING:
    from collections.abc import Callable

    from acp_agent.model.anthropic import AnthropicModel
    from acp_agent.model.base import ModelClient

    MakeModel = Callable[..., tuple[AnthropicModel, str]]
    """`model.factory.make_model`: the client and the model id its requests carry."""

__all__ = ["ModelLister", "ModelProvider", "SaysWhenAnswered", "model_factory"]


@deferred
def model_factory() -> MakeModel:
    """`make_model`; imports the model client's own modules late (`model/factory.py`, and
    `model/base.py`: its dataclasses alone cost the handshake 3 ms)."""
    from acp_agent.model.factory import make_model

    return make_model


FIRST_ANSWER_WAIT = 30.0
"""Seconds the warm-up's last steps wait for a first request to be answered (`after_first_answer`)."""


class ModelProvider:
    """`await provider()` gives the model client, built on the first call.

    `kwargs` go to `model.factory.make_model` (streaming, record, base_url, api_key, ...).

    Raises:
        CassetteError: at construction, when a replay cassette cannot be read or the record file
            cannot be written.
    """

    def __init__(self, spec: str, **kwargs: Any) -> None:
        self.spec = spec
        self.model_id = spec
        """The model id requests carry: the spec, or a replay cassette's recorded model."""
        self.tls = TlsContext()
        """The TLS context the client verifies with, built beside the warm-up (`start_tls`)."""
        self._kwargs = {"tls": self.tls.get, **kwargs}
        self._client: AnthropicModel | None = None
        self._building = threading.Lock()
        if replay_path(spec) is not None or kwargs.get("record") is not None:
            self._build()

    async def __call__(self) -> ModelClient:
        if self._client is None:
            await anyio.to_thread.run_sync(self._build)  # or waits for the warm-up's
        assert self._client is not None
        return self._client

    def start_tls(self) -> None:
        """A warm-up step, before the SDK: the client's TLS context, built on the other core while
        the SDK is imported (`model/tls.py`)."""
        self.tls.start()

    def warm(self) -> None:
        """Build the model client and its SDK client now (blocking): the warm-up's last step."""
        self._build()
        assert self._client is not None
        self._client.prepare()

    def after_first_answer(self) -> None:
        """A warm-up step, after the client: wait until the API has begun to answer the first
        request (at most `FIRST_ANSWER_WAIT` seconds), so that what the warm-up loads next (the
        parsers a later step needs) never competes with that request for the GIL."""
        if self._client is not None:
            self._client.wait_answered(FIRST_ANSWER_WAIT)

    def use_key(self, api_key: str | None) -> None:
        """The key requests carry from now on (None: the environment's); a client already built
        switches too (`AnthropicModel.use_key`)."""
        with self._building:  # one client, so a key given now reaches every user
            if api_key is None:
                self._kwargs.pop("api_key", None)
            else:
                self._kwargs["api_key"] = api_key
            if self._client is not None and replay_path(self.spec) is None:
                self._client.use_key(api_key)

    def _build(self) -> None:
        with self._building:
            if self._client is None:
                self._client, self.model_id = model_factory.now()(self.spec, **self._kwargs)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


@runtime_checkable
class ModelLister(Protocol):
    """A model client that can ask the Models API what each model accepts (`AnthropicModel`).

    Here, not beside `ModelClient` in `model/base.py`: the session layer checks for it, and
    session/new must not load `base.py` (D4)."""

    async def list_models(self) -> dict[str, dict[str, Any]]: ...


@runtime_checkable
class SaysWhenAnswered(Protocol):
    """A model client that can say when the API first began to answer one of its requests
    (`AnthropicModel`): the Models API question waits for it, never going out ahead of a prompt."""

    async def answered_once(self) -> None: ...
