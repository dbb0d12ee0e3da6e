"""Output styles, as Claude Code has them: how the agent talks, chosen per session.

Where (the first of a name wins; a file shadowed is noted):
- the built-ins: `Default` (the agent's own prompt, nothing added), `Explanatory` and `Learning`
  (written here, a few lines each: not Claude Code's own text);
- the project: `.claude/output-styles/*.md` in the cwd and each directory above it up to the
  repository root (the nearest first);
- the user's `~/.claude/output-styles/*.md`.

A file's name is the style's, unless its frontmatter sets `name`; `description` is what the
editor's picker shows; `keep-coding-instructions: true` keeps the agent's coding rules in the
system prompt (by default a custom style leaves them out, as in Claude Code; the safety rules
stay). Its body is appended at the very end of the system prompt, which is built once per
session: a cached prefix. Styles apply to the main conversation only, never to subagents.

Files are read under the rules of the file tools (`tools/files/provided.py`: inside the
repository, or the home directory; no link out, no FIFO), at most MAX_STYLE_FILES of them and
FILE_BYTES each; a bad one is skipped with a warning (the log and `/status`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import structlog

from acp_agent.claude_code.memory.instructions import _directories
from acp_agent.claude_code.settings.frontmatter import split_frontmatter
from acp_agent.claude_code.setup.setup import ClaudeSetup
from acp_agent.tools.files.provided import ProvidedText, Refusal, read_provided_file
from acp_agent.tools.hidden import NOTHING_HIDDEN, HiddenPaths, PathDenials
from acp_agent.tools.printable import one_line

__all__ = [
    "BUILT_IN_STYLES",
    "DEFAULT_STYLE",
    "OutputStyle",
    "OutputStyles",
    "chosen_style",
    "read_output_styles",
]

log = structlog.get_logger(__name__)

FILE_BYTES = 64 * 1024
MAX_STYLE_FILES = 50
DEFAULT_STYLE = "Default"


@dataclass(frozen=True, slots=True)
class OutputStyle:
    """One style: its `body` is appended to the system prompt; without `keep_coding_instructions`
    the agent's coding rules are left out."""

    name: str
    description: str
    body: str = ""
    keep_coding_instructions: bool = True
    source: str = "built-in"
    path: Path | None = None

    def prompt_section(self) -> str:
        """What the system prompt ends with ("" for Default)."""
        if not self.body.strip():
            return ""
        return f"Output style: {self.name}\n{self.body.strip()}"


BUILT_IN_STYLES = (
    OutputStyle(DEFAULT_STYLE, "The agent's own prompt: complete the task, concisely."),
    OutputStyle(
        "Explanatory",
        "Explains the choices it makes while it works (short insights between the steps).",
        "Besides doing the task, help the user understand the code base and your choices. Before "
        "and after a significant step, add a short insight (two or three lines, headed "
        '"Insight:") about why you chose this approach, a pattern in this code base, or a '
        "trade-off you made. Keep the insights specific to this code, never general lectures, "
        "and keep doing the task itself as you would without them.",
    ),
    OutputStyle(
        "Learning",
        "Works with the user as a teacher would: leaves small, meaningful pieces for them to write.",
        "The user wants to learn by doing. Do the routine parts yourself, but where a piece of "
        "the task holds a real decision (a small function, a condition, a test case; 2 to 10 "
        "lines), leave it to the user: write the surrounding code, put a `TODO(human)` marker "
        "where their piece goes, and end your turn by saying exactly what to write there and "
        "what to consider. At most one such piece per turn. Add short insights about the code "
        "base's patterns as you go, as the Explanatory style does.",
    ),
)


@dataclass(frozen=True, slots=True)
class OutputStyles:
    """The styles a session may use (built-ins first, then the files' by name), and what was
    left out, with why."""

    styles: tuple[OutputStyle, ...] = BUILT_IN_STYLES
    skipped: tuple[str, ...] = ()

    def find(self, name: str) -> OutputStyle | None:
        """The style of that name (the exact name first, else one that differs only in case)."""
        exact = next((s for s in self.styles if s.name == name), None)
        return exact or next((s for s in self.styles if s.name.casefold() == name.casefold()), None)

    @property
    def default(self) -> OutputStyle:
        return self.styles[0]

    def status(self, current: OutputStyle) -> str:
        """The /status lines: the style in use, the others, and what was left out."""
        where = f" ({current.source}: {current.path})" if current.path else f" ({current.source})"
        others = ", ".join(s.name for s in self.styles if s is not current)
        lines = [f"Output style: {current.name}{where}; also offered: {others or 'none'}"]
        lines += [f"  - not loaded: {line}" for line in self.skipped]
        return "\n".join(lines)


@dataclass(slots=True)
class _Found:
    denied: HiddenPaths
    styles: dict[str, OutputStyle] = field(default_factory=lambda: {s.name: s for s in BUILT_IN_STYLES})
    skipped: list[str] = field(default_factory=list)
    files: int = 0

    def skip(self, path: Path, note: str) -> None:
        log.warning("output_styles.skipped", path=str(path), reason=note)
        self.skipped.append(f"{path} ({note})")


def read_output_styles(cwd: Path, *, home: Path | None, denials: PathDenials | None = None) -> OutputStyles:
    """The styles of a session at `cwd` (blocking: a few small files), none of those the settings'
    Read `denials` name (a style is read for the model)."""
    found = _Found(denied=NOTHING_HIDDEN.with_denials(denials))
    directories, repository = _directories(cwd, home)
    for directory in directories:
        if directory != home:
            inside = repository or directory
            _read_directory(found, directory / ".claude" / "output-styles", "project", inside)
    if home is not None:
        _read_directory(found, home / ".claude" / "output-styles", "user", home)
    return OutputStyles(tuple(found.styles.values()), tuple(found.skipped))


def _read_directory(found: _Found, directory: Path, source: str, inside: Path) -> None:
    try:
        names = sorted(p.name for p in directory.iterdir() if p.name.endswith(".md"))
    except OSError:
        return
    for name in names:
        path = directory / name
        if found.files >= MAX_STYLE_FILES:
            found.skip(path, f"not read: the cap of {MAX_STYLE_FILES} style files was reached")
            return
        found.files += 1
        got = read_provided_file(path, inside=inside, max_bytes=FILE_BYTES + 1, hidden=found.denied)
        if got is None:
            continue
        if isinstance(got, Refusal):
            found.skip(path, f"refused: {got.reason}")
            continue
        assert isinstance(got, ProvidedText)
        if got.size > FILE_BYTES:
            found.skip(path, f"skipped: larger than the {FILE_BYTES // 1024} KiB cap")
            continue
        fields, body, problem = split_frontmatter(got.data.decode("utf-8", "replace"))
        if problem:
            found.skip(path, f"skipped: {problem}")
            continue
        style_name = one_line(fields.get("name") or path.stem)
        keep = fields.get("keep-coding-instructions", "false").strip().lower() == "true"
        if not style_name:
            found.skip(path, "skipped: no name")
        elif style_name in found.styles:
            kept = found.styles[style_name]
            found.skip(path, f"shadowed by {kept.path or 'the built-in ' + kept.name}")
        elif not body.strip():
            found.skip(path, "skipped: the style holds no text")
        else:
            description = one_line(fields.get("description", "")) or f"The {style_name} style ({source})."
            found.styles[style_name] = OutputStyle(style_name, description, body, keep, source, path)


def chosen_style(setup: ClaudeSetup, styles: OutputStyles) -> tuple[OutputStyles, OutputStyle | None]:
    """The style the settings' `outputStyle` names (the highest file's), or None (Default); a
    name no style has is noted with the styles, and Default is used."""
    found = setup.value("outputStyle")
    if found is None:
        return styles, None
    name, file = found
    style = styles.find(name)
    if style is None:
        note = f"outputStyle {one_line(name)[:60]!r} in {file.shown}: no such style (Default is used)"
        log.warning("output_styles.unknown", style=name, source=file.shown)
        return replace(styles, skipped=(*styles.skipped, note)), None
    return styles, style
