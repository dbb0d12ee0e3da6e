"""Project instructions for the system prompt: the AGENTS.md files and Claude Code's memory the user wrote.

Read once, when a session's runtime is built (a new, loaded or resumed session), so they stay the
same for every request of the session and keep the cached prompt prefix valid. In one stable
order, general to specific (a later file wins where they disagree):

1. the user's: `~/.claude/CLAUDE.md`, `~/.claude/rules/**/*.md`, then `AGENTS.md` and `CLAUDE.md`
   in the agent's config dir;
2. each directory from the repository root (the nearest one holding `.git`; without one, the
   user's home or the filesystem root) down to the session's cwd, root first: `AGENTS.md`,
   `CLAUDE.md`, `.claude/CLAUDE.md`, `.claude/rules/**/*.md` (by path), `CLAUDE.local.md`.

AGENTS.md comes before CLAUDE.md in a directory: it is the file every agent reads, CLAUDE.md the
one for Claude, so CLAUDE.md is the more specific. Both are read, but Claude Code reads only its
own files, so those come first for the room: AGENTS.md files are read after them (`_Reading.defer`)
and get what room they leave. A CLAUDE.md that imports `@AGENTS.md` (the bridge Claude Code
recommends) or links to it has read it already, as Claude Code would, with its own claim on the
room; it is not repeated. Each file is followed by the files it imports (`memory_files.py`).

A rule whose frontmatter has `paths:` is not in the prompt: it joins the conversation when a
matching file is read, as do the memory files of the directories below the cwd
(`scoped_instructions.py`).

A total cap keeps a huge file from filling the context: nearer directories get the room first
(within one, in the order above; the user's files last; then the AGENTS.md files, nearest first),
and a file cut or left out says so.
Every file is read under the rules of the file tools (`tools/files/provided.py`, through
`memory_files.py`): a file that breaks one is left out and named with its reason in /status and
the logs. The reading runs in a worker thread, bounded in time: a FIFO or a hung disk never
stalls the agent.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

from acp_agent.claude_code.memory.memory_files import (
    ImportTrust,
    MemoryReader,
    MemoryText,
    fitted,
    may_import_outside,
    without_frontmatter,
)
from acp_agent.claude_code.memory.memory_paths import PathPatterns, split_paths
from acp_agent.claude_code.memory.scoped_instructions import (
    AGENTS_NAME,
    DIRECTORY_FILES,
    LOCAL_NAME,
    ScopedInstructions,
    ScopedRule,
)
from acp_agent.tools.files.provided import READ_SECONDS, Refusal, read_provided_files
from acp_agent.tools.hidden import NOTHING_HIDDEN, HiddenPaths

__all__ = [
    "MAX_RULES",
    "NAMES",
    "TOTAL_CAP",
    "Instructions",
    "load_instructions",
    "read_instructions",
]

log = structlog.get_logger(__name__)

NAMES = (AGENTS_NAME, "CLAUDE.md")
"""The memory files of the agent's config dir (the user-level AGENTS.md)."""
TOTAL_CAP = 32 * 1024
"""Bytes of instructions, all files together, that reach the system prompt."""
MAX_RULES = 100
"""Rule files (`.claude/rules/**/*.md`) read per session, the user's and the project's."""
_RULE_DEPTH = 5
"""Subdirectories of a rules directory looked into."""


@dataclass(frozen=True, slots=True)
class InstructionFile:
    """One file in use: `kept` of its `size` bytes reached the prompt; `label` says what it is
    ("user-level", "rule", "imported by …"; nothing for a project's own memory file)."""

    path: Path
    size: int
    kept: int
    text: str
    label: str = ""
    cap: int = TOTAL_CAP

    @property
    def note(self) -> str:
        """How the file is named in the prompt and in /status."""
        where = f" ({self.label})" if self.label else ""
        if self.kept >= self.size:
            return f"{self.path}{where}"
        cap = f"the {self.cap:,}-byte cap on instructions"
        if not self.kept:
            return f"{self.path}{where} (left out: {cap} was reached)"
        return f"{self.path}{where} (cut at {cap}: the first {self.kept:,} of {self.size:,} bytes)"

    @property
    def listed(self) -> str:
        """Its line in /status: the note, with its size when it is whole."""
        return f"{self.note}: {self.size:,} bytes" if self.kept >= self.size else self.note


@dataclass(frozen=True, slots=True)
class Instructions:
    """The files found in prompt order (the user's first, the cwd's last), those refused, the
    imports left out for want of the folder's trust, and what loads when a file is read."""

    files: tuple[InstructionFile, ...] = ()
    refused: tuple[Refusal, ...] = ()
    untrusted_imports: tuple[tuple[Path, Path], ...] = ()
    """(importing file, imported file) of each import outside the workspace left out: what trusting
    the folder would add (issue 33's trust question lists them)."""
    on_read: ScopedInstructions | None = None

    def prompt_section(self) -> str:
        """The system prompt's part: a line naming each file, then each file's text."""
        if not self.files:
            return ""
        parts = [
            "Project instructions, from the files below (later, more specific files win "
            "where they disagree). Follow them unless the user says otherwise."
        ]
        parts.extend(f"\n--- {item.note} ---\n{item.text}".rstrip() for item in self.files)
        return "\n".join(parts)

    @property
    def notes(self) -> tuple[str, ...]:
        """How /status names the files: those in use, then each refused one with its reason."""
        return tuple(f.note for f in self.files) + tuple(
            f"{r.path} (refused: {r.reason})" for r in self.refused
        )

    def status(self, attached: Sequence[str] = ()) -> str:
        """/status's lines: the files in the prompt in order with their sizes, the refused ones,
        what loads when a file is read, and what the conversation holds of it (`attached`)."""
        listed = [f.listed for f in self.files]
        listed += [f"{r.path} (refused: {r.reason})" for r in self.refused]
        text = "".join(f"\n- {line}" for line in listed) or " none (no AGENTS.md or CLAUDE.md found)"
        scoped = self.on_read
        if scoped is not None and scoped.rules:
            text += "\nLoaded when a matching file is read:" + "".join(
                f"\n- {rule.path} ({rule.about})" for rule in scoped.rules
            )
        if scoped is not None and scoped.refused:
            text += "".join(f"\n- {r.path} (refused: {r.reason})" for r in scoped.refused)
        if attached:
            text += "\nLoaded on read, in the conversation now:" + "".join(f"\n- {a}" for a in attached)
        return text


def _directories(cwd: Path, home: Path | None) -> tuple[list[Path], Path | None]:
    """cwd and its parents up to the repository root (or home, or /), nearest first, and the
    repository root when there is one."""
    found = []
    for directory in (cwd, *cwd.parents):
        found.append(directory)
        if (directory / ".git").exists():
            return found, directory
        if directory == home:
            break
    return found, None


def _rule_files(root: Path, budget: int) -> list[Path]:
    """The `.md` files under a rules directory (links followed, each directory once), by path, at
    most `budget` of them."""
    found: list[Path] = []
    visited: set[tuple[int, int]] = set()
    for top, dirs, files in os.walk(root, followlinks=True):
        try:
            info = os.stat(top)
        except OSError:
            dirs[:] = []
            continue
        depth = len(Path(top).relative_to(root).parts)
        if (info.st_dev, info.st_ino) in visited:  # a link back up: a cycle
            dirs[:] = []
            continue
        visited.add((info.st_dev, info.st_ino))
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if depth < _RULE_DEPTH else []
        found += [Path(top) / f for f in sorted(files) if f.endswith(".md") and not f.startswith(".")]
        if len(found) >= budget:
            break
    return found


class _Reading:
    """One session's reading: the files in prompt order, each with its claim on the room (lower
    first), and the rules that wait for a matching file."""

    def __init__(self, reader: MemoryReader) -> None:
        self.reader = reader
        self.found: list[tuple[int, MemoryText]] = []
        self.scoped: list[ScopedRule] = []
        self.rules = 0
        self.deferred: list[tuple[int, int, Path, Path, str]] = []
        """AGENTS.md files to read last: (their place in `found`, rank, path, inside, label)."""

    def add(self, rank: int, path: Path, *, inside: Path, label: str = "", area: Path | None = None) -> None:
        self.found += [(rank, text) for text in self.reader.read(path, inside=inside, label=label, area=area)]

    def defer(self, rank: int, path: Path, *, inside: Path, label: str = "") -> None:
        """An AGENTS.md: placed here in the prompt, read once every other file is (`read_deferred`)."""
        self.deferred.append((len(self.found), rank, path, inside, label))

    def read_deferred(self) -> None:
        """Read the AGENTS.md files, in order, each into its place: one a CLAUDE.md imported was
        read with it, and is not read again."""
        placed = [
            (slot, [(rank, text) for text in self.reader.read(path, inside=inside, label=label)])
            for slot, rank, path, inside, label in self.deferred
        ]
        for slot, texts in reversed(placed):  # the later places first: the earlier stay where they are
            self.found[slot:slot] = texts

    def add_rules(self, rank: int, root: Path, *, base: Path, inside: Path, area: Path, label: str) -> None:
        """The rules under `root`: those without `paths:` in the prompt, the others kept for later."""
        if not root.is_dir():
            return
        for path in _rule_files(root, MAX_RULES - self.rules + 1):
            if self.rules >= MAX_RULES:
                self.reader.refuse(path, f"not read: the cap of {MAX_RULES} rule files was reached")
                return
            self.rules += 1
            first = self.reader.read_one(path, inside=inside, label=label)
            if first is None:
                continue
            body, fields, problem = without_frontmatter(first)
            if problem:
                self.reader.refuse(path, f"skipped: {problem}")
            elif "paths" in fields:
                self.reader.seen.discard(Path(os.path.realpath(path)))  # read when it applies
                patterns = split_paths(fields["paths"])
                self.scoped.append(ScopedRule(path, base, PathPatterns.of(patterns), inside, area, label))
            else:
                self.found += [(rank, body)] + [(rank, t) for t in self.reader.imports_of(body, area=area)]


def _sources(
    reading: _Reading,
    directories: list[Path],
    repository: Path | None,
    home: Path | None,
    config_dir: Path | None,
) -> None:
    """Read every file of the session's memory into `reading`, in prompt order."""
    user = len(directories)  # the user's files get the room last of Claude Code's
    agents = user + 1  # then the AGENTS.md files, nearest first (the config dir's last)
    if home is not None:
        claude = home / ".claude"
        reading.add(user, claude / "CLAUDE.md", inside=home, label="user-level", area=claude)
        reading.add_rules(
            user, claude / "rules", base=directories[0], inside=home, area=claude, label="user-level rule"
        )
    if config_dir is not None:
        reading.defer(agents + user, config_dir / AGENTS_NAME, inside=config_dir, label="user-level")
        reading.add(user, config_dir / "CLAUDE.md", inside=config_dir, label="user-level")
    for rank in range(len(directories) - 1, -1, -1):  # the root first, the cwd last
        directory = directories[rank]
        inside = repository or directory
        for path, rules in _project_files(directory, home):
            if rules:
                reading.add_rules(rank, path, base=directory, inside=inside, area=inside, label="rule")
            elif path.name == AGENTS_NAME:
                reading.defer(agents + rank, path, inside=inside)
            else:
                reading.add(rank, path, inside=inside)
    reading.read_deferred()


def _project_files(directory: Path, home: Path | None) -> Iterator[tuple[Path, bool]]:
    """(path, whether it is a rules directory) of a directory's memory, in prompt order: its
    rules come before CLAUDE.local.md. The home directory's `.claude` is the user's, read as such."""
    own = directory != home
    for name in DIRECTORY_FILES:
        if name == LOCAL_NAME and own:
            yield directory / ".claude" / "rules", True
        if own or not name.startswith(".claude/"):
            yield directory / name, False


def read_instructions(
    cwd: Path,
    *,
    home: Path | None,
    config_dir: Path | None,
    cap: int = TOTAL_CAP,
    hidden: HiddenPaths = NOTHING_HIDDEN,
    excludes: Sequence[str] = (),
    trust: ImportTrust = may_import_outside,
) -> Instructions:
    """Read the memory of a session rooted at `cwd`, within `cap` bytes in all.

    `hidden` are the agent's own paths (never read); `excludes` are `claudeMdExcludes`, globs on
    absolute paths; `trust(folder, target)` says whether an import outside the workspace may be
    read. Blocking: `load_instructions` runs it in a worker thread."""
    directories, repository = _directories(cwd, home)
    folder = repository or cwd
    patterns = PathPatterns.of(excludes)
    reader = MemoryReader(
        cap, hidden, patterns, trusts_outside=lambda target: trust(folder, target), home=home
    )
    reading = _Reading(reader)
    _sources(reading, directories, repository, home, config_dir)
    texts = [text for _, text in reading.found]
    ranks = [rank for rank, _ in reading.found]
    kept = fitted(texts, cap, sorted(range(len(texts)), key=lambda i: (ranks[i], i)))
    files = tuple(
        InstructionFile(t.path, t.size, k, text, t.label, cap)
        for t, (k, text) in zip(texts, kept, strict=True)
    )
    scoped = ScopedInstructions(
        cwd,
        inside=folder,
        home=home,
        hidden=hidden,
        excludes=patterns,
        trusts_outside=reader.trusts_outside,
        rules=tuple(reading.scoped),
        held=frozenset(reader.seen),
    )
    return Instructions(files, tuple(reader.refused), tuple(reader.untrusted), scoped)


async def load_instructions(
    cwd: Path,
    *,
    home: Path | None,
    config_dir: Path | None,
    hidden: HiddenPaths = NOTHING_HIDDEN,
    excludes: Sequence[str] = (),
    trust: ImportTrust = may_import_outside,
) -> Instructions:
    """`read_instructions` in a worker thread; past READ_SECONDS, none (and that is logged)."""
    found = await read_provided_files(
        lambda: [
            read_instructions(
                cwd, home=home, config_dir=config_dir, hidden=hidden, excludes=excludes, trust=trust
            )
        ]
    )
    if found is None:
        log.warning("instructions.timed_out", cwd=str(cwd), seconds=READ_SECONDS)
        return Instructions(refused=(Refusal(cwd, f"reading instructions took over {READ_SECONDS:g} s"),))
    return found[0]
