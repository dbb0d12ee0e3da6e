"""The text rules of command files and skills: frontmatter, arguments, `!` and `@`, MCP prompt arguments."""

from __future__ import annotations

import pytest

from acp_agent.errors import ToolError
from acp_agent.session.commands import slash_of
from acp_agent.session.expansion import file_refs, shell_commands, substitute
from acp_agent.session.frontmatter import split_frontmatter
from acp_agent.tools.mcp_prompts import McpPrompt, PromptArgument


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
    text = "Status: !`git status`, again !`git status` and !`ls -la`.\nSee @src/app.py, @README.md."
    assert shell_commands(text) == ["git status", "ls -la"]
    refs = "mail me@example.com, see @src/app.py, `@code`, @../up.txt and !`cat @inside.txt`"
    assert file_refs(refs) == ["src/app.py", "../up.txt"]


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
