"""A session's checkpoints and rewinds, as `/rewind` and `_session/rewind` reach them.

The journal room does the work (`journal/checkpoints.py` keeps what turns change,
`journal/rewind.py` plans and applies a rewind, `journal/timeline.py` says where prompt N starts);
this module ties it to a live session: its journal, its roots, its permission question, and the
refusals a client hears (-32602 for a prompt that does not exist, "cancel first" during a turn).

`/rewind N` puts each file it would restore to the turn's gate (`permissions/gate.py`) as an edit of
that file, so the rules on its path apply (an `Edit(…)` deny refuses the rewind, an ask rule asks,
in bypassPermissions too), its guard (a restored `.git/config` is "sensitive", a settings file
"governance"), and the session's mode as to any edit: acceptEdits and bypassPermissions restore
unasked, plan and dontAsk refuse, default asks (one question, with the diffs). A rewind that restores no
file (`--chat`) changes nothing the engine weighs. `_session/rewind` asks nothing: the client
asked its user.
Imported by the engine only (after the handshake, D4).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from acp_agent.errors import JournalFailed, RpcError
from acp_agent.journal.checkpoints import Checkpoints
from acp_agent.journal.rewind import (
    RewindOutcome,
    RewindPlan,
    Scope,
    apply_rewind,
    find_prompt,
    finish_interrupted,
    parse_rewind,
    plan_diffs,
    plan_rewind,
    prompt_list,
    summary,
)
from acp_agent.journal.store import SessionStore
from acp_agent.journal.timeline import PromptNotFound
from acp_agent.permissions.gate import PermissionGate
from acp_agent.permissions.question import PermissionQuestion
from acp_agent.tools.hidden import HiddenPaths
from acp_agent.turn.journal.entries import Entry, ToolCallShown

if TYPE_CHECKING:
    from acp_agent.session.state import Session
    from acp_agent.tools.shell.tasks import Task

__all__ = ["Rewinds", "RewoundSession"]

SCOPES: tuple[Scope, ...] = ("all", "chat", "files")


@dataclass(frozen=True, slots=True)
class RewoundSession:
    """A rewind planned, and what it did (`outcome` None: the user declined it); `running`: the
    session's background commands still running as the files went back (they may change them
    again: a rewind does not stop them)."""

    plan: RewindPlan
    outcome: RewindOutcome | None
    running: tuple[Task, ...] = ()
    refused: str = ""
    """Why the engine refused it (the mode, a rule), when it did."""

    def answer(self) -> dict[str, Any]:
        """`_session/rewind`'s result."""
        assert self.outcome is not None
        return {
            "promptIndex": self.plan.span.number - 1,
            "scope": self.plan.scope,
            "restored": list(self.outcome.restored),
            "conflicts": list(self.outcome.conflicts),
            "runningTasks": [task.id for task in self.running],
        }

    def said(self, cwd: Path) -> str:
        """`/rewind N`'s text for the user."""
        assert self.outcome is not None
        text = summary(self.plan, self.outcome, cwd)
        return f"{text} {_running_note(self.running)}" if self.running else text


class Rewinds:
    """The checkpoints of the sessions of one agent, and their rewinds."""

    def __init__(self, store: SessionStore | None, hidden: HiddenPaths) -> None:
        self.store = store
        self.hidden = hidden

    def checkpoints(self, session: Session, entries: list[Entry] | None = None) -> Checkpoints | None:
        """The session's checkpoints, made on first use (None without a journal: nothing to
        rewind with)."""
        services = session.services
        if services.checkpoints is None and self.store is not None and session.journal is not None:
            if entries is None and session.journal.fresh and not session.history.messages:
                entries = []  # a session/new's before its first turn: no prompt, no checkpoint yet
            elif entries is None:
                entries = self.store.read(session.id)
            services.checkpoints = Checkpoints.of_journal(
                self.store.checkpoints(session.id),
                lambda: (session.cwd, *session.extra_roots),
                session.history.note,
                entries,
                hidden=self.hidden.covered(),
            )
        return services.checkpoints

    def status(self, session: Session) -> str:
        """The /status line."""
        if self.store is None:
            return "off (no journal: --no-journal)"
        checkpoints = self.checkpoints(session)
        return checkpoints.status() if checkpoints is not None else "off"

    async def _entries(self, session: Session) -> list[Entry]:
        assert self.store is not None
        return await anyio.to_thread.run_sync(self.store.read, session.id)

    async def command(self, session: Session, arguments: str, gate: PermissionGate) -> str:
        """`/rewind [N [--chat | --files]]`: the list, or the rewind done (put to `gate` first, the
        user asked with the diffs where it says so), said as the notice's text."""
        if self.store is None or session.journal is None:
            return "/rewind needs the session journal (the agent runs with --no-journal)."
        try:
            asked = parse_rewind(arguments)
        except ValueError as exc:
            return str(exc)
        entries = await self._entries(session)
        if asked is None:
            return prompt_list(entries, session.cwd)
        try:
            done = await self.rewind(session, asked[0], asked[1], gate=gate)
        except RpcError as exc:
            return exc.message
        if done.refused:
            return f"Not rewound: {done.refused}"
        if done.outcome is None:
            return f"Not rewound: the rewind to before prompt {asked[0]} was declined."
        return done.said(session.cwd)

    async def request(self, session: Session, params: dict[str, Any]) -> dict[str, Any]:
        """`_session/rewind {sessionId, promptIndex | messageId, scope}` (no question: the client
        asked its user)."""
        scope = params.get("scope", "all")
        if scope not in SCOPES:
            raise RpcError.invalid_params(
                "Invalid params: scope must be one of all, chat, files", {"field": "scope"}
            )
        index, message_id = params.get("promptIndex"), params.get("messageId")
        if (index is None) == (message_id is None):
            raise RpcError.invalid_params(
                "Invalid params: give one of promptIndex (0 for the first prompt) or messageId",
                {"field": "promptIndex"},
            )
        if index is not None and (not isinstance(index, int) or isinstance(index, bool) or index < 0):
            raise RpcError.invalid_params(
                "Invalid params: promptIndex must be an integer ≥ 0", {"field": "promptIndex"}
            )
        if message_id is not None and not isinstance(message_id, str):
            raise RpcError.invalid_params(
                "Invalid params: messageId must be a string", {"field": "messageId"}
            )
        if self.store is None or session.journal is None:
            raise RpcError.invalid_request("This session has no journal to rewind with (--no-journal)")
        if isinstance(index, int):
            number = index + 1
        else:
            try:
                number = find_prompt(await self._entries(session), str(message_id))
            except PromptNotFound as exc:
                raise RpcError.invalid_params(f"Invalid params: {exc}", {"field": "messageId"}) from None
        return (await self.rewind(session, number, scope)).answer()

    async def rewind(
        self, session: Session, number: int, scope: Scope, *, gate: PermissionGate | None = None
    ) -> RewoundSession:
        """Rewind `session` to before prompt `number`; with `gate`, the files it restores are put
        to it first (asked, refused or allowed, `_decided`).

        Raises:
            RpcError: -32602 for a prompt the session does not have; -32010 when the journal
                refuses the entry (nothing was touched then).
        """
        checkpoints = await anyio.to_thread.run_sync(self.checkpoints, session)
        if checkpoints is not None:
            await checkpoints.close_pending()  # a turn a crash ended: its changes count too
        entries = await self._entries(session)
        try:
            plan = await plan_rewind(entries, number, scope, checkpoints, (session.cwd, *session.extra_roots))
        except PromptNotFound as exc:
            raise RpcError.invalid_params(f"Invalid params: {exc}", {"field": "promptIndex"}) from None
        running = _running(session) if plan.scope != "chat" else ()
        if gate is not None and plan.restore:
            refused = await self._decided(session, gate, plan, number, running)
            if refused is not None:
                return RewoundSession(plan, None, refused=refused)
        try:
            with anyio.CancelScope(shield=True):  # journaled, then all the files: never half of them
                outcome = await apply_rewind(
                    plan,
                    entries,
                    history=session.history,
                    journal=session.history.note,
                )
        except JournalFailed as exc:
            raise RpcError.journal_error(f"Cannot rewind: {exc}", {"sessionId": session.id}) from None
        return RewoundSession(plan, outcome, _running(session) if plan.scope != "chat" else ())

    async def _decided(
        self, session: Session, gate: PermissionGate, plan: RewindPlan, number: int, running: Sequence[Task]
    ) -> str | None:
        """Put the restore to `gate` as an edit of each of its files (their path rules, and each
        one's guard: a `.git/config` is "sensitive", a settings file "governance"); None when it may
        go ahead, else why not ("" when the user declined). A refusal of any file refuses it all."""
        diffs = await plan_diffs(plan)
        texts = {d.path: d.new_text for d in diffs}
        title = f"Rewind to before prompt {number}: restore {len(plan.restore)} file(s)"
        call_id = f"rewind_{uuid.uuid4().hex[:12]}"
        questions: list[PermissionQuestion] = []
        for change in plan.restore:
            restored = texts.get(change.path)
            raw = {"path": change.path} | ({"content": restored} if restored is not None else {})
            questions.append(  # classified only: `settled` decides them all at once
                await gate.classified(PermissionQuestion(call_id, "edit_file", title, "edit", "edit", raw))
            )
        decided = gate.settled(questions)
        if decided is not None:
            return None if decided.allowed else decided.message
        notes = [n for n in (_conflicts_note(plan, session.cwd), running and _running_note(running)) if n]
        shown = ToolCallShown(diffs=diffs, text="\n".join(notes) or None)

        async def go_ahead() -> bool:
            return await session.permissions.confirm(call_id, title, "edit", shown) == "once"

        decision = await gate.confirm(questions, go_ahead)
        return None if decision.allowed else decision.message

    async def finish(self, session: Session) -> None:
        """A rewind a crash stopped mid-restore, finished (at session/load)."""
        checkpoints = await anyio.to_thread.run_sync(self.checkpoints, session)
        if checkpoints is not None:
            await finish_interrupted(
                await self._entries(session),
                checkpoints,
                session.history.note,
                (session.cwd, *session.extra_roots),
            )


def _running(session: Session) -> tuple[Task, ...]:
    return tuple(session.tasks.running()) if session.tasks is not None else ()


def _running_note(running: Sequence[Task]) -> str:
    named = ", ".join(f"{task.id} (`{task.shown}`)" for task in running)
    return (
        f"Background commands still running: {named}. A rewind does not stop them and they may "
        "change files again; a file one changed since a turn is named above, not overwritten "
        "(/tasks lists them, stop_command stops one)."
    )


def _conflicts_note(plan: RewindPlan, cwd: Path) -> str | None:
    names = [*plan.conflicts, *plan.lost]
    if not names:
        return None
    shown = ", ".join(str(Path(n).relative_to(cwd)) if Path(n).is_relative_to(cwd) else n for n in names)
    return f"Left as they are (changed since by someone else, or no snapshot left): {shown}"
