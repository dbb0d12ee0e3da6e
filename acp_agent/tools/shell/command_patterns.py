"""A `Bash(…)` pattern, and how it meets a command line's analysis (`command_analysis.py`).

An allow rule, an "always allow" answer and a command's grant cover a line only where the strict
reader vouches for every command of it (`LineAnalysis.exact`), each command as written or past
the wrappers that change nothing of what runs (`command_line.unwrapped`): `covers`.

A deny or ask rule is matched against every command the line may run, in every spelling the
analysis found (`CommandPattern.reach`), and more widely than an allow rule, never less:
- the program by its name (`Bash(rm:*)` meets `/bin/rm`, and `Bash(/bin/rm:*)` meets `rm`);
- options between the program and the rule's next word skipped, with the word after an option
  taken as its possible value (`Bash(git push:*)` meets `git -C . push`, `git --no-pager push`,
  `kubectl -n prod delete` meets `Bash(kubectl delete:*)`);
- a word bash expands (`$x`, a glob) may be anything: where the rule's outcome hangs on it, the
  rule *may* match (`MAYBE`), and the engine asks (or refuses, where nobody can be asked); so
  does a line part of which the analysis cannot name (`LineAnalysis.unresolved`);
- a rule that names a redirection (`Bash(> /etc/passwd)`, `Bash(> /dev/*)`) meets a line that
  redirects to that target (any writing operator for `>`);
- a rule that names several commands (`Bash(cd x && rm y)`) meets a line that runs them all;
- every deny and ask rule also meets the line that is its text, as written (`*` any text).

Globs (`*`: any text, spaces included) are matched by `StarGlob`, linear in the text: no pattern
can make a match backtrack.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from acp_agent.tools.shell.command_analysis import LineAnalysis, analyse
from acp_agent.tools.shell.command_line import parse_line, unwrapped
from acp_agent.tools.shell.shell_syntax import Word, read_syntax

__all__ = [
    "MAYBE",
    "NO",
    "YES",
    "CommandPattern",
    "StarGlob",
    "covers",
    "covers_command",
    "line_matches",
    "read_pattern",
]

NO, MAYBE, YES = 0, 1, 2
"""How far a deny or ask rule reaches a line: not at all, perhaps (what it hangs on is unknown), surely."""
_STAR = "__acp_agent_star__"
"""What stands for a pattern's `*` while the pattern is parsed as a command (plain word characters)."""


@dataclass(frozen=True, slots=True)
class StarGlob:
    """`*` is any text: matched chunk by chunk with `str.find`, leftmost first (which is exact for
    such globs), so the cost is linear in the text whatever the pattern."""

    chunks: tuple[str, ...]

    @classmethod
    def of(cls, text: str, star: str = "*") -> StarGlob:
        return cls(tuple(text.split(star)))

    def fullmatch(self, text: str) -> bool:
        chunks = self.chunks
        if len(chunks) == 1:
            return text == chunks[0]
        first, last = chunks[0], chunks[-1]
        if len(text) < len(first) + len(last) or not text.startswith(first) or not text.endswith(last):
            return False
        position, end = len(first), len(text) - len(last)
        for chunk in chunks[1:-1]:
            found = text.find(chunk, position, end)
            if found < 0:
                return False
            position = found + len(chunk)
        return True

    def could_start(self, prefix: str) -> bool:
        """Some text that begins with `prefix` matches."""
        first = self.chunks[0]
        return first.startswith(prefix) or (len(self.chunks) > 1 and prefix.startswith(first))


@dataclass(frozen=True, slots=True)
class CommandPattern:
    """A `Bash(…)` pattern (`read_pattern`)."""

    text: str
    """As written."""
    words: tuple[str, ...] = ()
    """`git status *` and `npm test`: the words, matched whole; for a glob, its literal leading words."""
    prefix: bool = False
    """A trailing ` *` (or the legacy `:*`): these words, then any arguments."""
    globs: tuple[StarGlob, ...] = ()
    """A pattern with another `*`: matched against the argv written back as one line (`shlex.join`)."""
    redirects: tuple[tuple[bool, StarGlob], ...] = ()
    """Redirections the rule names: (writes, target)."""
    also: tuple[CommandPattern, ...] = ()
    """The other commands of a rule that names several, each to be met too."""
    literal: StarGlob | None = None
    """A deny or ask rule's text, met by the line that is exactly it."""

    def matches(self, argv: tuple[str, ...]) -> bool:
        """The pattern covers this literal command (an allow rule, a grant)."""
        if self.globs:
            joined = shlex.join(argv)
            return any(glob.fullmatch(joined) for glob in self.globs)
        return argv[: len(self.words)] == self.words if self.prefix else argv == self.words

    def reach(self, analysis: LineAnalysis) -> int:
        """How far this deny or ask rule reaches the line: `NO`, `MAYBE` or `YES`."""
        if self.literal is not None and self.literal.fullmatch(analysis.line.strip()):
            return YES
        reach = min((p._reach_one(analysis) for p in (self, *self.also)), default=NO)
        return max(reach, MAYBE) if analysis.unresolved else reach

    def _reach_one(self, analysis: LineAnalysis) -> int:
        reach = YES
        for writes, target in self.redirects:
            reach = min(
                reach,
                max(
                    (_target(r.target, target) for r in analysis.redirects if r.writes == writes), default=NO
                ),
            )
        if reach == NO or (not self.words and not self.globs):
            return reach
        best = NO
        candidates = (
            analysis.invocations
            if not self.words
            else (*analysis.programs.get(_name(self.words[0]), ()), *analysis.programs.get("", ()))
        )
        for words in candidates:
            best = max(best, self._reach_command(words))
            if best == YES:
                break
        return min(reach, best)

    def _reach_command(self, words: tuple[Word, ...]) -> int:
        if not self.words:  # a glob whose first word has a `*`
            return _reach_glob(self.globs, words)
        head = words[0]
        if head.value is None:
            return YES if head.raw == self.words[0] else MAYBE
        if _name(head.value) != _name(self.words[0]) and head.raw != self.words[0]:
            return NO
        best, program = NO, Word(head.raw, self.words[0])
        for start in _starts(words, self.words[1] if len(self.words) > 1 else None):
            rest = (program, *words[start:])
            best = max(best, _reach_glob(self.globs, rest) if self.globs else self._reach_words(rest))
            if best == YES:
                break
        return best

    def _reach_words(self, words: tuple[Word, ...]) -> int:
        for k, wanted in enumerate(self.words[1:], start=1):
            if k >= len(words):
                return NO
            word = words[k]
            if word.value is None and word.raw != wanted:
                return MAYBE
            if word.value != wanted and word.raw != wanted:
                return NO
        rest = words[len(self.words) :]
        if self.prefix or not rest:
            return YES
        return MAYBE if all(w.value is None for w in rest) else NO  # `$x` may expand to nothing

    def __str__(self) -> str:
        return self.text


def _name(program: str) -> str:
    return program.rsplit("/", 1)[-1]


def _starts(words: tuple[Word, ...], second: str | None) -> Iterable[int]:
    """Where the rule's second word may stand: right after the program, or past its options (an
    option, the word after one, an expansion: `git -C . push`, `git $opts push`)."""
    yield 1
    if second is None:
        return
    i = 1
    while i < len(words):
        value = words[i].value
        after_option = (
            i > 1 and (words[i - 1].value or "-").startswith("-") and "=" not in (words[i - 1].value or "")
        )
        if i > 1 and (value is None or value == second):
            yield i
        if value is None or value.startswith("-") or after_option:
            i += 1
            continue
        break


def _reach_glob(globs: Sequence[StarGlob], words: tuple[Word, ...]) -> int:
    texts = [w.value if w.value is not None else w.raw for w in words]
    joined = shlex.join(texts)
    if any(glob.fullmatch(joined) for glob in globs):
        return YES
    unknown = next((i for i, w in enumerate(words) if w.value is None), None)
    if unknown is None:
        return NO
    prefix = shlex.join(texts[:unknown]) + (" " if unknown else "")
    return MAYBE if any(glob.could_start(prefix) for glob in globs) else NO


def _target(given: Word, wanted: StarGlob) -> int:
    if given.value is not None:
        return YES if wanted.fullmatch(given.value) else NO
    if wanted.fullmatch(given.raw):
        return YES
    return MAYBE


def read_pattern(text: str, *, wide: bool = False) -> CommandPattern | str:
    """A `Bash(…)` pattern: `npm test` (that command only), `npm run *` (`*` is any text; a space
    before a trailing `*` ends a word: `npm run` alone too), the legacy `git status:*` (the same as
    `git status *`, inner `*` included: `gh api repos/*:*`); or why it is not one plain command.

    The pattern is read by the rules of a command line, so its words are those bash would see
    (`git commit -m "wip":*` is four words). A deny or ask rule (`wide`) is never refused: what the
    strict reader cannot vouch for (`Bash(rm -rf ~)`, `Bash(> /etc/passwd)`, `Bash(a && b)`) is
    read by the grammar as it would read a line, and always also met as written."""
    pattern = text.strip()
    if pattern.endswith(":*"):
        pattern = pattern[:-2].rstrip() + " *"
    strict = _strict(pattern, text)
    if not wide:
        return strict
    literal = StarGlob.of(text.strip())
    if isinstance(strict, CommandPattern):
        return CommandPattern(
            strict.text, strict.words, strict.prefix, strict.globs, strict.redirects, strict.also, literal
        )
    return _wide(pattern, text, literal)


def _strict(pattern: str, text: str) -> CommandPattern | str:
    parsed = parse_line(pattern.replace("*", _STAR))
    if parsed.unsure or len(parsed.commands) != 1:
        return parsed.unsure or "it names more than one command"
    return _from_words(parsed.commands[0], text.strip())


def _from_words(words: tuple[str, ...], text: str) -> CommandPattern:
    if not any(_STAR in w for w in words):
        return CommandPattern(text, words)
    if words[-1] == _STAR and _STAR not in "".join(words[:-1]):  # `npm run *`: the words, then any
        return CommandPattern(text, words[:-1], prefix=True)
    lead = tuple(w for w in _until_star(words))
    written = shlex.join(words)
    globs = [StarGlob.of(written, _STAR)]
    if written.endswith(" " + _STAR):  # `git * main *`: also with nothing where the last `*` is
        globs.append(StarGlob.of(written[: -len(_STAR) - 1], _STAR))
    return CommandPattern(text, lead, globs=tuple(globs))


def _until_star(words: tuple[str, ...]) -> Iterable[str]:
    for word in words:
        if _STAR in word:
            return
        yield word


def _wide(pattern: str, text: str, literal: StarGlob) -> CommandPattern:
    """A deny or ask rule the strict reader refused, read as the grammar reads a line."""
    syntax = read_syntax(pattern.replace("*", _STAR))
    commands = [
        tuple((w.value if w.value is not None else w.raw) for w in c.words)
        for c in syntax.commands
        if c.words
    ]
    if not commands and not syntax.redirects:
        commands = [tuple(pattern.replace("*", _STAR).split())] if pattern.split() else []
    redirects = tuple(
        (r.writes, StarGlob.of((r.target.value if r.target.value is not None else r.target.raw), _STAR))
        for r in syntax.redirects
    )
    parts = [_from_words(words, text.strip()) for words in commands] or [CommandPattern(text.strip())]
    first = parts[0]
    return CommandPattern(
        first.text, first.words, first.prefix, first.globs, redirects, tuple(parts[1:]), literal
    )


def covers(patterns: Sequence[CommandPattern], analysis: LineAnalysis) -> bool:
    """Every command of the line is covered by one of `patterns` (an allow rule, an answer, a
    grant), as written or past its wrappers; never a line the strict reader does not vouch for."""
    return (
        analysis.exact is not None
        and bool(patterns)
        and all(covers_command(patterns, argv) for argv in analysis.exact)
    )


def covers_command(patterns: Sequence[CommandPattern], argv: tuple[str, ...]) -> bool:
    """One of `patterns` covers this literal command, as written or past its wrappers."""
    bare = unwrapped(argv)
    return any(p.matches(argv) or p.matches(bare) for p in patterns)


def line_matches(patterns: tuple[CommandPattern, ...], line: str) -> bool:
    """Whether every simple command of `line` is covered by one of `patterns` (`covers`)."""
    return covers(patterns, analyse(line))
