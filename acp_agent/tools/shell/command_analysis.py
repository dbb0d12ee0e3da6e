"""The one analysis of a command line that every rule on commands reads: what programs it runs.

A rule names a program (`Bash(rm:*)`, `Bash(git push:*)`); a line names it in many spellings.
`analyse` reads the line once (cached) into:

- `exact`: the argv of each simple command where `command_line.parse_line` vouches for the whole
  line (plain words, no expansion, redirection or subshell): the only lines an allow rule, an
  "always allow" answer or a command's grant may cover;
- `invocations`: every command the line may run, read by tree-sitter's bash grammar
  (`shell_syntax.py`: in pipelines, lists, subshells, groups, compound commands, function bodies,
  substitutions; a plain line, and a plain `-c` string, by the strict reader, which is checked
  against bash itself; a line the grammar cannot read wholly by the rough reading of
  `command_line.rough_commands` too, which splits at every separator, quoted or not; a line
  continuation read both ways; `tests/unit/test_command_rules.py` checks against bash that every
  command it runs is found), each as written and as it really
  runs: the program's path reduced to its name (`/bin/rm` is `rm`), past the commands that run
  another one (`env`, `exec`, `command`, `nice`, `timeout`, `nohup`, `xargs`, `sudo`... with
  their options and assignments, `find -exec`), and
  the command lines given to another program read as command lines in turn (`bash -c`, `sh -c`,
  `eval`, `su -c`, `watch`, `env -S`, a here-doc or here-string given to a shell, `trap`, an
  `alias`, `mapfile -C`, `source /dev/stdin`, `script -c`, `nix-shell --run`), and past the tools
  whose subcommand runs one (`uv run`, `poetry run`, `direnv exec`…); a word bash expands is kept
  with its value unknown;
- `redirects`: every redirection in the line, with its target;
- `unresolved`: why some of what the line runs cannot be named (the program is an expansion, an
  `eval` or `-c` of an expansion, a shell reading its commands from a pipe, a line the grammar
  cannot read, nesting past `MAX_DEPTH`, `coproc`, `hash -p`, an array subscript that runs a
  command, git given `-c` or running a command of its own (`rebase -x`, `bisect run`…), `ssh`,
  `tmux`, `screen`, `parallel`): a deny or ask rule may then match it.

Deny and ask rules are matched against every invocation (`command_patterns.py`); the wrappers
looked through here are the deny and ask rules' (wider than the allow rules', which look only past
those that change nothing of what runs: `timeout`, `nice`...; `command_line.unwrapped`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from acp_agent.tools.shell.command_line import parse_line, rough_commands
from acp_agent.tools.shell.shell_syntax import Redirect, Word, read_syntax

__all__ = ["MAX_DEPTH", "MAX_INVOCATIONS", "LineAnalysis", "analyse", "exact_commands", "known"]

MAX_DEPTH = 8
"""Nested wrappers, `-c` strings and `eval`s read; deeper is unresolved."""
MAX_INVOCATIONS = 512
"""Readings of one line kept; past it the line is unresolved."""

_WRAPPERS: dict[str, tuple[frozenset[str], int, bool]] = {
    # program: (its options that take a value, positional words before the program, assignments)
    "env": (frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}), 0, True),
    "exec": (frozenset({"-a"}), 0, False),
    "command": (frozenset(), 0, False),
    "builtin": (frozenset(), 0, False),
    "nohup": (frozenset(), 0, False),
    "noglob": (frozenset(), 0, False),
    "nocorrect": (frozenset(), 0, False),
    "setsid": (frozenset(), 0, False),
    "unbuffer": (frozenset(), 0, False),
    "fakeroot": (frozenset(), 0, False),
    "busybox": (frozenset(), 0, False),
    "catchsegv": (frozenset(), 0, False),
    "dbus-run-session": (frozenset(), 0, False),
    "torsocks": (frozenset(), 0, False),
    "proxychains": (frozenset({"-f"}), 0, False),
    "proxychains4": (frozenset({"-f"}), 0, False),
    "firejail": (frozenset(), 0, False),
    "valgrind": (frozenset(), 0, False),
    "time": (frozenset({"-f", "--format", "-o", "--output"}), 0, False),
    "nice": (frozenset({"-n", "--adjustment"}), 0, False),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1, False),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0, False),
    "ionice": (frozenset({"-c", "-n", "--class", "--classdata"}), 0, False),
    "chrt": (frozenset(), 1, False),
    "taskset": (frozenset(), 1, False),
    "flock": (frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}), 1, False),
    "chroot": (frozenset({"--userspec", "--groups"}), 1, False),
    "caffeinate": (frozenset({"-w", "-t"}), 0, False),
    "strace": (
        frozenset({"-e", "-o", "-p", "-s", "-u", "-E", "-a", "-P", "-I", "-b", "-O", "-S", "-X"}),
        0,
        False,
    ),
    "ltrace": (frozenset({"-e", "-o", "-p", "-s", "-u", "-n", "-a", "-A", "-D", "-F", "-l", "-x"}), 0, False),
    "xargs": (
        frozenset({"-I", "-L", "-n", "-P", "-d", "-E", "-s", "-a", "--arg-file", "--delimiter"})
        | {"--max-args", "--max-procs", "--max-lines", "--max-chars", "--eof", "--process-slot-var"},
        0,
        False,
    ),
    "sudo": (
        frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-T", "-U", "--user", "--group"})
        | {"--host", "--prompt", "--chdir", "--role", "--type", "--other-user", "--close-from"}
        | {"--command-timeout"},
        0,
        True,
    ),
    "doas": (frozenset({"-u", "-C"}), 0, False),
    "pkexec": (frozenset({"--user"}), 0, False),
    "rlwrap": (frozenset(), 0, False),
    "chronic": (frozenset(), 0, False),
    "flatpak-spawn": (frozenset(), 0, False),
    "cgexec": (frozenset({"-g"}), 0, False),
    "runuser": (
        frozenset({"-u", "-g", "-G", "--user", "--group", "--supp-group", "-s", "--shell"}),
        0,
        False,
    ),
    "unshare": (frozenset({"--map-user", "--map-group", "--propagation", "--setgroups"}), 0, False),
    "nsenter": (frozenset({"-t", "--target", "-S", "-G", "--setuid", "--setgid"}), 0, False),
    "systemd-run": (
        frozenset({"-p", "--property", "-u", "--unit", "-E", "--setenv", "--uid", "--gid", "--slice"})
        | {"--description", "-M", "--machine", "-H", "--host", "--working-directory", "--nice"},
        0,
        False,
    ),
}
"""Commands that run the command after them (deny and ask rules look through them)."""
_SUBCOMMAND_RUNNERS: dict[str, tuple[frozenset[str], int]] = {
    # program: (the subcommands after which the command it runs comes, positional words between)
    "uv": (frozenset({"run"}), 0),
    "poetry": (frozenset({"run"}), 0),
    "pipx": (frozenset({"run"}), 0),
    "pdm": (frozenset({"run"}), 0),
    "hatch": (frozenset({"run"}), 0),
    "rye": (frozenset({"run"}), 0),
    "bundle": (frozenset({"exec"}), 0),
    "direnv": (frozenset({"exec"}), 1),
}
"""Tools whose subcommand runs the command after it (`uv run rm x`, `direnv exec . rm x`)."""
_RUNS_UNNAMED = {
    "parallel": "parallel builds the commands it runs from its arguments",
    "ssh": "ssh runs its command on another host, through that host's shell",
    "screen": "screen runs the command it is given in a new window",
    "coproc": "coproc runs a command in the background",
    "hash": "hash -p rebinds a command name to a program",
    "entr": "entr runs its command when files change",
}
"""Programs that run a command the analysis does not read (with operands): any deny or ask rule
may match them."""
_TMUX_RUNS = frozenset(
    {"new", "new-session", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp"}
    | {"respawn-window", "respawnw", "run-shell", "run", "if-shell", "if", "send-keys", "send"}
)
_GIT_RUNS: dict[str, frozenset[str]] = {
    "rebase": frozenset({"-x", "--exec"}),
    "bisect": frozenset({"run"}),
    "submodule": frozenset({"foreach"}),
    "difftool": frozenset({"-x", "--extcmd"}),
    "filter-branch": frozenset(),
}
"""Subcommands that run a command given to them, with the words that give it (none: always):
`rebase -x`, `bisect run`, `submodule foreach`, `difftool -x`, `filter-branch --tree-filter`."""
_GIT_VALUES = frozenset({"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix"})
"""git's global options whose value is the next word."""
_GIT_CONFIG = frozenset({"-c", "--config-env", "--exec-path"})
"""git's global options that may name a program it runs (`-c alias.p='!rm x'`, `-c core.pager=…`,
`-c core.fsmonitor=…`): a line with one is not read for what it runs."""
_SUBSCRIPTED = frozenset(
    {"test", "[", "[[", "printf", "read", "let", "declare", "typeset", "local", "export", "readonly"}
    | {"unset", "mapfile", "readarray", "wait", "printf"}
)
"""Builtins that evaluate an array subscript in a word they are given (`test -v 'a[$(rm x)]'`)."""
_SOURCED_STREAMS = ("/dev/stdin", "/dev/fd/", "/proc/self/fd/", "/dev/tcp/", "/dev/udp/")
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish", "rbash"})
_SHELL_VALUES = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


@dataclass(frozen=True, slots=True)
class LineAnalysis:
    """A command line as rules read it (see the module's docstring)."""

    line: str
    invocations: tuple[tuple[Word, ...], ...]
    redirects: tuple[Redirect, ...]
    unresolved: tuple[str, ...]
    programs: dict[str, tuple[tuple[Word, ...], ...]] = field(default_factory=dict)
    """The invocations by their program's name (a rule on `rm` reads only `rm`'s), and under ""
    those whose program is an expansion."""

    @property
    def exact(self) -> tuple[tuple[str, ...], ...] | None:
        """The strict reader's argv of each command, where it vouches for the whole line (read
        on first use: a line a deny rule refuses never needs it)."""
        return exact_commands(self.line)


@dataclass(slots=True)
class _Found:
    invocations: list[tuple[Word, ...]] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)


def known(words: tuple[str, ...]) -> tuple[Word, ...]:
    """Literal words (what the strict reader vouches for) as the analysis gives them."""
    return tuple(Word(w, w) for w in words)


@functools.lru_cache(maxsize=512)
def analyse(line: str) -> LineAnalysis:
    """`line` read once for every rule (cached: a question, its answer and a hook's `if` read the
    same line)."""
    found = _Found()
    _read_line(line, 0, found)
    invocations = tuple(dict.fromkeys(found.invocations))
    programs: dict[str, list[tuple[Word, ...]]] = {}
    for words in invocations:
        head = words[0].value
        programs.setdefault("" if head is None else head.rsplit("/", 1)[-1], []).append(words)
    return LineAnalysis(
        line,
        invocations,
        tuple(found.redirects),
        tuple(dict.fromkeys(found.unresolved)),
        {name: tuple(words) for name, words in programs.items()},
    )


@functools.lru_cache(maxsize=512)
def exact_commands(line: str) -> tuple[tuple[str, ...], ...] | None:
    """`command_line.parse_line`'s argv, or None where it is unsure of the line."""
    parsed = parse_line(line)
    return parsed.commands if parsed.unsure is None else None


def _read_line(line: str, depth: int, found: _Found) -> None:
    plain = exact_commands(line)
    if plain is not None:  # plain words: the strict reader is bash's own reading (checked), and cheaper
        for argv in plain:
            _program(known(argv), None, depth, found)
        return
    if "\\\n" in line and depth <= MAX_DEPTH:  # `r\<newline>m x` is `rm x` to bash, not the grammar
        _read_line(line.replace("\\\n", ""), depth + 1, found)
    syntax = read_syntax(line)
    found.redirects.extend(syntax.redirects)
    if syntax.broken:
        found.unresolved.append("the line does not parse as bash")
    for command in syntax.commands:
        _program(command.words, command.stdin, depth, found)
    if syntax.broken:  # what the grammar misread, the rough reading may find
        for argv in rough_commands(syntax.without_here_docs(line)):
            _program(known(argv), None, depth, found)


def _program(words: tuple[Word, ...], stdin: Word | None, depth: int, found: _Found) -> None:
    """One command as written, then as it really runs (`found.invocations`)."""
    if not words:
        return
    if len(found.invocations) >= MAX_INVOCATIONS or depth > MAX_DEPTH:
        found.unresolved.append("the line nests commands too deeply to read")
        return
    found.invocations.append(words)
    head = words[0]
    if head.value is None:
        found.unresolved.append(f"the program is an expansion ({head.raw[:40]})")
        return
    name = head.value.rsplit("/", 1)[-1]
    if name != head.value:
        words = (Word(head.raw, name), *words[1:])
        found.invocations.append(words)
    args = words[1:]
    if name in _WRAPPERS and not (name == "command" and args[:1] and args[0].value in ("-v", "-V")):
        for start in _wrapped(args, *_WRAPPERS[name]):
            _program(args[start:], stdin, depth + 1, found)
    if name in SHELLS:
        _shell(args, stdin, depth, found)
    elif name == "eval":
        _given_line(args, depth, found, "eval")
    elif name == "find":
        _find(args, depth, found)
    elif name in ("su", "runuser", "flock") and (text := _option_value(args, ("-c", "--command"))):
        _given_line((text,), depth, found, f"{name} -c")
    elif name == "env" and (text := _option_value(args, ("-S", "--split-string"))):
        _given_line((text,), depth, found, "env -S")
    elif name == "watch":
        _watch(args, depth, found)
    else:
        _runs_otherwise(name, args, stdin, depth, found)
    if name in _SUBSCRIPTED and any(_subscript_runs(w) for w in args):
        found.unresolved.append(f"{name} evaluates an array subscript that runs a command")


def _wrapped(args: tuple[Word, ...], values: frozenset[str], positionals: int, assignments: bool) -> set[int]:
    """Where the wrapped program may start in `args` (a `_WRAPPERS` row: the options that take a
    value, the positional words before the program, whether assignments come first): an option
    the row does not know is read both as a flag and as taking the next word, and an expansion
    may stand for anything."""
    starts: set[int] = set()
    for unknown_takes_value in (False, True):
        i = 0
        while i < len(args):
            word = args[i].value
            if word is None:  # `sudo $opts rm`: the program may be any word after
                starts.update(range(i + 1, len(args)))
                break
            if word == "--":
                i += 1
                break
            if word.startswith("-") and len(word) > 1:
                takes = word in values or (unknown_takes_value and "=" not in word)
                i += 2 if takes else 1
                continue
            if assignments and "=" in word and word.split("=", 1)[0].replace("_", "a").isalnum():
                i += 1
                continue
            break
        starts.add(i + positionals)
    return {s for s in starts if s < len(args)}


def _shell(args: tuple[Word, ...], stdin: Word | None, depth: int, found: _Found) -> None:
    """`bash -c 'rm x'`, `sh -ec '…'`, `bash <<'EOF'`: the command line the shell is given."""
    given, reads_input, i = False, False, 0
    while i < len(args):
        word = args[i].value
        if word is None:
            found.unresolved.append("a shell's option is an expansion")
            return
        if word in ("--", "-"):
            i += 1
            break
        if word in _SHELL_VALUES:
            i += 2
            continue
        if word.startswith("--command="):
            _given_line((Word(word, word.split("=", 1)[1]),), depth, found, "a shell's --command")
            return
        if word[:1] in "-+" and len(word) > 1:
            given = given or (word[0] == "-" and not word.startswith("--") and "c" in word)
            reads_input = reads_input or (word[0] == "-" and not word.startswith("--") and "s" in word)
            i += 1
            continue
        break
    operands = args[i:]
    if given:
        if operands:
            _given_line(operands[:1], depth, found, "a shell's -c")
    elif operands and not reads_input:
        return  # a script file: not read here (the sandbox confines what it does)
    elif stdin is not None:
        _given_line((stdin,), depth, found, "a shell's here-doc")
    else:
        found.unresolved.append("a shell reads its commands from its input")


def _given_line(words: tuple[Word, ...], depth: int, found: _Found, what: str) -> None:
    """Words joined into a command line another program runs (`eval a b`), read in turn."""
    if any(w.value is None for w in words):
        found.unresolved.append(f"{what} runs a command line that is an expansion")
        return
    if depth >= MAX_DEPTH:
        found.unresolved.append("the line nests commands too deeply to read")
        return
    _read_line(" ".join(w.value or "" for w in words), depth + 1, found)


def _option_value(args: tuple[Word, ...], names: tuple[str, ...]) -> Word | None:
    for i, arg in enumerate(args):
        value = arg.value or ""
        if value in names and i + 1 < len(args):
            return args[i + 1]
        for name in names:
            if name.startswith("--") and value.startswith(name + "="):
                return Word(arg.raw, value[len(name) + 1 :])
    return None


def _find(args: tuple[Word, ...], depth: int, found: _Found) -> None:
    """`find … -exec rm {} ;`: the command each `-exec`, `-execdir`, `-ok`, `-okdir` runs."""
    i = 0
    while i < len(args):
        if args[i].value in _FIND_RUNS:
            end = i + 1
            while end < len(args) and args[end].value not in (";", "+"):
                end += 1
            _program(args[i + 1 : end], None, depth + 1, found)
            i = end
        i += 1


def _watch(args: tuple[Word, ...], depth: int, found: _Found) -> None:
    """`watch -n 5 'rm x'`: watch runs its words through `sh -c` (or, with `-x`, as a command)."""
    i, direct = 0, False
    while i < len(args) and (args[i].value or "").startswith("-"):
        direct = direct or args[i].value in ("-x", "--exec")
        i += 2 if args[i].value in ("-n", "--interval", "-q", "--equexit") else 1
    if direct:
        _program(args[i:], None, depth + 1, found)
    elif args[i:]:
        _given_line(args[i:], depth, found, "watch")


def _runs_otherwise(name: str, args: tuple[Word, ...], stdin: Word | None, depth: int, found: _Found) -> None:
    """The other ways a command runs another: bash's own (`trap`, `alias`, `mapfile -C`,
    `source /dev/stdin`), git's (`-c alias.…`, `rebase -x`…), and the tools that run a command
    (`uv run`, `script -c`, `tmux new`…): read where the command can be named, else unresolved."""
    values = [a.value for a in args]
    if name == "trap" and args and values[0] not in (None, "-", "") and not (values[0] or "").startswith("-"):
        _given_line(args[:1], depth, found, "trap")
    elif name == "alias":
        for arg in args:
            if arg.value is None:
                found.unresolved.append("an alias is an expansion")
            elif "=" in arg.value:
                _given_line((Word(arg.raw, arg.value.split("=", 1)[1]),), depth, found, "alias")
    elif name in ("mapfile", "readarray") and (text := _option_value(args, ("-C",))):
        _given_line((text,), depth, found, f"{name} -C")
    elif name in ("source", "."):
        _sourced(args, stdin, depth, found)
    elif name == "git":
        _git(args, found)
    elif name in _SUBCOMMAND_RUNNERS:
        subcommands, positionals = _SUBCOMMAND_RUNNERS[name]
        at = next((i for i, v in enumerate(values) if v in subcommands), None)
        if at is not None:  # the command after the subcommand's options, read as a wrapper's
            rest = args[at + 1 :]
            for start in _wrapped(rest, frozenset(), positionals, False):
                _program(rest[start:], None, depth + 1, found)
    elif name in ("script", "nix-shell") and (text := _option_value(args, ("-c", "--command", "--run"))):
        _given_line((text,), depth, found, f"{name} -c")
    elif name == "sg" and len(args) > 1:
        text = _option_value(args, ("-c",))
        _given_line((text,) if text is not None else args[1:], depth, found, "sg")
    elif name == "tmux" and any(v in _TMUX_RUNS or v is None for v in values):
        found.unresolved.append("tmux runs the command it is given in a pane")
    elif name in _RUNS_UNNAMED and args:
        found.unresolved.append(_RUNS_UNNAMED[name])


def _sourced(args: tuple[Word, ...], stdin: Word | None, depth: int, found: _Found) -> None:
    """`source file` runs a script file (not read here, as `bash script.sh`); one read from a
    stream or a process substitution is a command line the analysis reads, or cannot name."""
    target = args[0] if args else None
    if target is None:
        return
    value = target.value
    if value is not None and not value.startswith(_SOURCED_STREAMS):
        return
    if value is not None and value.startswith("/dev/stdin") and stdin is not None:
        _given_line((stdin,), depth, found, "source of a here-doc")
    else:
        found.unresolved.append("source reads its commands from a stream")


def _git(args: tuple[Word, ...], found: _Found) -> None:
    """git with a global option that may name a program (`-c`, `--config-env`, `--exec-path`), or
    a subcommand that may run one: unresolved, so every deny and ask rule may match."""
    i = 0
    while i < len(args):
        value = args[i].value
        if value is None or value in _GIT_CONFIG or value.startswith(("--config-env=", "--exec-path")):
            found.unresolved.append("git is given an option that may name a program it runs")
            return
        if value in _GIT_VALUES:  # `-C dir`, `--git-dir dir`: the next word is the option's
            i += 2
            continue
        if not value.startswith("-"):
            gives = _GIT_RUNS.get(value)
            if gives is not None and (not gives or any(_gives(a.value, gives) for a in args[i + 1 :])):
                found.unresolved.append(f"git {value} may run a command it is given")
            return
        i += 1


def _gives(value: str | None, words: frozenset[str]) -> bool:
    """`value` is one of `words`, or `--word=…` of one (an expansion may be any)."""
    return value is None or value in words or value.split("=", 1)[0] in words


def _subscript_runs(word: Word) -> bool:
    """A word with an array subscript holding a command substitution (`a[$(rm x)]`)."""
    text = word.raw if word.value is None else word.value
    return "[" in text and ("$(" in text or "`" in text)
