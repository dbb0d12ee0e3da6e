"""AnthropicModel: the Messages API behind the `ModelClient` seam, streaming or not.

Both paths yield the same `ModelEvent` sequence (docs/decisions.md C8). The SDK runs with
`max_retries=0`: retries are ours, because only here do we know whether output of the request
was already relayed (docs/decisions.md D1). `anthropic` is imported lazily (`model/sdk.py`).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing, suppress
from typing import TYPE_CHECKING, Any

import anyio
import structlog

from acp_agent.errors import AgentError, AuthRequired, ModelUnavailable, StreamBroken
from acp_agent.model.base import MessageDone, ModelEvent, ModelRequest, RetryScheduled, Usage
from acp_agent.model.caching import with_breakpoints
from acp_agent.model.cloud.platform_clients import ClientMaker
from acp_agent.model.cloud.platform_errors import error_parts, explain, refused_credentials
from acp_agent.model.cloud.platforms import Platform, is_set
from acp_agent.model.diagnostics import DiagnosticsField
from acp_agent.model.models_listing import read_models
from acp_agent.model.retry import Failure, GiveUp, RetryPolicy
from acp_agent.model.sdk import anthropic_sdk, taken_secrets
from acp_agent.model.stream_events import (
    Attempt,
    MalformedReply,
    cache_miss_of,
    message_events,
    relay_events,
    searches_past_allowance,
    usage_of,
    web_search_bound,
)
from acp_agent.phases import REQUEST_PHASE, phase

if TYPE_CHECKING:
    import ssl

    import anthropic

    from acp_agent.model.cloud.credential_helpers import Helpers

__all__ = ["AnthropicModel", "prompt_too_long"]

log = structlog.get_logger(__name__)


class AnthropicModel:
    """A `ModelClient` over the official SDK, with the agent's own retry policy."""

    def __init__(
        self,
        *,
        streaming: bool,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 2,
        stall_seconds: float = 120.0,
        request_timeout: float = 600.0,
        policy: RetryPolicy | None = None,
        http_client_factory: Callable[[], Any] | None = None,
        prompt_cache: bool = True,
        cache_ttl: str = "5m",
        platform: Platform | None = None,
        helpers: Callable[[], Helpers] | None = None,
        tls: Callable[[], ssl.SSLContext | None] | None = None,
    ) -> None:
        self.streaming = streaming
        self.stall_seconds = stall_seconds
        self.request_timeout = request_timeout
        self.policy = policy or RetryPolicy(max_retries=max_retries)
        self._api_key = api_key
        self._base_url = base_url
        self._http_client_factory = http_client_factory
        """Builds the SDK's `httpx2.AsyncClient` (record/replay transports); None: the SDK's own."""
        self._tls = tls
        """The TLS context built beside the warm-up (`model/tls.py`), for the SDK's own client."""
        self._client: anthropic.AsyncAnthropic | None = None
        self._clients: list[anthropic.AsyncAnthropic] = []
        """Every client built (`use_key` starts another: a request may still use the old one)."""
        self.prompt_cache = prompt_cache
        """Mark cache breakpoints (`model/caching.py`); off for gateways that reject them."""
        self.cache_ttl = cache_ttl
        self._diagnostics = DiagnosticsField()
        self._building = threading.Lock()
        """Held while the SDK client is built (by the warm-up thread or a first request's)."""
        self._answered = False
        self._answered_event: anyio.Event | None = None
        self._answered_now = threading.Event()
        """The same, for a thread (`wait_answered`)."""
        self.platform = platform or Platform("anthropic", "Anthropic API")
        """Where requests go (`model/cloud/platforms.py`): its client, model ids and features."""
        self._maker = ClientMaker(self.platform, helpers)

    def __repr__(self) -> str:
        return (
            f"AnthropicModel(streaming={self.streaming}, base_url={self._base_url!r}, "
            f"max_retries={self.policy.max_retries}, stall_seconds={self.stall_seconds})"
        )

    async def aclose(self) -> None:
        """Close the HTTP clients built so far."""
        clients, self._clients, self._client = self._clients, [], None
        for client in clients:
            with anyio.move_on_after(2, shield=True):
                await client.close()

    def use_key(self, api_key: str | None) -> None:
        """Send `api_key` from the next request on (None: the environment's, if any): a key given
        through `authenticate`, or none after `logout`."""
        with self._building:  # not while the warm-up builds a client with the old key
            if api_key != self._api_key:
                self._api_key, self._client = api_key, None

    def prepare(self) -> None:
        """Import the SDK and build its client now, blocking: the warm-up thread's last step, so
        the first request finds both ready. Without credentials nothing is built: the first
        request says so."""
        anthropic_sdk.now()
        with self._building:
            if self._client is None:
                with suppress(AuthRequired):
                    self._get_client()

    async def _ready_client(self) -> anthropic.AsyncAnthropic:
        """The SDK client; built in a worker thread (or waited for, from the warm-up) if need be."""
        if self._client is None:
            await anyio.to_thread.run_sync(self.prepare)
        return self._get_client()

    async def answered_once(self) -> None:
        """Returns once the API has begun to answer a Messages request of this client (the Models
        API question waits for that: `session/options/catalog.py`)."""
        if self._answered:
            return
        if self._answered_event is None:
            self._answered_event = anyio.Event()
        await self._answered_event.wait()

    def wait_answered(self, timeout: float) -> bool:
        """Block (a thread, never the event loop) until the API has begun to answer a Messages
        request of this client, or `timeout` seconds; whether it has."""
        return self._answered_now.wait(timeout)

    def _note_answered(self) -> None:
        if not self._answered:
            self._answered = True
            self._answered_now.set()
            if self._answered_event is not None:
                self._answered_event.set()

    async def list_models(self) -> dict[str, dict[str, Any]]:
        """What the Models API says of each model (`ModelInfo` as dicts), by id: at most a few
        pages and megabytes of it (`models_listing.py`). No retries. Nothing on a platform
        without the Models API (it is never asked there)."""
        if not self.platform.features.models_api:
            return {}
        client = await self._ready_client()
        await anyio.to_thread.run_sync(lambda: client.models)  # its resource's import: not on the loop
        return await read_models(client)

    # ── the retry loop ─────────────────────────────────────────────────────────────────────
    async def respond(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Send `request` (retrying per the policy) and yield its events; see `ModelClient`."""
        with phase("SDK and its client wait"):
            client = await self._ready_client()
        import anthropic
        import httpx2

        retries = 0
        renewed = False
        """The credentials were asked again once after a refusal (a helper, an AWS login)."""
        max_searches = web_search_bound(request.tools)
        probe: Failure | None = None
        """The 400 of a request that carried diagnostics, while it is re-sent without them."""
        while True:
            kwargs = self._request_kwargs(request, diagnostics=probe is None)
            carried = "diagnostics" in kwargs
            undecided = self._diagnostics.accepted is None and (carried or probe is not None)
            attempt = Attempt(max_searches)
            try:
                once = self._stream_once if self.streaming else self._create_once
                async with aclosing(once(client, kwargs, attempt)) as events:
                    async for event in events:
                        if undecided:  # the API took the request: that settles the field
                            undecided = False
                            self._diagnostics.answered(carried, probe)
                        yield event
                return
            except StreamBroken as exc:
                # A body that ended early before anything was relayed is a connection failure
                # like a drop (D1): the policy may retry it. After output it ends the turn.
                if attempt.relayed or not exc.retryable:
                    raise
                failure = Failure(str(exc))
            except AgentError:
                raise
            except anthropic.APIStatusError as exc:
                if (
                    refused_credentials(self.platform, exc)
                    and not renewed
                    and not attempt.relayed
                    and await self._renew_credentials()
                ):
                    renewed, retries = True, retries + 1
                    log.info("model.resent", attempt=retries, reason="the credentials were asked again")
                    yield RetryScheduled(retries, 0.0, "credentials renewed", quiet=True)
                    client = await self._ready_client()
                    continue
                failure = self._failure(exc)
            except (anthropic.APIError, httpx2.TransportError, TimeoutError) as exc:
                failure = self._failure(exc)
            except Exception as exc:  # signing failed: an expired AWS SSO login, no Google credentials
                problem = self._maker.sign_in_problem(exc)
                if problem is None:
                    raise
                if not renewed and await self._renew_credentials():
                    renewed, retries = True, retries + 1
                    yield RetryScheduled(retries, 0.0, "credentials renewed", quiet=True)
                    client = await self._ready_client()
                    continue
                raise AuthRequired(self._redact(problem)) from None
            if prompt_too_long(failure):
                yield MessageDone([], "context_window_exceeded", Usage())
                return
            if failure.status == 400 and carried and self._diagnostics.accepted is None:
                probe, retries = failure, retries + 1  # the same request again, without the field
                log.info("model.resent", attempt=retries, reason="a 400 to a request with diagnostics")
                yield RetryScheduled(retries, 0.0, "sent again without diagnostics", quiet=True)
                continue
            if failure.status == 400 and probe is not None:
                failure = probe  # refused without the field too: it was not the field's fault
            decision = self.policy.decide(
                failure,
                retries_taken=retries,
                relayed=attempt.relayed,
                time_left=request.seconds_left(),
            )
            if isinstance(decision, GiveUp):
                raise self._give_up(decision, failure, attempt)
            retries += 1
            log.info(  # the one log line per retry (the runner only tells the editor)
                "model.retry",
                attempt=retries,
                max_retries=self.policy.max_retries,
                delay=round(decision.delay, 3),
                status=failure.status,
                reason=decision.reason,
            )
            yield RetryScheduled(retries, decision.delay, decision.reason)
            await anyio.sleep(decision.delay)

    async def _renew_credentials(self) -> bool:
        """Ask the helpers again after the API refused the credentials; True: build anew and retry."""
        try:
            renewed = await anyio.to_thread.run_sync(self._maker.refresh_after_refusal)
        except AuthRequired as exc:
            log.warning("model.renew_failed", reason=str(exc))
            return False
        if renewed:
            with self._building:
                self._client = None
        return renewed

    def _give_up(self, decision: GiveUp, failure: Failure, attempt: Attempt) -> AgentError:
        reason = self._redact(decision.reason)  # no-op unless the API echoed a key
        if attempt.relayed:
            return StreamBroken(reason, partial=attempt.content(partial=True), retryable=decision.transient)
        error = ModelUnavailable(reason, retryable=decision.transient)
        error.detail.update({"status": failure.status, "errorType": failure.error_type})
        error.detail["apiMessage"] = failure.api_message  # read by turn/context/media_budget.py
        return error

    # ── one attempt on each path ───────────────────────────────────────────────────────────
    async def _stream_once(
        self, client: anthropic.AsyncAnthropic, kwargs: dict[str, Any], attempt: Attempt
    ) -> AsyncGenerator[ModelEvent, None]:
        import httpx2

        # A stall is no byte for stall_seconds: the read timeout watches every socket read at no
        # per-event cost (a cancel scope per event would add ~25 µs to each delta).
        timeout = httpx2.Timeout(self.stall_seconds, connect=min(self.stall_seconds, 10.0))
        with anyio.fail_after(self.stall_seconds + 1), phase(REQUEST_PHASE):
            stream = await client.messages.create(stream=True, timeout=timeout, **kwargs)
        self._note_answered()
        self._check_stream_type(stream)
        try:
            async for event in relay_events(stream, attempt):
                yield event
        except (KeyError, ValueError) as exc:  # deltas for an unknown block, bad JSON or figures
            raise _malformed(exc, attempt) from None
        except Exception as exc:
            if not _is_event_stream_error(exc):
                raise
            raise StreamBroken(
                f"the Bedrock event stream was malformed ({type(exc).__name__})",
                partial=attempt.content(partial=True),
                retryable=True,
            ) from None
        finally:
            with anyio.move_on_after(2, shield=True):
                await stream.close()
        if not attempt.stopped or attempt.stop_reason is None:
            what = "a stop_reason" if attempt.stopped else "message_stop (truncated)"
            raise StreamBroken(
                f"the reply ended without {what}", partial=attempt.content(partial=True), retryable=True
            )
        searches_past_allowance(attempt.usage, attempt)
        yield MessageDone(
            attempt.content(), attempt.stop_reason, attempt.usage, attempt.message_id, attempt.cache_miss
        )

    async def _create_once(
        self, client: anthropic.AsyncAnthropic, kwargs: dict[str, Any], attempt: Attempt
    ) -> AsyncGenerator[ModelEvent, None]:
        import anthropic

        try:
            with phase(REQUEST_PHASE):
                message = await client.messages.create(timeout=self.request_timeout, **kwargs)
        except anthropic.APITimeoutError as exc:
            if _is_connect_timeout(exc):
                raise
            raise ModelUnavailable(
                f"no answer within {self.request_timeout:g} s; not retried, because the API "
                "may have processed (and billed) the request",
                retryable=True,
            ) from None
        self._note_answered()
        if not isinstance(message, anthropic.types.Message):
            raise ModelUnavailable("the API answered with a body that is not a message")
        attempt.relayed = True  # nothing after this point is retried
        try:  # checked before any of it is relayed, as the stream's message_start is
            usage = usage_of(message.usage)
        except MalformedReply as exc:
            raise _malformed(exc, attempt) from None
        events, content = message_events(message)
        for event in events:
            yield event
        yield usage
        if message.stop_reason is None:
            raise StreamBroken("the reply ended without a stop_reason", partial=content)
        searches_past_allowance(usage, attempt)
        yield MessageDone(content, message.stop_reason, usage, message.id, cache_miss_of(message))

    def _check_stream_type(self, stream: Any) -> None:
        """Bedrock streams must be AWS event-stream: anything else is a gateway that rewrote it,
        which the SDK would misread (unless `CLAUDE_CODE_DISABLE_BEDROCK_CONTENT_TYPE_GUARD`)."""
        platform = self.platform
        if platform.name != "bedrock" or is_set(
            platform.settings, "CLAUDE_CODE_DISABLE_BEDROCK_CONTENT_TYPE_GUARD"
        ):
            return
        kind = stream.response.headers.get("content-type", "")
        if not kind.startswith("application/vnd.amazon.eventstream"):
            raise ModelUnavailable(
                f"Amazon Bedrock answered a stream as {kind or 'no content-type'}, not "
                "application/vnd.amazon.eventstream (a gateway that rewrites streams?); set "
                "CLAUDE_CODE_DISABLE_BEDROCK_CONTENT_TYPE_GUARD=1 to read it anyway"
            )

    def _request_kwargs(self, request: ModelRequest, *, diagnostics: bool = True) -> dict[str, Any]:
        """The request as SDK arguments, with the platform's model id: cache breakpoints, and
        diagnostics where the platform has them, when the cache is on."""
        kwargs = _request_kwargs(request)
        kwargs["model"] = self.platform.models.wire(request.model)
        if not self.prompt_cache:
            return kwargs
        if diagnostics and self.platform.features.diagnostics and self._diagnostics.wanted():
            kwargs["diagnostics"] = {"previous_message_id": request.previous_message_id}
        return with_breakpoints(kwargs, ttl=self.cache_ttl)

    def _get_client(self) -> anthropic.AsyncAnthropic:
        if self._client is not None and not self._maker.stale():
            return self._client
        http_client = (
            self._http_client_factory() if self._http_client_factory else self._default_http_client()
        )
        # The credentials left os.environ at start-up (sdk.take_env_keys): the maker hands them
        # to the platform's client explicitly.
        try:
            client = self._maker.build(
                api_key=self._api_key,
                base_url=self._base_url,
                timeout=self.request_timeout,
                http_client=http_client,
            )
        except AuthRequired as exc:
            if not self.platform.first_party:
                raise AuthRequired(self._redact(str(exc))) from None
            raise AuthRequired(f"{_NO_CREDENTIALS} ({self._redact(str(exc))})") from None
        # What the SDK resolved, checked before any request: with none of the three, its first
        # request would fail with a TypeError ("Could not resolve authentication method").
        if self.platform.first_party and not (
            client.api_key or client.auth_token or getattr(client, "credentials", None)
        ):
            raise AuthRequired(_NO_CREDENTIALS)
        self._client = client
        self._clients.append(client)
        return client  # type: ignore[no-any-return]

    def _default_http_client(self) -> Any:
        """The SDK's default client, verifying with the context built beside the warm-up; None
        (the SDK builds the same client, and its context, itself) when there is none."""
        context = self._tls() if self._tls is not None else None
        if context is None:
            return None
        import anthropic

        return anthropic.DefaultAsyncHttpxClient(verify=context)

    def _failure(self, exc: BaseException) -> Failure:
        """Describe a failed attempt for the policy; 401/403 end the turn at once."""
        import anthropic
        import httpx2

        if isinstance(exc, anthropic.APIStatusError):
            # The body's error.type and error.message (SDK >= 2.10); a cloud's own error shape
            # (Bedrock's `message` and x-amzn-ErrorType, Google's `error.status`) where it has none.
            error_type, message = error_parts(exc)
            text = self._redact(f"{error_type}: {message or 'no message'}")
            if exc.status_code == 200:  # an `error` event inside the stream
                return Failure(f"the stream failed with {text}", error_type=error_type or "?")
            hint = explain(self.platform, exc.status_code, error_type, message or "")
            if hint is not None and hint.not_credentials:
                raise ModelUnavailable(self._redact(f"{hint.text} (HTTP {exc.status_code} {text})")) from None
            if exc.status_code in (401, 403):
                what = hint.text if hint is not None else "the API refused the credentials"
                raise AuthRequired(f"{what} (HTTP {exc.status_code} {text})") from None
            return Failure(
                f"HTTP {exc.status_code} {text}" + (f"; {hint.text}" if hint is not None else ""),
                status=exc.status_code,
                error_type=error_type,
                headers=dict(exc.response.headers),
                api_message=self._redact(message) if message else None,
            )
        if isinstance(exc, anthropic.APITimeoutError) and _is_connect_timeout(exc):
            return Failure("could not connect to the API in time")
        if isinstance(exc, TimeoutError | anthropic.APITimeoutError | httpx2.TimeoutException):
            return Failure(f"no answer from the API for {self.stall_seconds:g} s (stall)")
        if isinstance(exc, anthropic.APIConnectionError):
            exc = exc.__cause__ or exc
        return Failure(f"connection failed ({type(exc).__name__}: {self._redact(str(exc))})")

    def _redact(self, text: str) -> str:
        """`text` without any credential the client holds, as written or as an error message
        quotes it (h11 shows an invalid header's value as bytes, its newlines escaped)."""
        for secret in (self._api_key, *taken_secrets(), *self._maker.secrets()):
            for form in _spellings(secret) if secret else ():
                text = text.replace(form, "[redacted]")
        return text


def _spellings(secret: str) -> list[str]:
    """`secret` as written, escaped as `repr` shows a str or its bytes, and each of its lines
    long enough to be secret on its own: longest first, so a shorter one never leaves a piece."""
    forms = {
        secret,
        repr(secret)[1:-1],
        repr(secret.encode("utf-8", "surrogateescape"))[2:-1],
        *(line for line in secret.splitlines() if len(line.strip()) >= 8),
    }
    return sorted((f for f in forms if f), key=len, reverse=True)


_NO_CREDENTIALS = (
    "no Anthropic credentials: set ANTHROPIC_API_KEY in the agent's environment "
    "(or use --model demo, which needs none)"
)


def _request_kwargs(request: ModelRequest) -> dict[str, Any]:
    """The SDK's keyword arguments: unset optional fields are left out, never sent as null."""
    optional = {
        "system": request.system,
        "tools": request.tools or None,
        "tool_choice": request.tool_choice,
        "thinking": request.thinking,
        "output_config": request.output_config,
    }
    return {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": request.messages,
        **{name: value for name, value in optional.items() if value is not None},
    }


def prompt_too_long(failure: Failure) -> bool:
    """The API refused the prompt as longer than the model's context window (D1).

    The one rule that reads an error's text, because the API gives this refusal no code of its
    own: it is a 400 `invalid_request_error` like any other bad request, told apart only by its
    `error.message`, "prompt is too long: 212345 tokens > 200000 maximum" (no `error_code`, no
    SDK class: `anthropic-wire.md` §5). So the match is on the body's message field, anchored at
    its start, and only after the status and the error type agree.
    """
    return (
        failure.status == 400
        and failure.error_type == "invalid_request_error"
        and (failure.api_message or "").lower().startswith("prompt is too long")
    )


def _malformed(exc: Exception, attempt: Attempt) -> StreamBroken:
    """A reply the API could not have sent, on either path: the turn ends with what it relayed."""
    what = str(exc) if isinstance(exc, MalformedReply) else type(exc).__name__
    return StreamBroken(f"the reply was malformed ({what})", partial=attempt.content(partial=True))


def _is_event_stream_error(exc: BaseException) -> bool:
    """A botocore event-stream decoding error (a bad checksum, a short prelude): a broken
    Bedrock stream. Checked by module, so botocore is never imported for it."""
    return type(exc).__module__ == "botocore.eventstream"


def _is_connect_timeout(exc: BaseException) -> bool:
    return type(exc.__cause__).__name__ in ("ConnectTimeout", "PoolTimeout")


# ── events and content blocks ──────────────────────────────────────────────────────────────────
