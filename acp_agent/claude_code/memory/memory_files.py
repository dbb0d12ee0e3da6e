"""A memory file and the files it imports (`@path`), read as Claude Code reads them, under the tools' rules.

`@path` in a memory file imports that file: relative to the importing file, from the home
directory with `~/`, or absolute. An import is a word: `@` at the start of a line or after a space,
up to the next space (`\\ ` keeps a space in a name); a `#fragment` and closing punctuation are
dropped. Inside a code span or a fenced block it is literal text. Each imported file follows the
file that imports it, as a file of its own (depth first; the `@path` stays as written), up to
MAX_HOPS hops from the memory file. A file already read is not read again: the bridge Claude Code
recommends (a `CLAUDE.md` holding `@AGENTS.md` beside an AGENTS.md that is read anyway) costs
nothing, and a loop is named and broken.

Every file is read by `tools/files/provided.py` (inside the directory it was found from, regular,
owned by the user or root, not swappable, at most the bytes asked for) and is never one of the
agent's hidden paths, a binary file (a NUL byte in its first 8 KiB) or one `claudeMdExcludes`
names. An import must resolve inside the area its memory file was read from (the repository;
`~/.claude` for the user's own files); one that leads outside is read only when the folder is
trusted (`may_import_outside`, the one place issue 33's trust store answers). A file left out is
named with its reason, for /status and the log (`instructions.refused`).

Blocking: the callers run it in a worker thread.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from acp_agent.claude_code.memory.memory_paths import PathPatterns
from acp_agent.claude_code.settings.frontmatter import Frontmatter, split_frontmatter
from acp_agent.tools.files.provided import Refusal, read_provided_file
from acp_agent.tools.hidden import NOTHING_HIDDEN, HiddenPaths

__all__ = [
    "MAX_HOPS",
    "MAX_IMPORTS",
    "ImportTrust",
    "MemoryReader",
    "MemoryText",
    "fitted",
    "import_targets",
    "may_import_outside",
    "without_frontmatter",
]

log = structlog.get_logger(__name__)

MAX_HOPS = 4
"""Imports nest this deep from a memory file (Claude Code's current docs; older ones said five)."""
MAX_IMPORTS = 100
"""Imports followed in one reading (a session's start, or one file read): a file of a thousand
`@` words costs no more."""
SNIFF_BYTES = 8192

ImportTrust = Callable[[Path, Path], bool]
"""(the project's folder, a file outside it) → whether a memory file may import it."""


def may_import_outside(folder: Path, target: Path) -> bool:
    """Whether the memory files of the project at `folder` may import `target`, which lies outside
    it (and outside `~/.claude`): only once the user trusts the folder, which issue 33's trust
    store decides. Until that store answers here, no folder is trusted: such an import is left out,
    named in /status and the log, and listed in `Instructions.untrusted_imports`."""
    return False


@dataclass(frozen=True, slots=True)
class MemoryText:
    """A memory file read: its first bytes (`data`) of `size`, and how it is named beside its path
    ("user-level", "rule", "imported by …"; "" for a project's own file)."""

    path: Path
    size: int
    data: bytes
    label: str = ""


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_WORD = re.compile(r"(?:^|(?<=\s))@((?:\\ |\S)+)")
_TRAILING = ".,;:!?)]}'\""
_START = re.compile(r"^(?:\./|\.\./|~/|/.|[A-Za-z0-9._-])")


def _without_code_spans(line: str) -> str:
    """`line` with each code span (a run of n backquotes to the next run of n) blanked."""
    out, index = [], 0
    while index < len(line):
        if line[index] != "`":
            out.append(line[index])
            index += 1
            continue
        run = len(line) - len(line[index:].lstrip("`"))
        ticks = "`" * run
        close = re.search(rf"(?<!`){ticks}(?!`)", line[index + run :])
        if close is None:  # no closing run: the backquotes are literal
            out.append(ticks)
            index += run
            continue
        out.append(" ")
        index += run + close.end()
    return "".join(out)


def _cleaned(word: str) -> str:
    """The path an `@word` names, or "" when it names none (`@@x`, `@)`)."""
    path = word.replace("\\ ", " ").split("#", 1)[0].rstrip(_TRAILING)
    return path if path and _START.match(path) else ""


def import_targets(text: str) -> list[str]:
    """The paths `text` imports, in order, once each, outside code spans and fenced blocks."""
    found: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        opening = _FENCE.match(line)
        if fence is not None:
            closing = opening and opening[1][0] == fence[0] and len(opening[1]) >= len(fence)
            if closing and opening and not line.strip()[len(opening[1]) :].strip():
                fence = None
            continue
        if opening:
            fence = opening[1]
            continue
        if "@" in line:
            found.extend(p for word in _WORD.findall(_without_code_spans(line)) if (p := _cleaned(word)))
    return list(dict.fromkeys(found))


def _within(real: Path, area: Path) -> bool:
    return real == area or real.is_relative_to(area)


@dataclass(slots=True)
class MemoryReader:
    """One reading of memory files (a session's start, or the files one read brings in): what was
    read, refused and left outside, so that no file is read twice.

    `trusts_outside(target)` says whether an import outside its area may be read (the folder's
    trust); `home` is where `@~/` leads.
    """

    max_bytes: int
    hidden: HiddenPaths = NOTHING_HIDDEN
    excludes: PathPatterns = field(default_factory=PathPatterns)
    trusts_outside: Callable[[Path], bool] = lambda target: False
    home: Path | None = None
    seen: set[Path] = field(default_factory=set)
    """Real paths of the files read (a link and its target are one file)."""
    refused: list[Refusal] = field(default_factory=list)
    untrusted: list[tuple[Path, Path]] = field(default_factory=list)
    """(importing file, imported file) of each import left out for want of the folder's trust."""
    imports: int = 0

    def read(
        self, path: Path, *, inside: Path, label: str = "", area: Path | None = None
    ) -> list[MemoryText]:
        """`path` and what it imports, depth first; nothing when it is missing, refused, excluded
        or read already. Its imports must stay inside `area` (default: `inside`)."""
        first = self.read_one(path, inside=inside, label=label)
        return [] if first is None else [first, *self.imports_of(first, area=area or inside)]

    def read_one(self, path: Path, *, inside: Path, label: str = "") -> MemoryText | None:
        """`path` alone (its imports are `imports_of`'s), or None as for `read`."""
        return self._one(path, inside, label)

    def imports_of(self, text: MemoryText, *, area: Path) -> list[MemoryText]:
        """The files `text` imports, depth first, each inside `area` or trusted."""
        chain = (Path(os.path.realpath(text.path)),)
        return list(self._imports(text, Path(os.path.realpath(area)), chain))

    def refuse(self, path: Path, reason: str) -> None:
        log.warning("instructions.refused", path=str(path), reason=reason)
        self.refused.append(Refusal(path, reason))

    def _one(
        self, path: Path, inside: Path, label: str, *, imported: bool = False, outside: bool = False
    ) -> MemoryText | None:
        """One file; a hidden path that holds `inside` is not hidden from it (the user-level
        AGENTS.md in the agent's config dir), unless the file lies `outside` its area."""
        real = Path(os.path.realpath(path))
        if self.excludes and (self.excludes.matches_absolute(path) or self.excludes.matches_absolute(real)):
            if os.path.lexists(path):
                self.refuse(path, "excluded by claudeMdExcludes")
            return None
        if real in self.seen:
            return None
        hidden = self.hidden if outside else self.hidden.around(inside)
        got = read_provided_file(path, inside=inside, max_bytes=self.max_bytes, hidden=hidden)
        if got is None:
            if imported:
                self.refuse(path, f"{label}: no such file")
            return None
        if isinstance(got, Refusal):
            self.refuse(path, got.reason if not imported else f"{label}: {got.reason}")
            return None
        self.seen.add(real)
        if b"\0" in got.data[:SNIFF_BYTES]:
            self.refuse(path, "it is a binary file (it holds a NUL byte)")
            return None
        return MemoryText(path, got.size, got.data, label)

    def _imports(self, parent: MemoryText, area: Path, chain: tuple[Path, ...]) -> Iterable[MemoryText]:
        targets = import_targets(parent.data.decode("utf-8", "replace"))
        label = f"imported by {parent.path}"
        for written in targets:
            target = self._target(written, parent.path)
            if target is None:
                continue
            if len(chain) > MAX_HOPS:
                self.refuse(target, f"{label}: more than {MAX_HOPS} hops of imports from its memory file")
                continue
            if self.imports >= MAX_IMPORTS:
                self.refuse(target, f"{label}: past the {MAX_IMPORTS} imports followed in one reading")
                return
            self.imports += 1
            real = Path(os.path.realpath(target))
            if real in chain:
                self.refuse(target, f"{label}: an import loop (it imports a file on its own import chain)")
                continue
            if real in self.seen:
                continue  # read already, above: once is enough
            outside = not _within(real, area)
            if outside and not self.trusts_outside(real):
                self.untrusted.append((parent.path, target))
                self.refuse(target, f"{label}: outside {area}, which needs the folder's trust")
                continue
            inside = real.parent if outside else area
            child = self._one(target, inside, label, imported=True, outside=outside)
            if child is not None:
                yield child
                yield from self._imports(child, area, (*chain, real))

    def _target(self, written: str, importer: Path) -> Path | None:
        """The absolute path `written` names from `importer` (`..` taken by name)."""
        if written.startswith("~/"):
            if self.home is None:
                return None
            joined = self.home / written[2:]
        else:
            joined = importer.parent / written  # an absolute `written` replaces the base
        return Path(os.path.normpath(joined))


def without_frontmatter(text: MemoryText) -> tuple[MemoryText, Frontmatter, str | None]:
    """A rule file's text without its `---` block, the block's fields, and what is wrong with it."""
    fields, body, problem = split_frontmatter(text.data.decode("utf-8", "replace"))
    data = body.encode("utf-8")
    size = max(text.size - (len(text.data) - len(data)), len(data))
    return MemoryText(text.path, size, data, text.label), fields, problem


def fitted(
    texts: Sequence[MemoryText], cap: int, order: Iterable[int] | None = None
) -> list[tuple[int, str]]:
    """(bytes kept, text) of each of `texts` within `cap` bytes in all, the room given in `order`
    (positions; default: as listed). Once a file is cut, the cap is reached: the rest get nothing.
    A cut falls on a character boundary."""
    room = cap
    kept: dict[int, tuple[int, str]] = {}
    for index in order if order is not None else range(len(texts)):
        text = texts[index]
        if room >= text.size and len(text.data) >= text.size:
            kept[index] = (text.size, text.data.decode("utf-8", "replace"))
        else:
            part = text.data[:room].decode("utf-8", "replace").rstrip("\ufffd")
            kept[index] = (len(part.encode("utf-8")), part)
        room = room - kept[index][0] if kept[index][0] == text.size else 0
    return [kept[index] for index in range(len(texts))]
