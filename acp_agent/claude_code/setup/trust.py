"""Trust for what a repository widens: asked once, remembered per folder and per content.

A repository is not the user. What its files would let run (`Widening`: the project's allow
rules, `defaultMode`, `additionalDirectories`, `env`, hooks, MCP servers, `@imports` that reach
outside the workspace: `widenings.py`) takes effect only once the user trusts that folder; deny
and ask rules apply at once, with no trust needed: they only restrict.

`ProjectTrust` is one session's view: the items it found (the settings' own, and what the hooks,
MCP and memory loaders add with `expect` before the first prompt), and the answer. The question is
asked once, at the first prompt, before the first request (`session/editor/trust_question.py`);
the answer is kept in the state dir (`TrustStore`, a file the tools never show), by folder and by
a digest of the items (with the content of the files their hooks and servers run, and where
`.claude` resolves), so a changed hook or hook script or a new allow rule asks again, and an
unchanged repository is never asked twice.

Trust is settled here, and everything else asks this module, one predicate per question (no
other module reads the answer itself):
- a loader calls `expect(item)` for what its content would enable, and later `allows(item)` to
  know whether it may use it;
- a settings file's widening keys (its mode, directories, env, hooks, allow rules) are read once
  `allows_file(path)`: every item registered from that file (`Widening.file`) is allowed, so one
  expected after the answer keeps the file out until an answer covers it;
- `settle(ask)` takes a covering answer (this session's or a remembered one) or asks `ask` the
  question (`session/editor/trust_question.py`); `settled` says no question is pending, and
  `declined` that the answer was no (`/hooks`, `/permissions`, the MCP servers that waited).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import structlog

from acp_agent.claude_code.settings import json_text
from acp_agent.errors import ToolError
from acp_agent.tools.files.localfs import LocalFileSystem

__all__ = ["ProjectTrust", "TrustAnswer", "TrustQuestion", "TrustStore", "Widening"]

log = structlog.get_logger(__name__)

TrustAnswer = Literal["trusted", "declined"]
TrustQuestion = Callable[["ProjectTrust"], Awaitable[tuple[TrustAnswer, bool]]]
"""Asks the user about `ProjectTrust.items`: the answer, and whether to remember it."""
KEPT_PER_FOLDER = 8
"""Answers kept per folder (the newest): an old digest is asked again if it ever comes back."""
MAX_STORE_BYTES = 4 << 20


@dataclass(frozen=True, slots=True)
class Widening:
    """One thing a project's files would let run once trusted: `kind` (allow rule, defaultMode,
    additional directory, env, hook, MCP server, import…), the file it is in, what it is (`text`,
    shown whole; `details`, more lines shown under it: a server's env and headers, the variables
    it reads), and `content`: what the answer is remembered by besides the text (the entry as
    written, and the content of the files it runs: `widenings.py`)."""

    kind: str
    source: str
    text: str
    content: str = ""
    details: tuple[str, ...] = ()
    file: Path | None = field(default=None, compare=False)
    """The settings file that registered it (`ProjectTrust.allows_file`); None for an item of no
    settings file (a `.mcp.json` server, a memory import). Not part of what is remembered."""

    def line(self) -> str:
        return f"{self.kind}: {self.text} ({self.source})"

    def whole(self) -> str:
        """The item as the question shows it: its line, then its details, one a line, nothing cut."""
        return "\n".join([self.line(), *(f"  {d}" for d in self.details)])


class TrustStore:
    """The remembered answers, `trust.json` in the state dir: folder → digest → answer."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def answer(self, folder: Path, digest: str) -> TrustAnswer | None:
        entry = self._read().get(str(folder), {}).get(digest)
        answer = entry.get("answer") if isinstance(entry, dict) else None
        return answer if answer in ("trusted", "declined") else None

    async def remember(self, folder: Path, digest: str, answer: TrustAnswer) -> None:
        """Keep `answer` (written whole, by a rename); a failure to write is logged (the answer
        holds for this session)."""
        folders = self._read()
        answers = dict(folders.get(str(folder), {}))
        answers.pop(digest, None)
        answers[digest] = {"answer": answer, "at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
        folders[str(folder)] = dict(list(answers.items())[-KEPT_PER_FOLDER:])
        text = json.dumps({"version": 1, "folders": folders}, indent=1) + "\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            await LocalFileSystem().write_text(self.path, text)
        except (OSError, ToolError) as exc:
            log.warning("claude.trust_not_saved", path=str(self.path), error=str(exc))

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            with open(self.path, "rb") as f:
                raw = f.read(MAX_STORE_BYTES + 1)
            data = json_text.loads(raw) if len(raw) <= MAX_STORE_BYTES else None
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("claude.trust_unreadable", path=str(self.path), error=str(exc)[:200])
            return {}
        folders = data.get("folders") if isinstance(data, dict) else None
        if not isinstance(folders, dict):
            return {}
        return {k: v for k, v in folders.items() if isinstance(k, str) and isinstance(v, dict)}


@dataclass(slots=True)
class ProjectTrust:
    """One session's trust in its project folder (the repository root, else the cwd)."""

    folder: Path
    store: TrustStore | None = None
    items: list[Widening] = field(default_factory=list)
    place: str = ""
    """Where the project's `.claude` resolves (a link swapped in asks again): part of the digest."""
    answered: tuple[Widening, ...] | None = None
    """The items the answer covered (None: no answer yet)."""
    _state: Literal["unasked", "trusted", "declined"] = field(default="unasked", init=False)
    remembered: bool = False
    """The answer came from, or went to, the store (not for this session only)."""

    def expect(self, item: Widening) -> None:
        """A loader's: `item` is what its content would enable once the folder is trusted (before
        the first prompt, so the question lists it; one expected later waits for the next answer)."""
        if item not in self.items:
            self.items.append(item)

    @property
    def needed(self) -> bool:
        """Something waits for trust."""
        return bool(self.items)

    def allows(self, item: Widening) -> bool:
        """A loader's: whether `item` may take effect now (the answer that covered it was yes)."""
        return self._state == "trusted" and self.answered is not None and item in self.answered

    def allows_file(self, file: Path) -> bool:
        """Whether what the settings file at `file` widens takes effect: nothing here needs trust,
        or the folder was trusted and every item registered from `file` is allowed (an item of it
        expected after the answer keeps the whole file out until an answer covers it)."""
        if not self.items:
            return True
        return self._state == "trusted" and all(self.allows(i) for i in self.items if i.file == file)

    @property
    def settled(self) -> bool:
        """No question is pending: nothing needs trust, or an answer covers every item."""
        return not self.items or (self.answered is not None and set(self.items) <= set(self.answered))

    @property
    def declined(self) -> bool:
        """The answer was no (what waits is then "declined", not "waiting for trust")."""
        return self._state == "declined"

    def key(self) -> Hashable:
        """Changes whenever what this allows may have: an answer, or an item expected."""
        return self._state, len(self.items), len(self.answered or ())

    def digest(self) -> str:
        """What the answer is remembered by: the items, in a stable order."""
        lines = sorted(f"{i.kind}\0{i.source}\0{i.text}\0{i.content}" for i in self.items)
        text = "\n".join([f"place\0{self.place}", *lines]) if self.place else "\n".join(lines)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def recall(self) -> bool:
        """Whether an answer covers the items as they are now: this session's (given before more
        items were expected), or a remembered one, which is then taken."""
        if self.settled:
            return True
        answer = self.store.answer(self.folder, self.digest()) if self.store is not None else None
        if answer is not None:
            self._state, self.answered, self.remembered = answer, tuple(self.items), True
        return answer is not None

    async def settle(self, ask: TrustQuestion) -> bool:
        """Before the session's first request: take an answer that covers the items as they are
        now, else `ask` the question and record its answer. True when the folder was trusted by a
        new answer (what it enables is then applied by the caller: `trust_settling.py`)."""
        if self.recall():
            return False
        answer, remember = await ask(self)
        await self.answer(answer, remember=remember)
        return answer == "trusted"

    async def answer(self, answer: TrustAnswer, *, remember: bool) -> None:
        """The user's answer to the question, kept in the store when `remember`."""
        self._state, self.answered, self.remembered = answer, tuple(self.items), remember
        if remember and self.store is not None:
            await self.store.remember(self.folder, self.digest(), answer)

    def left_off(self) -> tuple[Widening, ...]:
        """What waits for trust (or was declined), for `/status` and `/permissions`."""
        return tuple(i for i in self.items if not self.allows(i))

    def describe(self) -> str:
        """One line for /status."""
        if not self.items:
            return "nothing in this project needs trust"
        how = {
            "trusted": "trusted" + (" (remembered)" if self.remembered else " for this session"),
            "declined": "not trusted" + (" (remembered)" if self.remembered else ""),
            "unasked": "not asked yet (asked at the first prompt)",
        }[self._state]
        left = self.left_off()
        text = f"{self.folder}: {how}"
        return text + "".join(f"\n  - left off: {i.line()}" for i in left) if left else text
