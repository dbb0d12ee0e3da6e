"""Claude Code's memory as the agent reads it (issue 33 item 4): the files and their order, `@path`
imports (hops, loops, code, confinement), `.claude/rules` with and without `paths:`, the memory
below the cwd that waits for a read, and `claudeMdExcludes`."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from acp_agent.claude_code.memory.instructions import read_instructions
from acp_agent.claude_code.memory.memory_files import MAX_HOPS, import_targets
from acp_agent.claude_code.memory.memory_paths import PathPatterns, expand_braces, split_paths
from acp_agent.tools.hidden import HiddenPaths
from acp_agent.turn.context.attachments import Attachment, attached, new_blocks


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    return repo


# ── `@path` in a memory file ───────────────────────────────────────────────────────────────────


def test_imports_are_words_outside_code_spans_and_fences() -> None:
    text = (
        "See @README and @docs/guide.md, then @~/notes.md.\n"
        "Mail me at someone@example.com; `@in-a-span.md` and ``@two `ticks`.md`` stay literal.\n"
        "````sh\n@in-a-fence.md\n```\n@still-fenced.md\n````\n"
        "~~~\n@tilde-fenced.md\n~~~\n"
        "@after-the-fences.md#section @my\\ file.md @@twice @) @docs/guide.md\n"
        "An unclosed `backquote keeps @this.md\n"
    )
    assert import_targets(text) == [
        "README",
        "docs/guide.md",
        "~/notes.md",
        "after-the-fences.md",
        "my file.md",
        "this.md",
    ]


def test_imports_follow_the_importing_file_depth_first_and_stop_after_the_hop_limit(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    write(repo / "CLAUDE.md", "ROOT\n@docs/a.md\n@b.md\n")
    write(repo / "b.md", "B\n")
    chain = [repo / "docs" / f"{name}.md" for name in "acdefg"]
    for this, following in itertools.pairwise(chain):
        write(this, f"{this.stem.upper()}\n@{following.name}\n")  # relative to the importing file
    write(chain[-1], "G\n")
    instructions = read_instructions(repo, home=None, config_dir=None)
    names = [f.path.name for f in instructions.files]
    assert names == ["CLAUDE.md", "a.md", "c.md", "d.md", "e.md", "b.md"]  # hops 1-4; b.md after a's chain
    assert MAX_HOPS == 4
    [refused] = instructions.refused
    assert refused.path == repo / "docs" / "f.md"
    assert (
        refused.reason
        == f"imported by {repo / 'docs' / 'e.md'}: more than 4 hops of imports from its memory file"
    )
    assert [f.label for f in instructions.files][1] == f"imported by {repo / 'CLAUDE.md'}"
    assert "--- " + str(repo / "docs" / "a.md") + f" (imported by {repo / 'CLAUDE.md'}) ---" in (
        instructions.prompt_section()
    )


def test_a_loop_is_broken_and_named_and_a_file_read_already_is_not_repeated(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    write(repo / "AGENTS.md", "THE AGENTS FILE\n")
    write(repo / "CLAUDE.md", "@AGENTS.md\n@a.md\n@missing.md\n")  # the bridge Claude Code recommends
    write(repo / "a.md", "A\n@b.md\n")
    write(repo / "b.md", "B\n@a.md\n@CLAUDE.md\n")
    instructions = read_instructions(repo, home=None, config_dir=None)
    # AGENTS.md is read where CLAUDE.md imports it, as Claude Code reads it, and not again.
    assert [f.path.name for f in instructions.files] == ["CLAUDE.md", "AGENTS.md", "a.md", "b.md"]
    assert instructions.prompt_section().count("THE AGENTS FILE") == 1
    reasons = {r.path.name: r.reason for r in instructions.refused}
    loop = f"imported by {repo / 'b.md'}: an import loop (it imports a file on its own import chain)"
    assert reasons == {
        "a.md": loop,
        "CLAUDE.md": loop,
        "missing.md": f"imported by {repo / 'CLAUDE.md'}: no such file",
    }


def test_an_import_outside_the_workspace_waits_for_the_folders_trust(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    outside = write(tmp_path / "team" / "team.md", "TEAM RULES\n")
    write(repo / "CLAUDE.md", "@../team/team.md\n@link.md\n")
    (repo / "link.md").symlink_to(outside)  # inside by name, outside where it leads
    instructions = read_instructions(repo, home=None, config_dir=None)
    assert "TEAM RULES" not in instructions.prompt_section()
    assert instructions.untrusted_imports == (
        (repo / "CLAUDE.md", outside),
        (repo / "CLAUDE.md", repo / "link.md"),
    )
    assert all("which needs the folder's trust" in r.reason for r in instructions.refused)
    asked: list[tuple[Path, Path]] = []

    def trusted(folder: Path, target: Path) -> bool:
        asked.append((folder, target))
        return True

    trusting = read_instructions(repo, home=None, config_dir=None, trust=trusted)
    assert trusting.prompt_section().count("TEAM RULES") == 1  # the link leads to the same file
    assert asked == [(repo, outside.resolve())] and trusting.untrusted_imports == ()


def test_the_users_memory_imports_from_its_own_claude_dir_and_never_a_hidden_path(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = repository(tmp_path)
    key = write(home / ".config" / "acp-agent" / "credentials.json", '{"key": "SECRET"}\n')
    write(home / ".claude" / "prefs.md", "PREFS\n")
    write(
        home / ".claude" / "CLAUDE.md",
        "USER\n@prefs.md\n@~/.claude/prefs.md\n@~/.config/acp-agent/credentials.json\n",
    )
    hidden = HiddenPaths.of([key.parent])
    instructions = read_instructions(repo, home=home, config_dir=None, hidden=hidden, trust=lambda f, t: True)
    section = instructions.prompt_section()
    assert "PREFS" in section and section.count("PREFS") == 1 and "SECRET" not in section
    [refused] = instructions.refused
    assert refused.path == key and "the agent's own private files" in refused.reason


def test_binary_files_and_excluded_files_are_left_out_and_named(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    write(repo / "CLAUDE.md", "@logo.png\n@other/notes.md\n")
    write(repo / "other" / "notes.md", "OTHER TEAM\n")
    write(repo / ".claude" / "CLAUDE.md", "DOT CLAUDE\n")
    excludes = ["**/other/**", str(repo / ".claude" / "CLAUDE.md")]
    instructions = read_instructions(repo, home=None, config_dir=None, excludes=excludes)
    assert [f.path for f in instructions.files] == [repo / "CLAUDE.md"]
    reasons = {r.path: r.reason for r in instructions.refused}
    assert reasons == {
        repo / "logo.png": "it is a binary file (it holds a NUL byte)",
        repo / "other" / "notes.md": "excluded by claudeMdExcludes",
        repo / ".claude" / "CLAUDE.md": "excluded by claudeMdExcludes",
    }


# ── the files and their order ──────────────────────────────────────────────────────────────────


def test_every_memory_file_in_one_stable_order_general_first(tmp_path: Path) -> None:
    home, repo = tmp_path / "home", repository(tmp_path)
    config = tmp_path / "config"
    cwd = repo / "app"
    files = [
        write(home / ".claude" / "CLAUDE.md", "1\n"),
        write(home / ".claude" / "rules" / "a.md", "2\n"),
        write(home / ".claude" / "rules" / "z" / "b.md", "3\n"),  # rules are found recursively
        write(config / "AGENTS.md", "4\n"),
        write(repo / "AGENTS.md", "5\n"),
        write(repo / "CLAUDE.md", "6\n"),
        write(repo / ".claude" / "CLAUDE.md", "7\n"),
        write(repo / ".claude" / "rules" / "style.md", "---\ndescription: house style\n---\n8\n"),
        write(repo / "CLAUDE.local.md", "9\n"),
        write(cwd / "CLAUDE.md", "10\n"),
        write(cwd / ".claude" / "rules" / "app.md", "11\n"),
        write(cwd / "CLAUDE.local.md", "12\n"),
    ]
    write(repo / ".claude" / "rules" / "api.md", "---\npaths: src/api/**\n---\nSCOPED\n")
    write(cwd / "sub" / "CLAUDE.md", "BELOW THE CWD\n")
    first = read_instructions(cwd, home=home, config_dir=config)
    assert [f.path for f in first.files] == files
    assert [f.text.strip() for f in first.files] == [str(n) for n in range(1, 13)]  # frontmatter gone
    assert [f.label for f in first.files][:5] == [
        "user-level",
        "user-level rule",
        "user-level rule",
        "user-level",
        "",
    ]
    assert "SCOPED" not in first.prompt_section() and "BELOW THE CWD" not in first.prompt_section()
    assert read_instructions(cwd, home=home, config_dir=config).prompt_section() == first.prompt_section()
    status = first.status()
    assert [status.index(str(path)) for path in files] == sorted(status.index(str(path)) for path in files)
    assert f"- {repo / 'CLAUDE.md'}: 2 bytes" in status
    api = repo / ".claude" / "rules" / "api.md"
    assert f"Loaded when a matching file is read:\n- {api} (rule for files matching src/api/**)" in status


def test_nearer_directories_get_the_room_and_an_import_shares_its_files_claim(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    cwd = repo / "app"
    write(repo / "CLAUDE.md", "R" * 20)
    write(cwd / "CLAUDE.md", "@big.md\n")
    write(cwd / "big.md", "B" * 30)
    instructions = read_instructions(cwd, home=None, config_dir=None, cap=40)
    kept = {f.path: f.kept for f in instructions.files}
    assert kept == {repo / "CLAUDE.md": 2, cwd / "CLAUDE.md": 8, cwd / "big.md": 30}


def test_a_rule_with_broken_frontmatter_is_skipped_and_named(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    write(repo / ".claude" / "rules" / "broken.md", "---\npaths: src/**\nno colon here\n---\nBROKEN\n")
    write(repo / ".claude" / "rules" / "open.md", "---\npaths: src/**\n")
    write(repo / ".claude" / "rules" / "ok.md", "FINE\n")
    instructions = read_instructions(repo, home=None, config_dir=None)
    assert [f.path.name for f in instructions.files] == ["ok.md"]
    assert {r.path.name: r.reason for r in instructions.refused} == {
        "broken.md": "skipped: line 3 of the frontmatter is not `key: value`: 'no colon here'",
        "open.md": "skipped: the frontmatter's `---` block is not closed within 200 lines",
    }


def test_a_rules_directory_that_links_back_up_is_walked_once(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    write(repo / ".claude" / "rules" / "one.md", "ONE\n")
    (repo / ".claude" / "rules" / "loop").symlink_to("..")  # rules/loop -> rules
    instructions = read_instructions(repo, home=None, config_dir=None)
    assert instructions.prompt_section().count("ONE") == 1


# ── what waits for a read ──────────────────────────────────────────────────────────────────────


async def test_a_path_rule_and_the_memory_below_the_cwd_wait_for_a_read(tmp_path: Path) -> None:
    home, repo = tmp_path / "home", repository(tmp_path)
    cwd = repo / "app"
    write(
        repo / ".claude" / "rules" / "api.md",
        '---\npaths:\n  - "app/src/api/**/*.{ts,tsx}"\n---\nAPI RULE\n@conventions.md\n',
    )
    write(repo / ".claude" / "rules" / "conventions.md", "---\npaths: never/**\n---\nCONVENTIONS\n")
    write(home / ".claude" / "rules" / "tests.md", "---\npaths: ['tests/**']\n---\nUSER TEST RULE\n")
    write(cwd / "pkg" / "CLAUDE.md", "PKG\n")
    write(cwd / "pkg" / "deep" / "CLAUDE.local.md", "DEEP LOCAL\n")
    write(cwd / "pkg" / "deep" / "AGENTS.md", "DEEP AGENTS\n")
    write(cwd / "CLAUDE.md", "@pkg/CLAUDE.md\n")  # in the prompt already: never attached
    instructions = read_instructions(cwd, home=home, config_dir=None)
    scoped = instructions.on_read
    assert scoped is not None
    assert [r.path.name for r in scoped.rules] == ["tests.md", "api.md", "conventions.md"]

    async def sources(*relative: str) -> list[str]:
        return [a.source for a in await scoped.for_reads([cwd / r for r in relative])]

    assert await sources("app.py", "src/api/handler.py") == []
    api = repo / ".claude" / "rules" / "api.md"
    assert await sources("src/api/v1/handler.tsx") == [
        str(api),
        str(repo / ".claude" / "rules" / "conventions.md"),
    ]
    [rule, imported] = await scoped.for_reads([cwd / "src/api/handler.ts"])
    assert (
        rule.text == "API RULE\n@conventions.md\n"
        and rule.about == "rule for files matching app/src/api/**/*.{ts,tsx}"
    )
    assert imported.text == "---\npaths: never/**\n---\nCONVENTIONS\n"  # an import is read as written
    assert await sources("tests/test_x.py") == [str(home / ".claude" / "rules" / "tests.md")]  # from the cwd
    assert await sources("pkg/deep/x.py") == [
        str(cwd / "pkg" / "deep" / "AGENTS.md"),
        str(cwd / "pkg" / "deep" / "CLAUDE.local.md"),
    ]
    assert await sources("../outside.py") == []


def test_attachments_join_a_conversation_once() -> None:
    rule = Attachment("/r/api.md", "rule for files matching src/**", "API RULE\n")
    nested = Attachment("/r/pkg/CLAUDE.md", "instructions for the files under /r/pkg", "PKG\n")
    messages = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}]
    blocks = new_blocks(messages, [rule, nested, rule])
    assert [b["text"].splitlines()[1] for b in blocks] == [
        "Contents of /r/api.md (rule for files matching src/**):",
        "Contents of /r/pkg/CLAUDE.md (instructions for the files under /r/pkg):",
    ]
    heading = "Contents of /r/api.md (rule for files matching src/**):"
    assert blocks[0]["text"] == f"<system-reminder>\n{heading}\n\nAPI RULE\n\n</system-reminder>"
    messages[0]["content"] += blocks
    assert new_blocks(messages, [nested, rule]) == []
    assert attached(messages) == [
        "/r/api.md (rule for files matching src/**)",
        "/r/pkg/CLAUDE.md (instructions for the files under /r/pkg)",
    ]


# ── patterns ───────────────────────────────────────────────────────────────────────────────────


def test_braces_expand_in_order_and_within_the_budget() -> None:
    assert expand_braces("src/**/*.{ts,tsx}") == ["src/**/*.ts", "src/**/*.tsx"]
    assert expand_braces("{a,b}/{c,{d,e}}") == ["a/c", "a/d", "a/e", "b/c", "b/d", "b/e"]
    assert expand_braces("{x}/y") == ["{x}/y"]  # no comma: literal
    assert len(expand_braces("{a,b}" * 20)) == 1000


def test_paths_values_in_every_shape() -> None:
    assert split_paths('src/**/*.{ts,tsx}, "lib/**"') == ["src/**/*.{ts,tsx}", "lib/**"]
    assert split_paths("['a/**', 'b/*.md']") == ["a/**", "b/*.md"]
    patterns = PathPatterns.of(["src/api/**", "*.md", "./docs/{guide,faq}.txt"])
    assert [
        patterns.matches(p) for p in ("src/api/x/y.ts", "deep/README.md", "docs/faq.txt", "lib/api/x")
    ] == [
        True,
        True,
        True,
        False,
    ]
    assert not PathPatterns.of([]) and not PathPatterns.of([" "]).matches("x")


@pytest.mark.parametrize("pattern", ["**/other/CLAUDE.md", "/abs/repo/other/CLAUDE.md"])
def test_excludes_match_absolute_paths(pattern: str) -> None:
    assert PathPatterns.of([pattern]).matches_absolute(Path("/abs/repo/other/CLAUDE.md"))
    assert not PathPatterns.of([pattern]).matches_absolute(Path("/abs/repo/CLAUDE.md"))


def test_a_fifo_among_the_rules_is_refused_without_waiting(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    (repo / ".claude" / "rules").mkdir(parents=True)
    os.mkfifo(repo / ".claude" / "rules" / "pipe.md")
    instructions = read_instructions(repo, home=None, config_dir=None)
    assert [r.reason for r in instructions.refused] == ["it is a FIFO, not a regular file"]
