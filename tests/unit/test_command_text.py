"""The text rules of command files and skills: frontmatter, arguments, `!` and `@`, MCP prompt arguments."""

from __future__ import annotations

import pytest

from acp_agent.claude_code.conventions.builtins import slash_of
from acp_agent.claude_code.conventions.expansion import ShellLine, expand, file_refs, shell_commands, text_of
from acp_agent.claude_code.settings.frontmatter import split_frontmatter
from acp_agent.errors import ToolError
from acp_agent.tools.mcp.prompts import McpPrompt, PromptArgument


def test_frontmatter_reads_the_subset_claude_files_use() -> None:
    text = (
        "\ufeff---\n"
        "description: Review: a file  # a comment\n"
        "argument-hint: [file] [focus]\n"
        "allowed-tools:\n  - Bash(git add:*)\n  - Read\n"
        "# a comment line\n"
        "long: >\n  one\n  two\n"
        "literal: |\n  a\n\n  b\n"
        'quoted: "x # not a comment"\n'
        "single: 'it''s'\n"
        "Model: opus\n"
        "---\n\nThe body.\n"
    )
    fields, body, problem = split_frontmatter(text)
    assert problem is None and body == "The body.\n"
    assert fields == {
        "description": "Review: a file",
        "argument-hint": "[file] [focus]",
        "allowed-tools": "Bash(git add:*), Read",
        "long": "one two",
        "literal": "a\n\nb",
        "quoted": "x # not a comment",
        "single": "it's",
        "model": "opus",
    }


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("---\nname: x\n", "the frontmatter's `---` block is not closed within 200 lines"),
        ("---\nname x\n---\nbody", "line 2 of the frontmatter is not `key: value`: 'name x'"),
        ("---\n" + "a: b\n" * 201 + "---\n", "not closed within 200 lines"),
    ],
)
def test_frontmatter_outside_the_subset_is_named_not_guessed(text: str, problem: str) -> None:
    _, _, found = split_frontmatter(text)
    assert found is not None and problem in found


def test_text_without_frontmatter_is_all_body() -> None:
    assert split_frontmatter("# Title\n---\nmore") == ({}, "# Title\n---\nmore", None)


def substitute(body: str, arguments: str) -> str:
    return text_of(expand(body, arguments))


def test_indexed_arguments_count_from_zero_as_claude_code_documents() -> None:
    body = "First $ARGUMENTS[0], second $ARGUMENTS[1], none $ARGUMENTS[7]; $1 is the first too."
    assert substitute(body, 'a "b c"') == "First a, second b c, none ; a is the first too."
    assert substitute("Only $ARGUMENTS[0].", "x y") == "Only x."  # a placeholder: nothing appended


def test_arguments_are_substituted_in_one_pass() -> None:
    body = "Review $ARGUMENTS; first $1, then $2, $3 as typed, [$4] empty, $10 is not a placeholder."
    assert substitute(body, 'src/app.py "two words" $1') == (
        'Review src/app.py "two words" $1; first src/app.py, then two words, $1 as typed, [] empty, '
        "$10 is not a placeholder."
    )
    assert substitute("No placeholders.", "a b") == "No placeholders.\n\nARGUMENTS: a b"
    assert substitute("No placeholders.", "") == "No placeholders."
    assert substitute("Unbalanced $1", "'oops") == "Unbalanced 'oops"


def test_shell_lines_and_file_references_are_found() -> None:
    pieces = expand(
        "Status: !`git status`, again !`git status` and !`ls -la`.\nSee @src/app.py, @README.md.", ""
    )
    assert shell_commands(pieces) == ["git status", "ls -la"]
    assert pieces[:2] == ["Status: ", ShellLine("git status")]
    refs = "mail me@example.com, see @src/app.py, `@code`, @../up.txt and !`cat @inside.txt`"
    assert file_refs(text_of(expand(refs, ""))) == ["src/app.py", "../up.txt"]


PASTED = '"!`touch one`" "```\n!`touch two`\n```" z` !`touch three` `'
"""`!` lines once substituted: as `$1`, in a code span and a fence the argument closes."""


@pytest.mark.parametrize(
    "body",
    [
        "Review `$ARGUMENTS` now.",
        "First: $1, then $2.",
        "```\n$ARGUMENTS[1]\n```\nand `$ARGUMENTS[2]` $ARGUMENTS[3] $ARGUMENTS[4]",
        "No placeholder: the arguments are appended.",
        "Own: !`echo own`\n```\n$ARGUMENTS\n```",
    ],
)
def test_typed_arguments_never_become_shell_lines(body: str) -> None:
    pieces = expand(body, PASTED)
    assert shell_commands(pieces) == (["echo own"] if "!`echo own`" in body else [])
    assert "!`touch" in text_of(pieces)  # the model still reads what was typed, as text


def test_a_shell_line_naming_a_placeholder_is_not_run_and_says_why() -> None:
    pieces = expand("Log: !`git log -n $1` and !`echo $ARGUMENTS[0]` !`cat $ARGUMENTS`", "5; touch pwned")
    assert shell_commands(pieces) == []
    assert [p.refused for p in pieces if isinstance(p, ShellLine)] == [
        "a `!` line takes no arguments ($1): what is typed is never run",
        "a `!` line takes no arguments ($ARGUMENTS[0]): what is typed is never run",
        "a `!` line takes no arguments ($ARGUMENTS): what is typed is never run",
    ]
    assert text_of(pieces).endswith("ARGUMENTS: 5; touch pwned")  # no placeholder in the text: appended


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("/review src/app.py", ("review", "src/app.py")),
        ("  /x", ("x", "")),
        ("/x\targs\nmore", ("x", "args\nmore")),
        ("/ nope", None),
        ("//x", None),
        ("hello /x", None),
    ],
)
def test_a_prompt_names_a_command_when_its_first_block_starts_with_a_slash(
    text: str, found: tuple[str, str] | None
) -> None:
    assert slash_of([{"type": "text", "text": text}]) == found


def prompt() -> McpPrompt:
    arguments = (PromptArgument("path", True), PromptArgument("focus"), PromptArgument("note"))
    return McpPrompt("mcp__s__review", "s", "review", "Review", arguments)


def test_mcp_prompt_arguments_by_name_then_in_order_the_last_taking_the_rest() -> None:
    assert prompt().hint == "<path> [focus] [note]"
    assert prompt().bind("a.py") == {"path": "a.py"}
    assert prompt().bind("a.py style look closely") == {
        "path": "a.py",
        "focus": "style",
        "note": "look closely",
    }
    assert prompt().bind("focus=style a.py") == {"focus": "style", "path": "a.py"}
    assert prompt().bind("'a b.py' note='x y'") == {"note": "x y", "path": "a b.py"}


def test_mcp_prompt_arguments_missing_or_in_excess_are_refused() -> None:
    with pytest.raises(ToolError, match="needs path: /mcp__s__review <path>"):
        prompt().bind("focus=style")
    no_args = McpPrompt("mcp__s__p", "s", "p", "P")
    assert no_args.hint is None and no_args.bind("") == {}
    with pytest.raises(ToolError, match="takes no more arguments"):
        no_args.bind("extra")
