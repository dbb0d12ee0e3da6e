"""A command line read as bash reads it, checked against bash itself: the argv of each simple
command where the parser is sure, and why it is not sure of the rest."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_agent.tools.shell.command_line import UNSURE, parse_line, rough_commands, unwrapped
from acp_agent.tools.shell.command_patterns import read_pattern
from tests.support.examples import examples

BASH = shutil.which("bash")
_SHOW_ARGV = 'command_not_found_handle() { printf "%s\\0" "$@"; printf "\\1"; }\n'
"""Every command is one bash cannot find (PATH is empty): the handler prints the argv bash built."""


def bash_argvs(line: str) -> tuple[tuple[str, ...], ...]:
    """The argv of each command bash runs for `line`, in order (none of them exists)."""
    assert BASH is not None
    ran = subprocess.run(
        [BASH, "-c", _SHOW_ARGV + line],
        env={"PATH": "/nonexistent", "LC_ALL": "C.UTF-8"},
        capture_output=True,
        timeout=10,
        check=False,
    )
    out = ran.stdout.decode("utf-8", "surrogateescape")
    return tuple(tuple(cmd.split("\0")[:-1]) for cmd in out.split("\1")[:-1])


@pytest.mark.parametrize(
    "line",
    [
        "ab cd",
        "  ab\tcd  ",
        "ab 'c d' \"e f\" g\\ h",
        'ab \'it\'\\\'\'s\' "say \\"hi\\"" "back\\\\slash" "keep\\n" \'k\\n\'',
        'ab "a\nb" c',
        "ab a#b 'x'#y",
        "ab HEAD~1 a~ x=y",
        "ab \\; \\| \\& \\< \\> \\( \\) \\* \\? \\[ \\{ \\~ \\#",
        "ab '*' \"?\" '[x]' '{a,b}' '~' '#'",
        "ab; ba && aa\nbb",
        "ab &&\nba",
        "ab;\n\nba;",
        "\n\nab\n",
        '"if" \\then ab',
        "ab if then fi for do done",
        "ab \u00e9 \u00a0x",
    ],
)
@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_what_the_parser_vouches_for_is_what_bash_runs(line: str) -> None:
    parsed = parse_line(line)
    assert parsed.unsure is None
    assert parsed.commands == bash_argvs(line)


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("ab ${x:=\\$\\(touch pwned\\)} ${x@P}", "$"),
        ("ab $[y] ${PWD:y:0} 'quoted $HOME'", "$"),
        ("ab `id`", "`"),
        ("ab !! 'quoted !'", "!"),
        ("ab <(id)", "<"),
        ("ab >(id)", ">"),
        ("ab > out", ">"),
        ("ab 2>&1", ">"),
        ("ab <<EOF\nx\nEOF", "<"),
        ("ab (x)", "("),
        ("ab; { ba; }", "{"),
        ("ab {a,b}", "{"),
        ("ab *", "*"),
        ("ab x?", "?"),
        ("ab [ab]", "["),
        ("ab &", "&"),
        ("ab & ba", "&"),
        ("ab |& ba", "|&"),
        ("case x in x) ab;; esac", "reserved"),
        ("ab;; ba", ";;"),
        ("ab ~", "~"),
        ("ab ~root/x", "~"),
        ("ab --dir=~/x", "~"),
        ("ab PATH=x:~/bin", "~"),
        ("ab #; ba", "#"),
        ("ab \\\nba", "\\\n"),
        ("ab \\", "\\"),
        ("ab \u4e2d\\;ba", "\\"),  # in Big5, 中 ends in 0xAD and takes the backslash as its 2nd byte
        ('ab "\u4e2d\\"; ba; \\""', "\\"),
        ("ab\r", "control"),
        ("ab\x1b[2J", "control"),
        ("ab 'unclosed", "quote"),
        ('ab "unclosed', "quote"),
        ("ab; ; ba", "empty"),
        ("; ab", "empty"),
        ("ab &&", "empty"),
        ("ab |", "empty"),
        ("", "empty"),
        ("PAGER=x ab", "assignment"),
        ("LD_PRELOAD=/tmp/x.so ab", "assignment"),
        ("x+=1 ab", "assignment"),
        ("time ab", "reserved"),
        ("ab; if ba", "reserved"),
        ("function ab", "reserved"),
        ("coproc ab", "reserved"),
    ],
)
def test_what_bash_would_expand_or_treat_specially_is_unsure_and_says_why(line: str, why: str) -> None:
    parsed = parse_line(line)
    assert parsed.commands == () and parsed.unsure is not None
    assert parsed.unsure.startswith(UNSURE[why]), parsed.unsure


_PIECES = st.sampled_from(
    [
        *["ab", "ba", "a", "é", " ", " ", "\t", "'", '"', "\\", ";", "&&", "\n", "#", "~", "=", "-"],
        "'a b'",
        '"c\\"d"',
    ]
)


@settings(max_examples=examples(150))
@given(st.lists(_PIECES, min_size=1, max_size=12).map("".join))
@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_random_lines_are_either_unsure_or_read_as_bash_reads_them(line: str) -> None:
    parsed = parse_line(line)
    if parsed.unsure is None:
        assert parsed.commands == bash_argvs(line), line


def test_patterns_are_read_as_one_simple_command() -> None:
    pattern = read_pattern('git commit -m "wip":*')
    assert not isinstance(pattern, str) and pattern.words == ("git", "commit", "-m", "wip") and pattern.prefix
    assert read_pattern("git status; rm:*") == "it names more than one command"
    assert read_pattern("echo $HOME:*") == f"{UNSURE['$']} ('$')"
    legacy = read_pattern("gh api repos/*:*")  # the legacy `:*` with an inner `*`: as `repos/* *`
    assert not isinstance(legacy, str) and legacy.matches(("gh", "api", "repos/a/b", "--jq", "x"))
    assert not legacy.matches(("gh", "api", "user"))
    glob = read_pattern("npm run * --silent")
    assert not isinstance(glob, str) and glob.matches(("npm", "run", "build", "--silent"))
    assert not glob.matches(("npm", "run", "build --silent"))


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        ("timeout 60 npm test", "npm test"),
        ("timeout -k 5 -s KILL 60 npm test", "npm test"),
        ("nice -n 5 make", "make"),
        ("nohup stdbuf -oL python x.py", "python x.py"),
        ("command ls -la", "ls -la"),
        ("command -v ls", "command -v ls"),  # asks where ls is: not a wrapper
        ("xargs rm", "rm"),
        ("xargs -0 rm", "xargs -0 rm"),  # with options: not looked through
        ("nohup", "nohup"),  # nothing after it: itself
    ],
)
def test_rules_look_past_the_wrapper_commands(argv: str, command: str) -> None:
    assert unwrapped(tuple(argv.split())) == tuple(command.split())


def test_a_rough_reading_finds_every_command_a_line_may_run() -> None:
    line = "FOO=1 BAR=2 rm -rf $HOME; echo `curl x | sh` && (git push) || timeout 5 nc -l"
    assert rough_commands(line) == (
        ("rm", "-rf", "$HOME"),
        ("echo",),
        ("curl", "x"),
        ("sh",),
        ("git", "push"),
        ("nc", "-l"),
    )
    assert rough_commands("echo 'unclosed") == (("echo", "'unclosed"),)
