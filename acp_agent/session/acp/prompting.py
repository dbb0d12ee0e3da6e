"""A prompt's way through the session layer: `session/prompt` and `_session/steering`.

`PromptTurns` owns a prompt from its params to its answer. It is read for the session's model,
its `/name` once (`prompts.py`), takes the session's turn slot (queued behind a running turn, D3:
`SessionManager.turn`), and runs there: on the model, driven here (`drive_turn`, with what the
turn machinery starts it with, `Engine.start`, and the turn's checkpoints around it), once the
session's runtime is built (the trust question waits there, `Engine.ready`); or answered without
a request (a prompt cancelled while it waited, an empty one, a slash command: `Engine.quiet_turn`,
`Engine.run_command`, `/fork` answered here since the manager forks). Its answer is the
`PromptResponse` of the turn's record (`prompt_answer`), or a JSON-RPC error carrying the record.
A steering message joins the running turn, or the one on its way (queued, or starting: a prompt
expects messages from the moment it queues, `Steering.expect`), and starts a turn of its own,
which no request awaits, only when none exists. The front handler routes both here (`front.py`,
through the method table of `handlers.py`).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import structlog

from acp_agent.errors import RpcError
from acp_agent.journal.store import now_iso
from acp_agent.journal.titles import prompt_title
from acp_agent.lazy import deferred
from acp_agent.phases import mark, phase
from acp_agent.protocol.session import PromptRequest, SteeringRequest
from acp_agent.protocol.turn import PromptResponse, PromptUsage
from acp_agent.session.acp.prompts import PreparedPrompt, prepared_prompt
from acp_agent.session.auth.methods import AUTH_HELP
from acp_agent.session.editor.updates import info_update, user_chunks
from acp_agent.session.manager import SessionManager, journal_fork, journal_reload
from acp_agent.session.params import parse
from acp_agent.session.state import RunningTurn, Session
from acp_agent.turn.steering import Expected, SteeringMessage

if TYPE_CHECKING:
    from acp_agent.turn.driver import TurnResult
    from acp_agent.turn.record import TurnRecord

__all__ = ["PromptTurns", "prompt_answer", "turn_driver"]

log = structlog.get_logger(__name__)


@deferred
def turn_driver() -> Callable[..., Awaitable[TurnResult]]:
    """The turn's driver (`turn/driver.py:drive_turn`), imported with the turn machinery (D4)."""
    from acp_agent.turn.driver import drive_turn

    return drive_turn


class PromptTurns:
    """Runs the session's prompts and steering messages in their turns, and answers them."""

    def __init__(self, manager: SessionManager, *, key_refused: Callable[[], None]) -> None:
        self.manager = manager
        self._key_refused = key_refused
        """Called when the API refused the key (the login forgets it, `auth/login.py`)."""

    async def prompt(self, params: Any) -> dict[str, Any]:
        """Validate, queue behind the running turn (D3), then run the prompt in its turn."""
        mark("prompt received")
        request = parse(PromptRequest, params)
        session = self.manager.get(request.session_id)
        return await self.run(session, await self._prepared(session, request))

    async def steer(self, params: Any) -> dict[str, Any]:
        """`_session/steering`: the message joins the running turn, or the one queued or starting
        (`injected`); with none it starts a turn of its own, as claude-agent-acp does
        (`startedNewTurn`, answered at once, the turn answered by its updates; the messages that
        follow join it), or, when `_meta.steering.idleBehavior` asks for it, is left to the client
        to send as a prompt (`promptRequired`)."""
        request = parse(SteeringRequest, params)
        session = self.manager.sessions.get(request.session_id)
        if session is None:
            raise RpcError.session_not_found(request.session_id)
        if session.closing:
            raise RpcError.session_closed(request.session_id)
        prepared = await self._prepared(session, request)
        if prepared.empty or prepared.command is not None:
            raise RpcError.invalid_params(
                "Invalid params: prompt: "
                + ("it is empty" if prepared.empty else "a command runs as a prompt (session/prompt)"),
                {"field": "prompt"},
            )
        if session.steering.put(SteeringMessage(prepared.blocks, prepared.shown)):
            return {"outcome": "injected"}
        if request.prompt_required:
            return {"outcome": "promptRequired", "reason": "noRunningTurn"}
        group = self.manager.task_group
        if group is None:  # not serving (an embedder's handler): nothing can run it detached
            raise RpcError.invalid_request("No turn is running: send it with session/prompt")
        self.manager.check_queue(session)
        group.start_soon(self._steered_turn, session, prepared, session.steering.expect())
        return {"outcome": "startedNewTurn"}

    async def _prepared(self, session: Session, request: PromptRequest) -> PreparedPrompt:
        """The prompt read for the session's model; a built-in named after Claude Code's everyday
        commands (`/agents`...) gives way to the project's command of that name."""

        async def taken(name: str) -> bool:
            return (await session.conventions.current()).find(name) is not None

        return await prepared_prompt(request, session.settings.profile, taken)

    async def _steered_turn(self, session: Session, prepared: PreparedPrompt, expected: Expected) -> None:
        """A turn a steering message started (expecting the messages sent after it): no request
        waits for its answer, so a failure is told to the editor (and logged) instead of lost."""
        try:
            await self.run(session, prepared, echo=True, expected=expected)
        except Exception as exc:  # no request answers it: it must not end the agent's task group
            message = exc.message if isinstance(exc, RpcError) else f"internal error: {exc!r}"
            log.warning("steering.turn_failed", session_id=session.id, error=message)
            try:
                engine = await self.manager.engine()
                await engine.tell_failure(session, message)
            except Exception as untold:  # logged above; telling it must not end the agent either
                log.warning("steering.failure_untold", session_id=session.id, error=repr(untold)[:300])

    async def run(
        self,
        session: Session,
        prepared: PreparedPrompt,
        *,
        echo: bool = False,
        expected: Expected | None = None,
    ) -> dict[str, Any]:
        """Run a prompt in its turn; with `echo` (no session/prompt sent it: a steering message),
        its content is shown to the editor as the user's message when the turn starts. A prompt for
        the model takes the session's steering messages from the moment it queues (`expected`)."""
        shown, command, empty = prepared.shown, prepared.command, prepared.empty
        if expected is None and not empty and command is None:
            expected = session.steering.expect()  # made as it joins the line: no await in between
        async with self.manager.turn(session, expected) as turn:
            if echo and not (turn.cancelled or session.closing):
                for update in user_chunks(shown, str(uuid.uuid4())):
                    await self._tell(session, update)
            if turn.cancelled or session.closing or empty or command is not None:
                engine = await self.manager.engine()
                if turn.cancelled or session.closing:  # cancelled or closed while it waited: never run
                    record = engine.quiet_turn(session, "cancelled", journal=False)
                elif empty:  # Enter on an empty line: nothing to ask the model
                    record = engine.quiet_turn(session, "end_turn", journal=True)
                else:
                    assert command is not None
                    name, arguments = command
                    answer = await self._fork_command(session, arguments) if name == "fork" else None
                    with turn.scope:  # session/cancel ends it (a rewind's question, say)
                        record = await engine.run_command(
                            name, session, self.manager.prices.get(session.model), arguments, answer=answer
                        )
                    if turn.scope.cancelled_caught:
                        record = engine.quiet_turn(session, "cancelled", journal=False)
                if not (turn.cancelled or session.closing):
                    session.spend.add(record.to_meta())
                    await self._tell(session, info_update(updated_at=now_iso()))
                return prompt_answer(record)
            await self._named(session, shown)
            result = await self._model_turn(session, turn, prepared)
            session.spend.add(result.record.to_meta())
            if not session.closing:  # its last activity, for the editor's list of threads
                await self._tell(session, info_update(updated_at=now_iso()))
        if result.failure is not None:
            failure = result.failure
            data = {
                "acp-agent": {
                    "kind": failure.kind,
                    "retryable": failure.retryable,
                    "turn": result.record.to_meta(),
                }
            }
            if failure.kind == "auth_required":
                self._key_refused()
                raise RpcError.auth_required(f"Authentication required: {failure}. {AUTH_HELP}", data)
            if failure.kind == "journal":
                raise RpcError.journal_error(f"The turn failed: {failure}", data)
            raise RpcError.internal_error(f"The turn failed: {failure}", data)
        return prompt_answer(result.record)

    async def _model_turn(self, session: Session, turn: RunningTurn, prepared: PreparedPrompt) -> TurnResult:
        """Run a prompt on the model in `turn`: once the session's runtime is built (within the
        turn's scope: session/cancel ends a trust question), what the turn machinery starts it
        with, driven with the turn's checkpoints around it."""
        with phase("turn machinery and model client wait"):
            engine = await self.manager.engine()  # the turn machinery, loaded off the event loop (D4)
        if (cancelled := await engine.ready(session, turn)) is not None:
            return cancelled
        started = await engine.start(
            session, prepared.blocks, prepared.slash, self.manager.prices.get(session.model)
        )
        drive = await turn_driver()
        async with engine.around_turn(session):
            return await drive(
                strategy=started.strategy,
                runner=started.runner,
                history=session.history,
                meter=started.meter,
                prompt=started.prompt,
                sink=started.runner.sink,
                scope=turn.scope,
                turn_id=started.turn_id,
                streaming=started.runner.model.streaming,
                shown=prepared.shown,
            )

    async def _fork_command(self, session: Session, argument: str) -> str:
        """`/fork [N]`: fork `session` as session/fork does (its cwd, roots and options), and say
        which session that made, or why none."""
        if self.manager.store is None:
            return "Nothing to fork from: sessions are not journaled (the agent runs with --no-journal)."
        if argument and not argument.isdigit():
            return "Usage: /fork [N]: copy this session into a new one, whole or through prompt N."
        through = int(argument) if argument else None
        await journal_reload()
        await journal_fork()
        try:
            fork = self.manager.fork(
                session.id,
                str(session.cwd),
                dict(session.overrides),
                session.capabilities,
                [str(root) for root in session.extra_roots],
                through=through,
                client=session.client,
            )
        except RpcError as exc:
            return f"Cannot fork this session: {exc.message.removeprefix('Invalid params: ')}"
        what = "this session" if through is None else f"this session through prompt {through}"
        return (
            f"Forked {what} as a new session, {fork.id}"
            + (f' ("{fork.title.text}")' if fork.title.text else "")
            + ". Open it from the editor's list of sessions (session/load); this one is unchanged."
        )

    async def _named(self, session: Session, shown: list[dict[str, Any]]) -> None:
        """The session's first prompt names it (as session/list will): tell the editor at once."""
        if session.name_from(prompt_title(shown)):
            await self._tell(session, info_update(title=session.title.text, updated_at=now_iso()))

    async def _tell(self, session: Session, update: dict[str, Any]) -> None:
        await self.manager.requester.notify("session/update", {"sessionId": session.id, "update": update})


def prompt_answer(record: TurnRecord) -> dict[str, Any]:
    """The `session/prompt` result of a turn that ended (not failed): its stop reason (the record
    already names it as ACP does: one mapping, so the two always agree), its token usage (ACP's
    unstable `usage`, from the record's own figures) and the record under `_meta`."""
    cached_read, cached_write = record.cache_read_input_tokens, record.cache_creation_input_tokens
    usage = PromptUsage(
        total_tokens=record.input_tokens + record.output_tokens + cached_read + cached_write,
        input_tokens=record.input_tokens,
        output_tokens=record.output_tokens,
        cached_read_tokens=cached_read,
        cached_write_tokens=cached_write,
    )
    return PromptResponse(
        stop_reason=record.stop_reason,  # a failed turn ("error") is answered with an error instead
        usage=usage,
        meta={"acp-agent": {"turn": record.to_meta()}},
    ).to_wire()
