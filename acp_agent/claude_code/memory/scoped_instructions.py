"""Memory that waits for a file to be read: path-scoped rules, and the memory files below the cwd.

Claude Code loads two kinds of memory only when the work reaches them, and so does the agent:

- a rule (`.claude/rules/**/*.md`, the user's or a project directory's) whose frontmatter has
  `paths:`, when a file matching one of its patterns is read (patterns from the directory holding
  that `.claude`; the user's from the cwd; `memory_paths.py`);
- the memory files of a directory below the cwd (`AGENTS.md`, `CLAUDE.md`, `.claude/CLAUDE.md`,
  `CLAUDE.local.md`), when a file under it is read, outermost first.

"Read" is a `read_file` or an `edit_file` call that succeeded (`ToolResult.read`). What applies is
handed to the tool batch as attachments (`turn/context/attachments.py`), which joins the
conversation after the batch's results, once. Each file is read the first time it applies, under
the same rules as the prompt's memory (`memory_files.py`: confinement, imports, excludes), at most
LATE_CAP bytes for all one read brings in, and kept for the rest of the session. Reading runs in a
worker thread bounded in time; a file refused is named in /status and the log.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

from acp_agent.claude_code.memory.memory_files import MemoryReader, MemoryText, fitted, without_frontmatter
from acp_agent.claude_code.memory.memory_paths import PathPatterns
from acp_agent.tools.files.provided import READ_SECONDS, Refusal, read_provided_files
from acp_agent.tools.hidden import HiddenPaths
from acp_agent.turn.context.attachments import Attachment

__all__ = ["AGENTS_NAME", "DIRECTORY_FILES", "LATE_CAP", "LOCAL_NAME", "ScopedInstructions", "ScopedRule"]

log = structlog.get_logger(__name__)

LOCAL_NAME = "CLAUDE.local.md"
AGENTS_NAME = "AGENTS.md"
"""Not Claude Code's file: it gets the room Claude Code's own files leave (here and in the prompt)."""
DIRECTORY_FILES = (AGENTS_NAME, "CLAUDE.md", ".claude/CLAUDE.md", LOCAL_NAME)
"""A directory's memory files, in the order they are read (its rules go before the local file)."""
LATE_CAP = 32 * 1024
"""Bytes of memory one read may bring into the conversation, all its files together."""


@dataclass(frozen=True, slots=True)
class ScopedRule:
    """A rule with `paths:`: matched from `base`, read inside `inside`, importing inside `area`."""

    path: Path
    base: Path
    patterns: PathPatterns
    inside: Path
    area: Path
    label: str = "rule"

    @property
    def about(self) -> str:
        shown = ", ".join(self.patterns.written) or "nothing (no readable pattern)"
        return f"{self.label} for files matching {shown}"

    def applies(self, real: Path) -> bool:
        """Whether the file at `real` (resolved) is one this rule is for."""
        base = Path(os.path.realpath(self.base))
        return real.is_relative_to(base) and self.patterns.matches(real.relative_to(base).as_posix())


class ScopedInstructions:
    """A session's memory that waits for a file to be read (`ReadAttachments`, `turn/context/`).

    `held` are the files already in the system prompt (never attached again); the other
    arguments are those the prompt's memory was read with.
    """

    def __init__(
        self,
        cwd: Path,
        *,
        inside: Path,
        home: Path | None,
        hidden: HiddenPaths,
        excludes: PathPatterns,
        trusts_outside: Callable[[Path], bool],
        rules: tuple[ScopedRule, ...] = (),
        held: frozenset[Path] = frozenset(),
    ) -> None:
        self.cwd = Path(os.path.realpath(cwd))
        self.inside = inside
        self.rules = rules
        self.refused: list[Refusal] = []
        """Files refused so far (named in /status)."""
        self._hidden, self._excludes, self._trusts_outside = hidden, excludes, trusts_outside
        self._home, self._held = home, held
        self._found: dict[Path, list[MemoryText]] = {}
        """What each directory or rule brought, read once for the session."""
        self._agents: set[Path] = set()
        """The AGENTS.md files (and what they import) among them: the room others leave is theirs."""
        self._lock = threading.Lock()

    async def for_reads(self, paths: Sequence[Path]) -> Sequence[Attachment]:
        """The memory that applies to `paths`, read in a worker thread within READ_SECONDS."""
        if not self.rules and not any(self._directories(p) for p in paths):
            return ()
        got = await read_provided_files(lambda: [self._lookup(paths)])
        if got is None:
            log.warning("instructions.timed_out", files=[str(p) for p in paths], seconds=READ_SECONDS)
            return ()
        return got[0]

    def _directories(self, path: Path) -> list[Path]:
        """The directories strictly below the cwd down to the one holding `path`, outermost first."""
        parent = Path(os.path.realpath(path)).parent
        if parent == self.cwd or not parent.is_relative_to(self.cwd):
            return []
        parts = parent.relative_to(self.cwd).parts
        return [self.cwd.joinpath(*parts[: i + 1]) for i in range(len(parts))]

    def _lookup(self, paths: Sequence[Path]) -> list[Attachment]:
        if not self._lock.acquire(timeout=READ_SECONDS):  # an earlier lookup hangs on the disk
            return []
        try:
            texts: dict[Path, MemoryText] = {}
            for path in paths:
                for directory in self._directories(path):
                    texts.update((t.path, t) for t in self._of_directory(directory) if t.path not in texts)
                for rule in self.rules:
                    if rule.applies(Path(os.path.realpath(path))):
                        texts.update((t.path, t) for t in self._of_rule(rule) if t.path not in texts)
        finally:
            self._lock.release()
        found = list(texts.values())
        room = sorted(range(len(found)), key=lambda i: found[i].path in self._agents)  # AGENTS.md last
        attachments = []
        for text, (kept, body) in zip(found, fitted(found, LATE_CAP, room), strict=True):
            if not kept:
                log.warning("instructions.left_out", path=str(text.path), cap=LATE_CAP)
                continue
            about = text.label
            if kept < text.size:
                about += f"; cut at the {LATE_CAP:,}-byte cap: the first {kept:,} of {text.size:,} bytes"
            attachments.append(Attachment(str(text.path), about, body))
        return attachments

    def _reader(self) -> MemoryReader:
        """A fresh reading (no loop spans two), sharing the list of refusals."""
        return MemoryReader(
            LATE_CAP,
            self._hidden,
            self._excludes,
            self._trusts_outside,
            self._home,
            seen=set(self._held),
            refused=self.refused,
        )

    def _of_directory(self, directory: Path) -> list[MemoryText]:
        if directory not in self._found:
            reader, about = self._reader(), f"instructions for the files under {directory}"
            self._found[directory] = []
            for name in DIRECTORY_FILES:
                texts = reader.read(directory / name, inside=self.inside, label=about)
                if name == AGENTS_NAME:
                    self._agents.update(text.path for text in texts)
                self._found[directory] += texts
        return self._found[directory]

    def _of_rule(self, rule: ScopedRule) -> list[MemoryText]:
        if rule.path not in self._found:
            reader = self._reader()
            first = reader.read_one(rule.path, inside=rule.inside, label=rule.about)
            if first is None:
                self._found[rule.path] = []
            else:
                body = without_frontmatter(first)[0]
                self._found[rule.path] = [body, *reader.imports_of(body, area=rule.area)]
        return self._found[rule.path]
